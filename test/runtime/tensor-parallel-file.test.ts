/**
 * Tensor-parallel program files: compile(tensorParallel n) → save → loadTensorParallelProgram
 * → run equals the in-memory program exactly, and PyTorch's outputs and the unsharded program
 * within fp32 tolerance (the Llama fixture, n = 2 and 4); damage (a flipped byte, truncation,
 * a missing or extra rank, a tampered rank program or collective list) is E_BAD_PROGRAM naming
 * the entry; the two loaders refuse each other's files by name; GPU ranks each get a device
 * of their own (fewer devices than ranks: E_NO_COMPATIBLE_DEVICE); `inspect` shows the ranks.
 * Needs dist/ (npm run build:ts).
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

import { formatInspectReport, inspectProgramBytes } from '../../lib/cli/inspect-command';
import { formatTensorParallelInspectReport, inspectTensorParallelBytes } from '../../lib/cli/inspect-tensor-parallel';
import { compile } from '../../lib/compile';
import type { CudaDevice } from '../../lib/devices';
import { loadProgram, packProgramFile, readProgramFile } from '../../lib/runtime/program-file';
import { sha256 } from '../../lib/runtime/program-file/write';
import { loadTensorParallelProgram, loadTensorParallelProgramBuffer, selectRankDevices } from '../../lib/runtime/tensor-parallel/file-load';
import type { TensorParallelManifest } from '../../lib/runtime/tensor-parallel/file-manifest';
import { readTensorParallelFile } from '../../lib/runtime/tensor-parallel/file-read';
import { TensorParallelProgram } from '../../lib/runtime/tensor-parallel/program';
import type { Tensor } from '../../lib/ir/tensor';
import { expectClose, expectExact, FP32 } from '../helpers/compare';
import { TEST_H200 } from '../helpers/devices';
import { rejection } from '../helpers/errors';
import { loadFixture } from '../helpers/fixtures';
import { asFormat10ProgramFile, rawManifest } from '../helpers/legacy-program-file';
import { DIST_CLI, runCli } from '../helpers/built-package';

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'trtp-tp-'));
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

const fixture = loadFixture('llama_rotary_complex_input');
const modelFile = path.join(fixture.dir, fixture.files.pt2!);
const { inputs, outputs } = fixture.cases[0]!;
const shapes = inputs.map((t) => ({ shape: [...t.shape] }));

/** The file's manifest and entries, to damage and repack. */
function unpack(bytes: Uint8Array): { manifest: TensorParallelManifest; blobs: Map<string, Uint8Array> } {
  const c = readTensorParallelFile(bytes);
  return { manifest: structuredClone(c.manifest), blobs: new Map(c.manifest.ranks.map((r, i) => [r.program, c.rankBytes[i]!.slice()])) };
}

/** Repacks with every listed size and SHA-256 made to match the entries (so that only the damage meant is there). */
function repack(manifest: TensorParallelManifest, blobs: Map<string, Uint8Array>): Uint8Array {
  manifest.blobs = Object.fromEntries([...blobs].map(([k, v]) => [k, { sha256: sha256(v), bytes: v.byteLength }]));
  return packProgramFile(manifest, blobs);
}

let unsharded: Tensor[];
beforeAll(async () => {
  const whole = await compile(modelFile, { backend: 'reference', inputs: shapes });
  try {
    unsharded = await whole.run(inputs);
  } finally {
    await whole.dispose();
  }
}, 120_000);

