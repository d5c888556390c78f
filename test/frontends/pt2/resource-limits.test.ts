/**
 * What loading a .pt2 archive may cost, in all: the bytes weights make up beyond those the
 * archive holds (fake storages, zero or overlapping strides, a storage two weights share)
 * are bounded for the whole load by `maxUnbackedWeightBytes` (E_RESOURCE_LIMIT naming the
 * weight and the file), and many small deflated weights may not add up to a zip bomb
 * (E_BAD_MODEL naming the file). Archives are the mlp fixture with extra parameters added
 * (placeholders returned as outputs), built in memory.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { crc32, deflateRawSync } from 'node:zlib';

import { unzipSync } from 'fflate';

import { ResourceLimitError } from '../../../lib/errors';
import { loadPt2 } from '../../../lib/frontends/pt2';
import type { Graph } from '../../../lib/ir/graph';
import { FIXTURES } from '../../helpers/fixtures';
import { thrown, thrownError } from '../../helpers/errors';

// eslint-disable-next-line @typescript-eslint/no-require-imports
const zw = require('../../../fuzz/zip-writer.js') as {
  storedEntry(name: string, data: Uint8Array, method?: number): object;
  writeZip(entries: object[]): Uint8Array;
};

const MODEL_JSON = 'model/models/model.json';
const WEIGHTS_JSON = 'model/data/weights/model_weights_config.json';
const FLOAT32 = 7;

interface Extra {
  /** The storage entry (under data/weights/); several weights may name the same one. */
  path: string;
  sizes: number[];
  strides: number[];
  offset?: number;
}

/** A deflated (or stored) storage entry's zip record; `raw` may be shared by many entries. */
type Storage = { data: Uint8Array } | { deflated: { raw: Uint8Array; size: number; crc: number } };

const ints = (xs: number[]) => xs.map((as_int) => ({ as_int }));

/**
 * The mlp fixture with parameters `extra.<i>` (float32) added in front of its inputs, read
 * from `storages` (entry name under data/weights/ → bytes, or a deflated record).
 */
function withExtras(extras: Extra[], storages: Record<string, Storage>): Uint8Array {
  const files = unzipSync(new Uint8Array(fs.readFileSync(path.join(FIXTURES, 'mlp', 'model.pt2'))));
  const program = JSON.parse(new TextDecoder().decode(files[MODEL_JSON]!));
  const weights = JSON.parse(new TextDecoder().decode(files[WEIGHTS_JSON]!));
  const g = program.graph_module;
  extras.forEach((x, i) => {
    const meta = {
      dtype: FLOAT32,
      sizes: ints(x.sizes),
      requires_grad: true,
      device: { type: 'cpu', index: null },
      strides: ints(x.strides),
      storage_offset: { as_int: x.offset ?? 0 },
      layout: 7,
    };
    weights.config[`extra.${i}`] = { path_name: x.path, is_param: true, use_pickle: false, tensor_meta: meta };
    g.graph.tensor_values[`p_extra_${i}`] = meta;
  });
  g.graph.inputs.unshift(...extras.map((_, i) => ({ as_tensor: { name: `p_extra_${i}` } })));
  g.signature.input_specs.unshift(...extras.map((_, i) => ({ parameter: { arg: { name: `p_extra_${i}` }, parameter_name: `extra.${i}` } })));
  // Returned too, so that the loaded constants outlive dead-code elimination.
  g.graph.outputs.push(...extras.map((_, i) => ({ as_tensor: { name: `p_extra_${i}` } })));
  g.signature.output_specs.push(...extras.map((_, i) => ({ user_output: { arg: { as_tensor: { name: `p_extra_${i}` } } } })));
  const text = (json: unknown) => new TextEncoder().encode(JSON.stringify(json));
  const entries: object[] = Object.entries({ ...files, [MODEL_JSON]: text(program), [WEIGHTS_JSON]: text(weights) }).map(([name, data]) => zw.storedEntry(name, data));
  for (const [name, s] of Object.entries(storages)) {
    const full = `model/data/weights/${name}`;
    if ('data' in s) entries.push(zw.storedEntry(full, s.data));
    else entries.push({ name: full, method: 8, crc: s.deflated.crc, size: s.deflated.size, compressedSize: s.deflated.raw.length, raw: s.deflated.raw });
  }
  return zw.writeZip(entries);
}

const f32 = (...xs: number[]) => new Uint8Array(new Float32Array(xs).buffer);

/** The constant loaded for parameter `fqn`, as numbers. */
function values(graph: Graph, fqn: string): number[] {
  const node = graph.nodes.find((n) => n.kind === 'constant' && n.meta.fqn === fqn);
  return node!.tensor!.toArray() as number[];
}

let dir: string;
beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'trtn-pt2-limits-'));
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

