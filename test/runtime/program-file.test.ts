/**
 * .trtp program files: compile → save → load → run on every fixture (equal to the in-memory
 * program, and to PyTorch's outputs), what the manifest records, generic round trips of
 * ProgramData fields, and every kind of damage (a flipped byte in any blob, truncation,
 * format versions, missing blobs...) as a typed error naming the cause. Device checks at
 * load: a GPU-bound program on this GPU-less machine fails with E_NO_COMPATIBLE_DEVICE.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

import { zipSync } from 'fflate';

import { compile } from '../../lib/compile';
import type { CudaDevice } from '../../lib/devices';
import { BadProgramError, NoCompatibleDeviceError } from '../../lib/errors';
import { sym, symMul } from '../../lib/ir/symbolic';
import { Program } from '../../lib/runtime/program';
import {
  checkFormatVersion,
  loadProgram,
  loadProgramBuffer,
  packProgramFile,
  PROGRAM_FORMAT_VERSION,
  readProgramFile,
  selectProgramDevices,
  type ProgramManifest,
} from '../../lib/runtime/program-file';
import type { ProgramData } from '../../lib/runtime/segments';
import { Tensor } from '../../lib/ir/tensor';
import { expectClose, expectExact, FP32 } from '../helpers/compare';
import { referenceEngineDevice, TEST_H200 } from '../helpers/devices';
import { rejection } from '../helpers/errors';
import { loadFixture } from '../helpers/fixtures';

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'trtp-test-'));
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

function bytesOf(t: Tensor): Uint8Array {
  return new Uint8Array(t.data.buffer, t.data.byteOffset, t.data.byteLength);
}

/** Bit-for-bit equality of two runs of the same program; `label` names the pair in a failure. */
function expectIdentical(actual: Tensor[], expected: Tensor[], label: string): void {
  expect(actual).toHaveLength(expected.length);
  actual.forEach((t, i) => expectExact(t, expected[i]!, `${label} output ${i}`));
}

/** Entries of a program file (it is a plain zip: stored entries). */
function unzipProgram(bytes: Uint8Array): { manifest: ProgramManifest; blobs: Map<string, Uint8Array> } {
  const contents = readProgramFile(bytes);
  return { manifest: structuredClone(contents.manifest), blobs: new Map([...contents.blobs].map(([k, v]) => [k, v.slice()])) };
}

const FIXTURE_NAMES = fs.readdirSync(path.join(__dirname, '..', 'fixtures')).filter((f) => fs.existsSync(path.join(__dirname, '..', 'fixtures', f, 'meta.json')));
const FIXTURE_CASES = FIXTURE_NAMES.flatMap(
  (name) => {
    const files = loadFixture(name).files;
    return (['onnx', 'pt2'] as const).filter((f) => files[f] !== undefined).map((f) => [name, f] as [string, 'onnx' | 'pt2']);
  },
);