describe.each([2, 4])('tensorParallel %i: save → load → run', (n) => {
  let program: TensorParallelProgram;
  let loaded: TensorParallelProgram;
  const file = path.join(tmp, `llama-tp${n}.trtp`);

  beforeAll(async () => {
    program = await compile(modelFile, { backend: 'reference', tensorParallel: n, inputs: shapes });
    await program.save(file);
    loaded = await loadTensorParallelProgram(file);
  }, 180_000);
  afterAll(async () => {
    await program?.dispose();
    await loaded?.dispose();
  });

  test('the loaded program has every rank, its devices, collectives and blocks', () => {
    expect(loaded).toBeInstanceOf(TensorParallelProgram);
    expect(loaded.size).toBe(n);
    expect(loaded.backend).toBe('reference');
    expect(loaded.blocks).toEqual(program.blocks);
    expect(loaded.inputs).toEqual(program.inputs);
    expect(loaded.outputs).toEqual(program.outputs);
    loaded.ranks.forEach((rank, r) => {
      expect(rank.rank).toBe(r);
      expect(rank.targetDevice).toEqual({ type: 'gpu', gpuId: r });
      expect(rank.collectiveSegments).toEqual(program.ranks[r]!.collectiveSegments);
      expect(rank.collectives).toBe(4);
      expect(rank.data.segments.map((s) => s.kind)).toEqual(program.ranks[r]!.data.segments.map((s) => s.kind));
    });
    expect(String(loaded)).toBe(String(program));
  });

  test('runs equal the in-memory program exactly, and PyTorch and the unsharded program within fp32 tolerance', async () => {
    const fresh = await program.runAllRanks(inputs);
    const back = await loaded.runAllRanks(inputs);
    expect(back).toHaveLength(n);
    back.forEach(([out], r) => {
      expectExact(out!, fresh[r]![0]!, `rank ${r}: loaded vs in-memory`);
      expectClose(out!, outputs[0]!, FP32, `rank ${r}: loaded vs PyTorch`);
      expectClose(out!, unsharded[0]!, FP32, `rank ${r}: loaded vs unsharded`);
    });
  }, 120_000);

  test('saving is reproducible, and a loaded program saves the same bytes', () => {
    const bytes = fs.readFileSync(file);
    expect(Buffer.from(program.saveBuffer()).equals(bytes)).toBe(true);
    expect(Buffer.from(loaded.saveBuffer()).equals(bytes)).toBe(true);
    const { manifest } = unpack(bytes);
    expect(manifest).toMatchObject({ format: 'tensorrt-node tensor-parallel program', formatVersion: '1.0', worldSize: n, backend: 'reference' });
    expect(manifest.ranks.map((r) => r.program)).toEqual(Array.from({ length: n }, (_, r) => `ranks/rank${r}.trtp`));
  });

  test('rank programs as tensorrt-node 0.1.0 wrote them (format 1.0, "kind": "tensorrt") load as the same program', async () => {
    // The tensor-parallel manifest is unchanged (still 1.0); only its rank entries are single program files of the current format.
    const { manifest, blobs } = unpack(fs.readFileSync(file));
    expect(manifest.formatVersion).toBe('1.0');
    for (const [entry, rankBytes] of blobs) {
      expect(rawManifest(rankBytes).formatVersion).toBe('1.3');
      blobs.set(entry, asFormat10ProgramFile(rankBytes));
      expect(rawManifest(blobs.get(entry)!).segments.some((s) => s.kind === 'tensorrt')).toBe(true);
    }
    const old = await loadTensorParallelProgramBuffer(repack(manifest, blobs));
    try {
      old.ranks.forEach((rank, r) => {
        expect(rank.data.segments.map((s) => s.kind)).toEqual(program.ranks[r]!.data.segments.map((s) => s.kind));
        expect(rank.report).toEqual(program.ranks[r]!.report);
      });
      expect(String(old)).toBe(String(program));
      const fresh = await program.runAllRanks(inputs);
      (await old.runAllRanks(inputs)).forEach(([out], r) => expectExact(out!, fresh[r]![0]!, `rank ${r}: format 1.0 vs in-memory`));
      // Saved again, it is what this library writes.
      expect(Buffer.from(old.saveBuffer()).equals(fs.readFileSync(file))).toBe(true);
    } finally {
      await old.dispose();
    }
  }, 120_000);

  test('inspect shows the world size and every rank', async () => {
    const report = await inspectTensorParallelBytes(fs.readFileSync(file), file, `program file "${file}"`, inspectProgramBytes, []);
    expect(report.worldSize).toBe(n);
    expect(report.ranks.map((r) => [r.rank, r.entry, r.targetDevice.gpuId, r.collectiveSegments.length])).toEqual(
      Array.from({ length: n }, (_, r) => [r, `ranks/rank${r}.trtp`, r, 4]),
    );
    expect(report.ranks[0]!.program.inputs.map((x) => x.name)).toEqual(['x', 'freqs_cis']);
    const text = formatTensorParallelInspectReport(report, formatInspectReport);
    expect(text).toContain(`${n} ranks, backend reference; split blocks: p_layers_0_attention (attention)`);
    for (let r = 0; r < n; r++) expect(text).toContain(`rank ${r}: ranks/rank${r}.trtp, target gpu ${r}, all-reduces at segments`);
    expect(text).toContain('  device requirements: none (every engine runs on the CPU)');
  });
});