describe('made-up weight bytes are bounded for the whole load', () => {
  test('16 weights of 64 MiB each, stride 0 over 4 bytes: E_RESOURCE_LIMIT naming the weight and the file, at once', () => {
    const extras = Array.from({ length: 16 }, (_, i) => ({ path: `expand_${i}`, sizes: [2 ** 24], strides: [0] }));
    const bytes = withExtras(extras, Object.fromEntries(extras.map((x) => [x.path, { data: f32(1.5) }])));
    expect(bytes.length).toBeLessThan(64 * 1024);
    const file = path.join(dir, 'expanded.pt2');
    fs.writeFileSync(file, bytes);
    const started = Date.now();
    const e = thrown(() => loadPt2(file, { decompose: false }), ResourceLimitError, 'E_RESOURCE_LIMIT');
    expect(Date.now() - started).toBeLessThan(5000);
    // Each passes alone (64 MiB - 4 bytes made up); the second takes the total past 64 MiB.
    expect(e.message).toContain(`${file}: parameter "extra.1" (entry "model/data/weights/expand_1", float32[16777216], 67108864 bytes from 4 stored)`);
    expect(e.message).toContain(`would bring the bytes made up for this archive's weights to ${2 * (2 ** 26 - 4)}, more than maxUnbackedWeightBytes (67108864)`);
    expect(e.message).toContain("raise loadPt2's maxUnbackedWeightBytes option");
    expect(e.details).toMatchObject({ file, entry: 'model/data/weights/expand_1', name: 'extra.1', maxUnbackedWeightBytes: 2 ** 26 });
  }, 10000);

  test('the total is counted over weights, and the option moves the bound', () => {
    // Each [64] float32 from one stored float makes up 252 bytes.
    const extras = Array.from({ length: 5 }, (_, i) => ({ path: `e${i}`, sizes: [64], strides: [0] }));
    const bytes = withExtras(extras, Object.fromEntries(extras.map((x, i) => [x.path, { data: f32(i + 0.5) }])));
    const e = thrown(() => loadPt2(bytes, { decompose: false, maxUnbackedWeightBytes: 1024 }), ResourceLimitError, 'E_RESOURCE_LIMIT');
    expect(e.message).toContain('pt2 buffer: parameter "extra.4"');
    expect(e.details).toMatchObject({ bytes: 5 * 252, maxUnbackedWeightBytes: 1024 });
    const graph = loadPt2(bytes, { decompose: false, maxUnbackedWeightBytes: 5 * 252 });
    for (let i = 0; i < 5; i++) expect(values(graph, `extra.${i}`)).toEqual(new Array(64).fill(i + 0.5));
  });

  test('a storage shared by weights backs them once: views of its parts cost nothing, further copies count beyond the stored bytes', () => {
    const storage = { qkv: { data: f32(...Array.from({ length: 12 }, (_, i) => i)) } };
    const thirds = [0, 4, 8].map((offset) => ({ path: 'qkv', sizes: [2, 2], strides: [2, 1], offset }));
    const graph = loadPt2(withExtras(thirds, storage), { decompose: false, maxUnbackedWeightBytes: 0 });
    expect([0, 1, 2].map((i) => values(graph, `extra.${i}`))).toEqual([
      [0, 1, 2, 3],
      [4, 5, 6, 7],
      [8, 9, 10, 11],
    ]);
    // Tied weights (two names on one storage, as GPT-2's embedding and output projection):
    // the second copy is within the stored bytes, whatever the limit.
    const twice = [0, 1].map(() => ({ path: 'qkv', sizes: [12], strides: [1] }));
    expect(values(loadPt2(withExtras(twice, storage), { decompose: false, maxUnbackedWeightBytes: 0 }), 'extra.1')).toEqual(Array.from({ length: 12 }, (_, i) => i));
    // A third copy makes up 96 bytes in all: over 47 + the 48 stored, within 48 + 48.
    const thrice = [0, 1, 2].map(() => ({ path: 'qkv', sizes: [12], strides: [1] }));
    const e = thrown(() => loadPt2(withExtras(thrice, storage), { decompose: false, maxUnbackedWeightBytes: 47 }), ResourceLimitError, 'E_RESOURCE_LIMIT');
    expect(e.details).toMatchObject({ name: 'extra.2', bytes: 96 });
    expect(values(loadPt2(withExtras(thrice, storage), { decompose: false, maxUnbackedWeightBytes: 48 }), 'extra.2')).toEqual(Array.from({ length: 12 }, (_, i) => i));
  });

  test('a fake (meta) storage saved without data makes up all its bytes', () => {
    const fakes = [0, 1].map((i) => ({ path: `fake_${i}`, sizes: [8, 8], strides: [8, 1] }));
    const storages = { fake_0: { data: new Uint8Array(0) }, fake_1: { data: new Uint8Array(0) } };
    expect(values(loadPt2(withExtras(fakes, storages), { decompose: false, maxUnbackedWeightBytes: 512 }), 'extra.1')).toEqual(new Array(64).fill(0));
    const e = thrown(() => loadPt2(withExtras(fakes, storages), { decompose: false, maxUnbackedWeightBytes: 511 }), ResourceLimitError, 'E_RESOURCE_LIMIT');
    expect(e.details).toMatchObject({ name: 'extra.1', bytes: 512 });
  });

  test('one weight alone over the bound stays E_BAD_MODEL, naming the option', () => {
    const bytes = withExtras([{ path: 'big', sizes: [1024], strides: [0] }], { big: { data: f32(1) } });
    const e = thrownError(() => loadPt2(bytes, { decompose: false, maxUnbackedWeightBytes: 1000 }));
    expect(e.code).toBe('E_BAD_MODEL');
    expect(e.message).toContain('parameter "extra.0"');
    expect(e.message).toContain('needs 4096 bytes for sizes [1024] but the archive holds 4; tensorrt-node makes up at most 1000 bytes');
    expect(e.message).toContain('maxUnbackedWeightBytes');
  });

  test.each([-1, 1.5, NaN, '64' as unknown as number])('maxUnbackedWeightBytes %p is E_INVALID_ARGUMENT', (bad) => {
    const e = thrownError(() => loadPt2(withExtras([], {}), { maxUnbackedWeightBytes: bad }));
    expect(e.code).toBe('E_INVALID_ARGUMENT');
    expect(e.message).toContain('maxUnbackedWeightBytes must be a non-negative integer');
  });
});