describe.each(FIXTURE_CASES)('round trip: %s (.%s)', (name, format) => {
  const fixture = loadFixture(name);
  const file = path.join(fixture.dir, fixture.files[format]!);

  test.each(fixture.cases.map((c, k) => [k, c] as const))('case %d: compile → save → load → run equals the in-memory program and PyTorch', async (k, c) => {
    const { inputs, outputs } = c;
    const program = await compile(file, { backend: 'reference', inputs: inputs.map((t) => ({ shape: [...t.shape] })) });
    const saved = path.join(tmp, `${name}-${format}-${k}.trtp`);
    let loaded: Program | undefined;
    try {
      const expected = await program.run(inputs);
      await program.save(saved);
      loaded = await loadProgram(saved);
      expect(loaded.inputs).toEqual(program.inputs);
      expect(loaded.outputs).toEqual(program.outputs);
      expect(loaded.report).toEqual(program.report);
      expect(loaded.backend).toBe(program.backend);
      expect(String(loaded)).toBe(String(program));
      expect(loaded.data.segments.map((s) => s.kind)).toEqual(program.data.segments.map((s) => s.kind));
      loaded.data.segments.forEach((s, i) => {
        const o = program.data.segments[i]!;
        if (s.kind === 'engine' && o.kind === 'engine') {
          expect(Buffer.from(s.engine).equals(Buffer.from(o.engine))).toBe(true);
          expect(s.device).toEqual(o.device);
          expect(s.placement).toBeUndefined(); // CPU engines are placed nowhere
        } else if (s.kind === 'fallback' && o.kind === 'fallback') expect(Buffer.from(s.graph).equals(Buffer.from(o.graph))).toBe(true);
      });
      const actual = await loaded.run(inputs);
      expectIdentical(actual, expected, `${name} loaded vs in-memory`);
      // Independent reference: the outputs PyTorch computed.
      actual.forEach((t, i) => expectClose(t, outputs[i]!, FP32, `${name} (.${format}) loaded output ${i}`));
      // Saving the loaded program gives the same bytes.
      expect(Buffer.from(loaded.saveBuffer()).equals(fs.readFileSync(saved))).toBe(true);
    } finally {
      await program.dispose();
      await loaded?.dispose();
    }
  }, 120_000);
});