describe('damaged and mismatched files', () => {
  let bytes: Uint8Array;
  beforeAll(async () => {
    const program = await compile(modelFile, { backend: 'reference', tensorParallel: 2, inputs: shapes });
    bytes = program.saveBuffer();
    await program.dispose();
  }, 120_000);

  const refusal = async (b: Uint8Array): Promise<string> => {
    const e = await rejection(loadTensorParallelProgramBuffer(b));
    expect(e.code).toBe('E_BAD_PROGRAM');
    return e.message;
  };

  test('the single-program loader refuses a tensor-parallel file, saying which loader reads it', async () => {
    const e = await rejection(loadProgram(writeTmp('tp.trtp', bytes)));
    expect(e.code).toBe('E_BAD_PROGRAM');
    expect(e.message).toMatch(/^program file ".*tp\.trtp": this is a tensor-parallel program file \(2 ranks\), not a single program: load it with loadTensorParallelProgram\(\)$/);
  });

  test('the tensor-parallel loader refuses a single program file, saying which loader reads it', async () => {
    const single = await compile(modelFile, { backend: 'reference', inputs: shapes });
    const e = await rejection(loadTensorParallelProgram(writeTmp('single.trtp', single.saveBuffer())));
    await single.dispose();
    expect(e.code).toBe('E_BAD_PROGRAM');
    expect(e.message).toContain('says format "tensorrt-node program", not "tensorrt-node tensor-parallel program": it holds a single program; load it with loadProgram()');
  }, 120_000);

  test('a rank entry that does not match its SHA-256 names the entry', async () => {
    const { manifest, blobs } = unpack(bytes);
    manifest.blobs['ranks/rank1.trtp']!.sha256 = '0'.repeat(64);
    expect(await refusal(packProgramFile(manifest, blobs))).toMatch(/blob "ranks\/rank1\.trtp" is corrupt: its SHA-256 is [0-9a-f]{64}, the manifest says 0{64}/);
  });

  test('a flipped byte in the stored archive fails its CRC, naming the entry', async () => {
    const copy = bytes.slice();
    const buf = Buffer.from(copy);
    // The entry's local header: the signature PK\3\4, 30 bytes of header, then its name.
    let at = -1;
    for (let i = buf.indexOf('ranks/rank1.trtp'); i >= 0; i = buf.indexOf('ranks/rank1.trtp', i + 1)) if (buf.readUInt32LE(i - 30) === 0x04034b50) at = i;
    expect(at).toBeGreaterThan(0);
    copy[at + 16 + 500]! ^= 0x01;
    expect(await refusal(copy)).toMatch(/ranks\/rank1\.trtp/);
  });

  test('a truncated file is not a program file', async () => {
    expect(await refusal(bytes.subarray(0, Math.floor(bytes.length / 2)))).toMatch(/^tensor-parallel program buffer: not a program file: /);
  });

  test('a missing rank: its entry gone, or fewer ranks than the world size', async () => {
    const { manifest, blobs } = unpack(bytes);
    const without = new Map(blobs);
    without.delete('ranks/rank1.trtp');
    const m = structuredClone(manifest);
    const gone = packProgramFile({ ...m, blobs: manifest.blobs }, without);
    expect(await refusal(gone)).toContain('blob "ranks/rank1.trtp" is missing from the archive (the manifest lists it)');
    const short = structuredClone(manifest);
    short.ranks.pop();
    expect(await refusal(repack(short, without))).toContain('worldSize is 2, but ranks lists 1 rank(s)');
  });

  test('a rank program with a damaged blob (consistent outer checksum) names the rank, its entry and the blob', async () => {
    const { manifest, blobs } = unpack(bytes);
    const inner = readProgramFile(blobs.get('ranks/rank1.trtp')!);
    const m = structuredClone(inner.manifest);
    const innerBlobs = new Map([...inner.blobs].map(([k, v]) => [k, v.slice()]));
    const [name, data] = [...innerBlobs].find(([k]) => k.startsWith('graphs/'))!;
    data[0]! ^= 0xff;
    blobs.set('ranks/rank1.trtp', packProgramFile(m, innerBlobs));
    const msg = await refusal(repack(manifest, blobs));
    expect(msg).toContain(`tensor-parallel program buffer: rank 1 ("ranks/rank1.trtp"): blob "${name}" is corrupt: its SHA-256 is`);
  });

  test('collective lists that do not match the rank programs', async () => {
    const { manifest, blobs } = unpack(bytes);
    const wrong = structuredClone(manifest);
    wrong.ranks[1]!.collectiveSegments = wrong.ranks[1]!.collectiveSegments.slice(1);
    expect(await refusal(repack(wrong, blobs))).toMatch(/rank 1 \("ranks\/rank1\.trtp"\): segment \d+ holds an all-reduce that collectiveSegments does not list/);
    const engine = structuredClone(manifest);
    engine.ranks[0]!.collectiveSegments = [0, ...engine.ranks[0]!.collectiveSegments.slice(1)];
    expect(await refusal(repack(engine, blobs))).toMatch(/rank 0 \("ranks\/rank0\.trtp"\): collectiveSegments lists segment 0, (an engine, not an all-reduce|which is not one all-reduce)/);
    const rank1AsRank0 = new Map([['ranks/rank0.trtp', blobs.get('ranks/rank0.trtp')!], ['ranks/rank1.trtp', blobs.get('ranks/rank0.trtp')!]]);
    const listsDiffer = structuredClone(manifest);
    listsDiffer.ranks[1]!.collectiveSegments = [...manifest.ranks[0]!.collectiveSegments];
    // Two copies of rank 0 are consistent with each other: a file can only be checked for what it says, not for being the right shards.
    const twins = await loadTensorParallelProgramBuffer(repack(listsDiffer, rank1AsRank0));
    expect(twins.size).toBe(2);
    await twins.dispose();
  });

  test('a newer format version is refused before anything else is read', async () => {
    const { manifest, blobs } = unpack(bytes);
    manifest.formatVersion = '1.1';
    expect(await refusal(repack(manifest, blobs))).toMatch(/format version 1\.1 is newer than this tensorrt-node .* reads \(up to 1\.0\)/);
  });

  test('GPU ranks: one device each; fewer compatible devices than ranks is E_NO_COMPATIBLE_DEVICE naming the rank', async () => {
    // The same file, its engines marked as built for an H200 (as a GPU backend records them).
    const { manifest, blobs } = unpack(bytes);
    for (const [entry, rankBytes] of blobs) {
      const inner = readProgramFile(rankBytes);
      const m = structuredClone(inner.manifest);
      for (const seg of m.segments) {
        if (seg.kind !== 'engine') continue;
        seg.backend = 'tensorrt';
        Object.assign(seg.device, { type: 'gpu', gpuId: 0, computeCapability: { major: 9, minor: 0 }, deviceName: 'NVIDIA H200', backend: 'tensorrt', backendVersion: '10.16.0' });
      }
      m.backends = { tensorrt: '10.16.0' };
      blobs.set(entry, packProgramFile(m, inner.blobs));
    }
    const gpuBytes = repack(manifest, blobs);
    const contents = readTensorParallelFile(gpuBytes);
    const h200 = (ordinal: number): CudaDevice => ({ ...TEST_H200, ordinal });
    const ordinals = (sel: Awaited<ReturnType<typeof selectRankDevices>>) => sel.map((rank) => [...new Set(rank.filter((s) => s !== null).map((s) => s!.device.ordinal))]);
    expect(ordinals(await selectRankDevices(contents, { availableDevices: [h200(0), h200(1)] }))).toEqual([[0], [1]]);
    expect(ordinals(await selectRankDevices(contents, { availableDevices: [h200(0), h200(1), h200(2)], devices: [2, 0] }))).toEqual([[2], [0]]);
    const few = await rejection(loadTensorParallelProgramBuffer(gpuBytes, { availableDevices: [h200(0)] }));
    expect(few.code).toBe('E_NO_COMPATIBLE_DEVICE');
    expect(few.message).toContain('rank 1 has no device: 2 ranks need 2 compatible devices, one per rank; devices 0 are taken by ranks 0, and none of the 1 device(s) found is left');
    expect(few.message).not.toContain('no CUDA device');
    const none = await rejection(loadTensorParallelProgramBuffer(gpuBytes, { availableDevices: [] }));
    expect(none.code).toBe('E_NO_COMPATIBLE_DEVICE');
    const same = await rejection(loadTensorParallelProgramBuffer(gpuBytes, { availableDevices: [h200(0), h200(1)], devices: [1, 1] }));
    expect(same.code).toBe('E_NO_COMPATIBLE_DEVICE');
    expect(same.message).toContain('rank 1 was given device 1, which rank 0 already uses');
    // With a device per rank, loading gets past placement to the missing TensorRT backend.
    expect((await rejection(loadTensorParallelProgramBuffer(gpuBytes, { availableDevices: [h200(0), h200(1)] }))).code).toBe('E_TENSORRT_MISSING');
  });

  test('bad options are E_INVALID_ARGUMENT', async () => {
    expect((await rejection(loadTensorParallelProgramBuffer(bytes, { device: 0 } as never))).code).toBe('E_INVALID_ARGUMENT');
    expect((await rejection(loadTensorParallelProgramBuffer(bytes, { devices: ['gpu0'] }))).code).toBe('E_INVALID_ARGUMENT');
    expect((await rejection(loadTensorParallelProgramBuffer(bytes, { devices: [0, 1, 2] }))).message).toContain('devices names 3 devices, but tensor-parallel program buffer has 2 ranks');
    expect((await rejection(loadTensorParallelProgram(path.join(tmp, 'absent.trtp')))).code).toBe('E_BAD_PROGRAM');
    const policy = await rejection(loadTensorParallelProgramBuffer(bytes, { collectives: 'ring' as 'host' }));
    expect(policy.code).toBe('E_INVALID_ARGUMENT');
    expect(policy.message).toBe(`load options: collectives must be one of 'auto', 'nccl', 'host', got "ring"`);
  });

  test('the collectives option reaches the loaded program', async () => {
    const onHost = await loadTensorParallelProgramBuffer(bytes, { collectives: 'host' });
    const byDefault = await loadTensorParallelProgramBuffer(bytes);
    try {
      expect(onHost.collectives).toBe('host');
      expect(byDefault.collectives).toBe('auto');
    } finally {
      await onHost.dispose();
      await byDefault.dispose();
    }
  });

  test('the CLI inspects a tensor-parallel file (dist/)', () => {
    if (!fs.existsSync(DIST_CLI)) throw new Error('dist/ is missing: run `npm run build:ts` first');
    const file = writeTmp('cli.trtp', bytes);
    const text = runCli(['inspect', file]);
    expect(text.status).toBe(0);
    expect(text.stdout).toContain('2 ranks, backend reference');
    expect(text.stdout).toContain('rank 1: ranks/rank1.trtp, target gpu 1');
    const json = runCli(['inspect', file, '--json']);
    expect(json.status).toBe(0);
    expect((JSON.parse(json.stdout) as { worldSize: number; ranks: unknown[] }).ranks).toHaveLength(2);
  });
});

function writeTmp(name: string, bytes: Uint8Array): string {
  const file = path.join(tmp, name);
  fs.writeFileSync(file, bytes);
  return file;
}