describe('strided weights are gathered right', () => {
  /** Element i of the contiguous result of (sizes, strides, offset) over `storage`, computed one by one. */
  function reference(storage: number[], sizes: number[], strides: number[], offset: number): number[] {
    const count = sizes.reduce((a, b) => a * b, 1);
    const out: number[] = [];
    for (let n = 0; n < count; n++) {
      let rest = n;
      let at = offset;
      for (let d = sizes.length - 1; d >= 0; d--) {
        at += (rest % sizes[d]!) * strides[d]!;
        rest = Math.floor(rest / sizes[d]!);
      }
      out.push(storage[at]!);
    }
    return out;
  }

  test.each([
    ['transposed', [4, 6], [1, 4], 0],
    ['expanded rows', [5, 6], [0, 1], 2],
    ['expanded columns', [6, 5], [1, 0], 1],
    ['expanded in the middle', [3, 7, 2], [2, 0, 1], 0],
    ['expanded outer and inner, sliced', [3, 2, 5, 1, 3], [0, 6, 1, 9, 0], 3],
    ['overlapping windows', [10, 4], [1, 1], 0],
    ['every other element', [2, 3, 2], [12, 4, 2], 1],
  ])('%s: sizes %p, strides %p, offset %p', (_, sizes, strides, offset) => {
    const storage = Array.from({ length: 24 }, (_, i) => i * 1.25 - 3);
    const graph = loadPt2(withExtras([{ path: 's', sizes, strides, offset }], { s: { data: f32(...storage) } }), { decompose: false });
    expect(values(graph, 'extra.0')).toEqual(reference(storage, sizes, strides, offset));
  });
});

describe('many small deflated weights do not add up to a zip bomb', () => {
  test('1,000 deflated 1 MiB weights of zeros (about 1 MB of file): E_BAD_MODEL naming the file, before inflating', () => {
    const zeros = new Uint8Array(2 ** 20);
    const deflated = { raw: new Uint8Array(deflateRawSync(zeros, { level: 9 })), size: zeros.length, crc: crc32(zeros) >>> 0 };
    const extras = Array.from({ length: 1000 }, (_, i) => ({ path: `z_${i}`, sizes: [2 ** 18], strides: [1] }));
    const bytes = withExtras(extras, Object.fromEntries(extras.map((x) => [x.path, { deflated }])));
    expect(bytes.length).toBeLessThan(2e6);
    const file = path.join(dir, 'many-small.pt2');
    fs.writeFileSync(file, bytes);
    const started = Date.now();
    const e = thrownError(() => loadPt2(file, { decompose: false }));
    expect(Date.now() - started).toBeLessThan(5000);
    expect(e.code).toBe('E_BAD_MODEL');
    expect(e.message).toMatch(new RegExp(`^${file.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}: not a readable \\.pt2 archive: its deflated entries inflate \\d+ bytes to 1048576000 in all \\(ratio \\d+:1\\), above the limit of 200:1`));
    expect(e.details).toMatchObject({ file });
  }, 10000);

  test('a few small deflated weights of zeros stay readable', () => {
    const zeros = new Uint8Array(4096);
    const deflated = { raw: new Uint8Array(deflateRawSync(zeros)), size: zeros.length, crc: crc32(zeros) >>> 0 };
    const extras = Array.from({ length: 3 }, (_, i) => ({ path: `z_${i}`, sizes: [1024], strides: [1] }));
    const graph = loadPt2(withExtras(extras, Object.fromEntries(extras.map((x) => [x.path, { deflated }]))), { decompose: false });
    expect(values(graph, 'extra.2')).toEqual(new Array(1024).fill(0));
  });
});