describe('what a program file records', () => {
  let program: Program;
  let bytes: Uint8Array;
  beforeAll(async () => {
    const fixture = loadFixture('mlp');
    program = await compile(path.join(fixture.dir, fixture.files.onnx!), {
      backend: 'reference',
      inputs: [{ shape: [4, 32] }],
      torchExecutedOps: ['aten.relu.default'],
      minBlockSize: 1,
    });
    bytes = program.saveBuffer();
  }, 60_000);
  afterAll(() => program.dispose());

  test('the manifest: format, versions, I/O, segments in order, device records, checksums', () => {
    const { manifest: m, blobs } = readProgramFile(bytes);
    expect(m.format).toBe('tensorrt-node program');
    expect(m.formatVersion).toBe(`${PROGRAM_FORMAT_VERSION.major}.${PROGRAM_FORMAT_VERSION.minor}`);
    expect(m.library).toEqual({ name: 'tensorrt-node', version: require('../../package.json').version });
    expect(m.backends).toEqual({ reference: m.library.version });
    expect(m.inputs).toEqual([{ name: 'input0', value: 'input0', dtype: 'float32', shape: [4, 32] }]);
    expect(m.segments.map((s) => [s.kind, s.kind === 'engine' ? s.engine : s.graph])).toEqual([
      ['engine', 'engines/segment0.engine'],
      ['fallback', 'graphs/segment1.graph'],
      ['engine', 'engines/segment2.engine'],
    ]);
    for (const s of m.segments) {
      if (s.kind !== 'engine') continue;
      expect(s.device).toEqual(referenceEngineDevice(m.library.version));
    }
    expect(Object.keys(m.blobs).sort()).toEqual([...blobs.keys()].sort());
    for (const [name, info] of Object.entries(m.blobs)) {
      expect(info.sha256).toBe(require('node:crypto').createHash('sha256').update(blobs.get(name)!).digest('hex'));
      expect(info.bytes).toBe(blobs.get(name)!.byteLength);
    }
  });

  test('saving is deterministic (fixed time stamps)', () => {
    expect(Buffer.from(program.saveBuffer()).equals(Buffer.from(bytes))).toBe(true);
  });

  test('it is a plain zip: any unzip tool reads the manifest', () => {
    const { unzipSync } = require('fflate') as typeof import('fflate');
    const files = unzipSync(bytes);
    expect(Object.keys(files).sort()).toEqual(['engines/segment0.engine', 'engines/segment2.engine', 'graphs/segment1.graph', 'manifest.json']);
    expect(JSON.parse(Buffer.from(files['manifest.json']!).toString('utf8')).format).toBe('tensorrt-node program');
  });

  test('a re-zipped (deflated) copy still loads and runs the same', async () => {
    const { unzipSync } = require('fflate') as typeof import('fflate');
    const rezipped = zipSync(unzipSync(bytes), { level: 9 });
    expect(rezipped.length).toBeLessThan(bytes.length);
    const loaded = await loadProgramBuffer(rezipped);
    try {
      const { inputs, outputs } = loadFixture('mlp').cases[0]!;
      (await loaded.run(inputs)).forEach((t, i) => expectClose(t, outputs[i]!, FP32, 'rezipped'));
    } finally {
      await loaded.dispose();
    }
  });

  test('a reference program loads on this GPU-less machine, with or without a device option, and runs the same', async () => {
    const { inputs } = loadFixture('mlp').cases[0]!;
    const expected = await program.run(inputs);
    for (const options of [{}, { device: 0 }, { device: 'cuda:3' }]) {
      const loaded = await loadProgramBuffer(bytes, options);
      try {
        expect(loaded.backend).toBe('reference');
        // CPU engines are placed on no device, whatever the option says.
        for (const s of loaded.data.segments) if (s.kind === 'engine') expect(s.placement).toBeUndefined();
        expectIdentical(await loaded.run(inputs), expected, `loaded with ${JSON.stringify(options)}`);
      } finally {
        await loaded.dispose();
      }
    }
  });

  test('bad load options are E_INVALID_ARGUMENT', async () => {
    expect((await rejection(loadProgramBuffer(bytes, { device: 'gpu0' }))).message).toContain('device must be a CUDA ordinal (e.g. 0) or "cuda:N", got "gpu0"');
    expect((await rejection(loadProgramBuffer(bytes, { device: -1 }))).code).toBe('E_INVALID_ARGUMENT');
    expect((await rejection(loadProgramBuffer(bytes, { devise: 0 } as never))).message).toContain('unknown key "devise"');
    expect((await rejection(loadProgramBuffer('x' as never))).code).toBe('E_INVALID_ARGUMENT');
  });

  test('a missing file is E_BAD_PROGRAM naming it', async () => {
    const e = await rejection(loadProgram(path.join(tmp, 'nope.trtp')));
    expect(e).toBeInstanceOf(BadProgramError);
    expect(e.message).toContain('nope.trtp" cannot be read: ENOENT');
  });

  // ---- damage -------------------------------------------------------------------------

  /** A copy of the file with one byte of blob `name` flipped (found by its bytes: entries are stored). */
  function flipInBlob(name: string, at: number): Uint8Array {
    const blob = readProgramFile(bytes).blobs.get(name)!;
    const file = Buffer.from(bytes);
    const start = file.indexOf(Buffer.from(blob));
    expect(start).toBeGreaterThan(0);
    const copy = new Uint8Array(bytes);
    copy[start + at] ^= 0x10;
    return copy;
  }

  test.each(['engines/segment0.engine', 'graphs/segment1.graph', 'engines/segment2.engine', 'manifest.json'])(
    'a flipped byte in %s: E_BAD_PROGRAM naming it',
    async (name) => {
      const size = name === 'manifest.json' ? 200 : readProgramFile(bytes).blobs.get(name)!.byteLength;
      for (const at of [0, Math.floor(size / 2), size - 1]) {
        let damaged: Uint8Array;
        if (name === 'manifest.json') {
          const file = Buffer.from(bytes);
          const start = file.indexOf(Buffer.from('{\n  "format"'));
          damaged = new Uint8Array(bytes);
          damaged[start + at] ^= 0x01;
        } else damaged = flipInBlob(name, at);
        const e = await rejection(loadProgramBuffer(damaged));
        expect(e).toBeInstanceOf(BadProgramError);
        expect(e.message).toContain(`entry "${name}" is corrupt`);
      }
    },
  );

  test('a blob changed with a valid CRC (re-zipped): its SHA-256 names it', async () => {
    const { manifest, blobs } = unzipProgram(bytes);
    const engine = blobs.get('engines/segment2.engine')!;
    engine[engine.length - 3] ^= 0xff;
    const e = await rejection(loadProgramBuffer(packProgramFile(manifest, blobs)));
    expect(e).toBeInstanceOf(BadProgramError);
    expect(e.message).toMatch(/^program buffer: blob "engines\/segment2\.engine" is corrupt: its SHA-256 is [0-9a-f]{64}, the manifest says [0-9a-f]{64}$/);
    expect(e.details).toEqual({ blob: 'engines/segment2.engine' });
    blobs.set('graphs/segment1.graph', blobs.get('graphs/segment1.graph')!.subarray(1));
    manifest.blobs['engines/segment2.engine']!.sha256 = require('node:crypto').createHash('sha256').update(engine).digest('hex');
    expect((await rejection(loadProgramBuffer(packProgramFile(manifest, blobs)))).message).toContain(
      'blob "graphs/segment1.graph" is corrupt: ',
    );
  });

  test('a truncated file: E_BAD_PROGRAM', async () => {
    for (const length of [0, 1, 21, 22, 100, Math.floor(bytes.length / 2), bytes.length - 23, bytes.length - 22, bytes.length - 1]) {
      const e = await rejection(loadProgramBuffer(bytes.slice(0, length)));
      expect(e).toBeInstanceOf(BadProgramError);
      expect(e.message).toMatch(/truncated|corrupt/);
    }
    const file = path.join(tmp, 'truncated.trtp');
    fs.writeFileSync(file, bytes.slice(0, bytes.length - 10));
    expect((await rejection(loadProgram(file))).message).toMatch(/^program file ".*truncated\.trtp": not a program file: no zip end-of-central-directory record \(truncated/);
  });

  test('not a program file at all', async () => {
    expect((await rejection(loadProgramBuffer(new Uint8Array(1000)))).message).toContain('not a program file');
    const onnx = fs.readFileSync(path.join(loadFixture('mlp').dir, 'model.onnx'));
    expect((await rejection(loadProgramBuffer(onnx))).code).toBe('E_BAD_PROGRAM');
    const otherZip = zipSync({ 'hello.txt': new TextEncoder().encode('hi') });
    expect((await rejection(loadProgramBuffer(otherZip))).message).toBe('program buffer: no manifest.json in the archive: not a tensorrt-node program file');
    const wrongFormat = packProgramFile({ format: 'something else', formatVersion: '1.0' }, new Map());
    expect((await rejection(loadProgramBuffer(wrongFormat))).message).toContain('says format "something else", not "tensorrt-node program"');
  });

  test('format versions: a newer one names the version needed; an unknown one is refused; older majors too', async () => {
    const { manifest, blobs } = unzipProgram(bytes);
    const withVersion = (v: unknown): Uint8Array => packProgramFile({ ...manifest, formatVersion: v, library: { name: 'tensorrt-node', version: '9.9.9' } }, blobs);
    const here = `${PROGRAM_FORMAT_VERSION.major}.${PROGRAM_FORMAT_VERSION.minor}`;
    const newerMinor = `${PROGRAM_FORMAT_VERSION.major}.${PROGRAM_FORMAT_VERSION.minor + 1}`;
    let e = await rejection(loadProgramBuffer(withVersion(newerMinor)));
    expect(e).toBeInstanceOf(BadProgramError);
    expect(e.message).toContain(`format version ${newerMinor} is newer than this tensorrt-node`);
    expect(e.message).toContain(`(up to ${here}): reading it needs a tensorrt-node that reads format ${newerMinor} (it was written by tensorrt-node 9.9.9)`);
    e = await rejection(loadProgramBuffer(withVersion('2.0')));
    expect(e.message).toContain('format version 2.0 is newer');
    expect(e.details).toMatchObject({ formatVersion: '2.0', supported: here, writtenBy: '9.9.9' });
    e = await rejection(loadProgramBuffer(withVersion('0.9')));
    expect(e.message).toContain('format version 0.9 is no longer read');
    for (const v of ['1', '1.0.0', 'v1.0', '', 1, null, undefined, '01.0']) {
      e = await rejection(loadProgramBuffer(withVersion(v)));
      expect(e).toBeInstanceOf(BadProgramError);
      expect(e.message).toMatch(/unknown format version|no format/);
    }
  });

  test('older minor versions of the same major are read', () => {
    const supported = { major: 1, minor: 2 };
    expect(checkFormatVersion('1.0', 'f', undefined, supported)).toEqual({ major: 1, minor: 0 });
    expect(checkFormatVersion('1.1', 'f', undefined, supported)).toEqual({ major: 1, minor: 1 });
    expect(checkFormatVersion('1.2', 'f', undefined, supported)).toEqual({ major: 1, minor: 2 });
    expect(() => checkFormatVersion('1.3', 'f', '0.5.0', supported)).toThrow('f: format version 1.3 is newer than this tensorrt-node');
    expect(() => checkFormatVersion('2.0', 'f', undefined, supported)).toThrow(BadProgramError);
  });

  test('a manifest naming a missing blob: E_BAD_PROGRAM naming it', async () => {
    const { manifest, blobs } = unzipProgram(bytes);
    blobs.delete('graphs/segment1.graph');
    const e = await rejection(loadProgramBuffer(packProgramFile(manifest, blobs)));
    expect(e).toBeInstanceOf(BadProgramError);
    expect(e.message).toBe('program buffer: blob "graphs/segment1.graph" is missing from the archive (the manifest lists it)');
    // ... and a segment naming a blob the blob list lacks
    const m2 = structuredClone(manifest);
    (m2.segments[1] as { graph: string }).graph = 'graphs/other.graph';
    expect((await rejection(loadProgramBuffer(packProgramFile(m2, unzipProgram(bytes).blobs)))).message).toContain(
      'blob "graphs/segment1.graph" is listed, but nothing in the manifest uses it',
    );
    delete m2.blobs['graphs/segment1.graph'];
    const b2 = unzipProgram(bytes).blobs;
    b2.delete('graphs/segment1.graph');
    expect((await rejection(loadProgramBuffer(packProgramFile(m2, b2)))).message).toContain(
      'blob "graphs/other.graph" is used by the manifest but not listed in "blobs"',
    );
  });

  test('an entry the manifest does not list, an unknown key, a bad device record: E_BAD_PROGRAM', async () => {
    const { manifest, blobs } = unzipProgram(bytes);
    const extra = new Map(blobs).set('engines/sneaky.engine', new Uint8Array(4));
    expect((await rejection(loadProgramBuffer(packProgramFile(manifest, extra)))).message).toContain('the archive holds "engines/sneaky.engine", which the manifest does not list');
    expect((await rejection(loadProgramBuffer(packProgramFile({ ...manifest, surprise: 1 }, blobs)))).message).toContain('manifest.json has the unknown key "surprise"');
    const m = structuredClone(manifest);
    (m.segments[0] as { device: { type: string } }).device.type = 'tpu';
    expect((await rejection(loadProgramBuffer(packProgramFile(m, blobs)))).message).toContain('segments[0].device.type is "tpu", not "gpu", "dla" or "cpu"');
    const m3 = structuredClone(manifest);
    Object.assign((m3.segments[0] as { device: object }).device, { type: 'gpu', computeCapability: { major: 7, minor: 5 }, gpuId: 0, deviceName: 'T4', hardwareCompatibility: 'ampere+' });
    expect((await rejection(loadProgramBuffer(packProgramFile(m3, blobs)))).message).toContain('an "ampere+" engine cannot have been built on compute capability 7.5');
  });

  test('blobs that pass their checksums but are wrong: the engine or graph is named', async () => {
    const { manifest, blobs } = unzipProgram(bytes);
    // Swap the two engines (and their checksums): the wiring no longer matches.
    const swapped = new Map(blobs);
    swapped.set('engines/segment0.engine', blobs.get('engines/segment2.engine')!);
    swapped.set('engines/segment2.engine', blobs.get('engines/segment0.engine')!);
    const m = structuredClone(manifest);
    [m.blobs['engines/segment0.engine'], m.blobs['engines/segment2.engine']] = [m.blobs['engines/segment2.engine']!, m.blobs['engines/segment0.engine']!];
    expect((await rejection(loadProgramBuffer(packProgramFile(m, swapped)))).message).toMatch(/segments\[0\]: engine "engines\/segment0\.engine" takes the inputs/);
    // A graph blob in an engine's place.
    const graphAsEngine = new Map(blobs).set('engines/segment0.engine', blobs.get('graphs/segment1.graph')!);
    const m2 = structuredClone(manifest);
    m2.blobs['engines/segment0.engine'] = { ...m2.blobs['graphs/segment1.graph']! };
    const e = await rejection(loadProgramBuffer(packProgramFile(m2, graphAsEngine)));
    expect(e).toBeInstanceOf(BadProgramError);
    expect(e.message).toContain('segments[0]: engine "engines/segment0.engine" cannot be loaded');
    // A segment reading a value nothing computed.
    const m3 = structuredClone(manifest);
    m3.segments[2]!.inputs = ['nowhere'];
    expect((await rejection(loadProgramBuffer(packProgramFile(m3, blobs)))).message).toContain('segments[2] reads the value "nowhere", which no input, constant or earlier segment provides');
  });
});

describe('device compatibility at load', () => {
  let reference: Uint8Array;
  beforeAll(async () => {
    const fixture = loadFixture('mlp');
    const program = await compile(path.join(fixture.dir, fixture.files.onnx!), { backend: 'reference', inputs: [{ shape: [4, 32] }] });
    reference = program.saveBuffer();
    await program.dispose();
  }, 60_000);

  /** The mlp program with its engine record rewritten as a TensorRT engine built on an H200-class GPU. */
  function gpuBound(cc = { major: 9, minor: 0 }, over: Record<string, unknown> = {}): Uint8Array {
    const { manifest, blobs } = unzipProgram(reference);
    const seg = manifest.segments[0] as unknown as { backend: string; device: Record<string, unknown> };
    seg.backend = 'tensorrt';
    seg.device = { ...seg.device, type: 'gpu', gpuId: 0, computeCapability: cc, deviceName: 'NVIDIA H200', backend: 'tensorrt', backendVersion: '10.16.0', ...over };
    manifest.backends = { tensorrt: '10.16.0' };
    manifest.backend = 'tensorrt';
    return packProgramFile(manifest, blobs);
  }

  test('a GPU-bound program fails on this GPU-less machine with E_NO_COMPATIBLE_DEVICE (real devices())', async () => {
    const e = await rejection(loadProgramBuffer(gpuBound()));
    expect(e).toBeInstanceOf(NoCompatibleDeviceError);
    expect(e.message).toBe(
      'Unable to deserialize program: engines were built for compute capability 9.0, but no device with compute capability 9.0 is available (found: no CUDA device)',
    );
    const file = path.join(tmp, 'gpu-bound.trtp');
    fs.writeFileSync(file, gpuBound());
    const fromFile = await rejection(loadProgram(file));
    expect(fromFile.code).toBe('E_NO_COMPATIBLE_DEVICE');
    expect(fromFile.message).toBe(
      `Unable to deserialize program file "${file}": engines were built for compute capability 9.0, but no device with compute capability 9.0 is available (found: no CUDA device)`,
    );
    expect(fromFile.details).toMatchObject({ segment: 0, found: [] });
  });

  test('the device check comes before deserialization, after the checksums', async () => {
    // A corrupt GPU-bound file is reported as corrupt, not as a device problem.
    const bytes = gpuBound();
    const { manifest, blobs } = unzipProgram(bytes);
    blobs.get('engines/segment0.engine')![10] ^= 1;
    expect((await rejection(loadProgramBuffer(packProgramFile(manifest, blobs)))).code).toBe('E_BAD_PROGRAM');
    // With an H200 present the device check passes; the engine then needs the TensorRT backend.
    const e = await rejection(loadProgramBuffer(bytes, { availableDevices: [TEST_H200] }));
    expect(e.code).toBe('E_TENSORRT_MISSING');
    expect(e.message).toContain('segments[0] is a TensorRT engine, but this tensorrt-node has no usable TensorRT backend');
  });

  test('injected devices: an 8.0 record is refused with the no-compatible-device message; an explicit incompatible device too', async () => {
    const e = await rejection(loadProgramBuffer(gpuBound({ major: 8, minor: 0 }), { availableDevices: [TEST_H200] }));
    expect(e.message).toBe(
      'Unable to deserialize program: engines were built for compute capability 8.0, but no device with compute capability 8.0 is available (found: device 0 "NVIDIA H200" (compute capability 9.0))',
    );
    const e2 = await rejection(loadProgramBuffer(gpuBound(), { availableDevices: [TEST_H200], device: 1 }));
    expect(e2.message).toContain('device 1 was asked for, but there is no device 1');
  });

  test('every GPU engine gets a device; the explicit device option reorders, CPU engines get none', async () => {
    const second: CudaDevice = { ...TEST_H200, ordinal: 1, uuid: 'GPU-11111111-0000-0000-0000-000000000000' };
    const contents = readProgramFile(gpuBound());
    const [auto] = await selectProgramDevices(contents, { availableDevices: [TEST_H200, second] });
    expect(auto).toMatchObject({ device: { ordinal: 0 }, rule: 'current-device' });
    const [asked] = await selectProgramDevices(contents, { availableDevices: [TEST_H200, second], device: 1 });
    expect(asked).toMatchObject({ device: { ordinal: 1 }, rule: 'explicit' });
    expect(await selectProgramDevices(readProgramFile(reference), { availableDevices: [] })).toEqual([null]);
  });

  test('DLA and ampere+ records are checked the same way', async () => {
    const dla = gpuBound({ major: 8, minor: 7 }, { type: 'dla', dlaCore: 1, deviceName: 'Orin' });
    expect((await rejection(loadProgramBuffer(dla))).message).toBe(
      'Unable to deserialize program: engines were built for DLA core 1 of device 0 with compute capability 8.7, but no device 0 with compute capability 8.7 is available (found: no CUDA device)',
    );
    const ampere = gpuBound({ major: 8, minor: 6 }, { hardwareCompatibility: 'ampere+' });
    expect((await rejection(loadProgramBuffer(ampere, { availableDevices: [TEST_H200] }))).code).toBe('E_TENSORRT_MISSING'); // 9.0 runs ampere+ engines
    expect((await rejection(loadProgramBuffer(ampere))).message).toContain('no device with compute capability 8.0 or newer is available (found: no CUDA device)');
  });
});

describe('generic round trip of ProgramData fields', () => {
  /** The mlp fixture and its program compiled for [4, 32], disposed (the tests build programs from its data). */
  async function compiledMlp(): Promise<{ fixture: ReturnType<typeof loadFixture>; compiled: Program }> {
    const fixture = loadFixture('mlp');
    const compiled = await compile(path.join(fixture.dir, fixture.files.onnx!), { backend: 'reference', inputs: [{ shape: [4, 32] }] });
    await compiled.dispose();
    return { fixture, compiled };
  }

  test('symbolic dims, symbol ranges, constants and fields this format has no dedicated place for', async () => {
    const { fixture, compiled } = await compiledMlp();
    const s0 = sym('s0');
    const constant = new Float32Array([1.5, -0, NaN, Infinity]);
    const data = {
      ...compiled.data,
      inputs: [
        {
          ...compiled.data.inputs[0]!,
          shape: [s0, 32],
          complex: { carrier: 'float32' },
          profiles: [{ min: [1, 32], opt: [4, 32], max: [64, 32] }],
        },
      ],
      outputs: [
        { ...compiled.data.outputs[0]!, shape: [s0, 10] },
        { name: 'folded', value: 'folded_value', dtype: 'float32', shape: [symMul(s0, 2), 2] },
      ],
      constants: { folded_value: { dtype: 'float32', shape: [2, 2], data: new Uint8Array(constant.buffer) } },
      futureField: {
        bytes: new Int32Array([1, -2, 3]),
        tensor: new Tensor('int64', [2], new BigInt64Array([1n, -(2n ** 62n)])),
        big: 2n ** 70n,
        odd: [NaN, -Infinity, -0, 0.1],
        map: new Map<unknown, unknown>([['a', 1], [2, [true, null]]]),
        set: new Set(['x']),
        $dollar: { $$two: 'kept' },
        skipped: undefined,
      },
    } as unknown as ProgramData;
    const program = new Program(data, compiled.report, 'reference', new Map([['s0', { min: 1, max: Infinity }]]));
    const loaded = await loadProgramBuffer(program.saveBuffer());
    try {
      expect(loaded.data.inputs).toEqual(data.inputs);
      expect(loaded.data.outputs).toEqual(data.outputs);
      expect(loaded.symbolRanges).toEqual(new Map([['s0', { min: 1, max: Infinity }]]));
      expect(Buffer.from(loaded.data.constants.folded_value!.data).equals(Buffer.from(constant.buffer))).toBe(true);
      const future = (loaded.data as unknown as { futureField: Record<string, unknown> }).futureField;
      expect(future.bytes).toEqual(new Int32Array([1, -2, 3]));
      expect(Object.prototype.toString.call(future.bytes)).toBe('[object Int32Array]');
      expect((future.tensor as Tensor).dtype).toBe('int64');
      expect([...(future.tensor as Tensor).data]).toEqual([1n, -(2n ** 62n)]);
      expect(future.big).toBe(2n ** 70n);
      expect(future.odd).toEqual([NaN, -Infinity, -0, 0.1]);
      expect(Object.is((future.odd as number[])[2], -0)).toBe(true);
      expect(future.map).toEqual(new Map<unknown, unknown>([['a', 1], [2, [true, null]]]));
      expect(future.set).toEqual(new Set(['x']));
      expect(future.$dollar).toEqual({ $$two: 'kept' });
      expect('skipped' in future).toBe(false);
    } finally {
      await loaded.dispose();
    }
  }, 60_000);

  test('a program with a constant output runs from the file', async () => {
    const { fixture, compiled } = await compiledMlp();
    const constant = new Float32Array([1.5, -0, NaN, Infinity]);
    const data: ProgramData = {
      ...compiled.data,
      outputs: [...compiled.data.outputs, { name: 'folded', value: 'folded_value', dtype: 'float32', shape: [2, 2] }],
      constants: { folded_value: { dtype: 'float32', shape: [2, 2], data: new Uint8Array(constant.buffer) } },
    };
    const loaded = await loadProgramBuffer(new Program(data, compiled.report, 'reference').saveBuffer());
    try {
      const out = await loaded.run([fixture.cases[0]!.inputs[0]!]);
      expect(Buffer.from(bytesOf(out[1]!)).equals(Buffer.from(constant.buffer))).toBe(true);
      expectClose(out[0]!, fixture.cases[0]!.outputs[0]!, FP32, 'mlp output');
    } finally {
      await loaded.dispose();
    }
  }, 60_000);

  test('a field that is not data cannot be saved (a library bug, named)', async () => {
    const { fixture, compiled } = await compiledMlp();
    const data = { ...compiled.data, inputs: [{ ...compiled.data.inputs[0]!, hook: () => 1 }] } as unknown as ProgramData;
    expect(() => new Program(data, compiled.report, 'reference').saveBuffer()).toThrow('cannot save input 0 (input0).hook: a function is not data');
  }, 60_000);
});
