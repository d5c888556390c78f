/**
 * Mutation test of program files: ~2,000 damaged variants of a saved mlp program (engines
 * and a fallback graph). Byte-level damage anywhere in the file (bit flips, overwritten,
 * inserted and deleted bytes, truncation, copied ranges), aimed at the blobs, the manifest
 * and the zip headers; and manifest edits that keep the zip valid (re-zipped JSON changes).
 * Never a crash (an error that is not a typed TensorRTNodeError, or E_INTERNAL), never a
 * hang, never a wrong answer: a variant that loads must run and give the original outputs
 * (which match PyTorch's).
 */
import * as path from 'node:path';

import { compile } from '../../lib/compile';
import { BadProgramError, TensorRTNodeError } from '../../lib/errors';
import { loadProgramBuffer, packProgramFile, readProgramFile } from '../../lib/runtime/program-file';
import type { Tensor } from '../../lib/ir/tensor';
import { expectClose, FP32 } from '../helpers/compare';
import { loadFixture } from '../helpers/fixtures';
import { Random } from '../helpers/random';

const fixture = loadFixture('mlp');
const { inputs, outputs: torchOutputs } = fixture.cases[0]!;

type Region = 'blob' | 'manifest' | 'header' | 'anywhere';

interface Variant {
  label: string;
  bytes: Uint8Array;
  /** Byte-level damage: loading may only fail or give exactly the original program. */
  raw: boolean;
}

/** Codes a damaged file may produce at load. */
const LOAD_CODES = new Set(['E_BAD_PROGRAM', 'E_NO_COMPATIBLE_DEVICE', 'E_TENSORRT_MISSING']);

function same(a: Tensor[], b: Tensor[]): boolean {
  return (
    a.length === b.length &&
    a.every((t, i) => {
      const u = b[i]!;
      if (t.dtype !== u.dtype || t.shape.join() !== u.shape.join()) return false;
      return Buffer.from(t.data.buffer, t.data.byteOffset, t.data.byteLength).equals(Buffer.from(u.data.buffer, u.data.byteOffset, u.data.byteLength));
    })
  );
}

describe('program file mutations', () => {
  let original: Uint8Array;
  let expected: Tensor[];
  const spans: Record<Exclude<Region, 'anywhere' | 'header'>, Array<[number, number]>> = { blob: [], manifest: [] };
  let headerPositions: number[] = [];

  beforeAll(async () => {
    const program = await compile(path.join(fixture.dir, fixture.files.onnx!), {
      backend: 'reference',
      inputs: [{ shape: [4, 32] }],
      torchExecutedOps: ['aten.relu.default'],
      minBlockSize: 1,
    });
    try {
      original = program.saveBuffer();
      expected = await program.run(inputs);
    } finally {
      await program.dispose();
    }
    expected.forEach((t, i) => expectClose(t, torchOutputs[i]!, FP32, `mlp output ${i}`));
    // Where each entry's data lies (entries are stored: find them by their bytes).
    const file = Buffer.from(original);
    const { blobs } = readProgramFile(original);
    for (const data of blobs.values()) {
      const at = file.indexOf(Buffer.from(data));
      spans.blob.push([at, at + data.byteLength]);
    }
    const manifestAt = file.indexOf(Buffer.from('{\n  "format"'));
    const manifestEnd = file.indexOf(Buffer.from('}\n'), file.lastIndexOf(Buffer.from('"blobs"'))) + 2;
    spans.manifest.push([manifestAt, manifestEnd]);
    const inData = (i: number): boolean => [...spans.blob, ...spans.manifest].some(([a, b]) => i >= a && i < b);
    headerPositions = [...Array(original.length).keys()].filter((i) => !inData(i));
    expect(headerPositions.length).toBeGreaterThan(200);
  }, 60_000);

  function variants(): Variant[] {
    const rng = new Random(0x7274_7470);
    const out: Variant[] = [];
    const n = original.length;
    const pos = (region: Region): number => {
      if (region === 'anywhere') return rng.int(0, n - 1);
      if (region === 'header') return headerPositions[rng.int(0, headerPositions.length - 1)]!;
      const list = spans[region];
      const [a, b] = list[rng.int(0, list.length - 1)]!;
      return rng.int(a, b - 1);
    };
    const regions: Region[] = ['blob', 'manifest', 'header', 'anywhere'];
    const raw = (label: string, f: (b: Uint8Array) => Uint8Array): void => {
      out.push({ label, bytes: f(new Uint8Array(original)), raw: true });
    };
    for (const region of regions) {
      for (let k = 0; k < 150; k++) {
        const at = pos(region);
        const bit = 1 << rng.int(0, 7);
        raw(`flip bit ${bit} at ${at} (${region})`, (b) => ((b[at] ^= bit), b));
      }
      for (let k = 0; k < 100; k++) {
        const at = pos(region);
        const value = [0, 0xff, rng.int(0, 255), 0x50, 0x4b][rng.int(0, 4)]!;
        raw(`set byte ${at} (${region}) to ${value}`, (b) => ((b[at] = value), b));
      }
      for (let k = 0; k < 30; k++) {
        const at = pos(region);
        const length = rng.int(1, 24);
        const junk = Uint8Array.from({ length }, () => rng.int(0, 255));
        raw(`insert ${length} bytes at ${at} (${region})`, (b) => Buffer.concat([b.subarray(0, at), junk, b.subarray(at)]));
      }
      for (let k = 0; k < 30; k++) {
        const at = pos(region);
        const length = rng.int(1, 64);
        raw(`delete ${length} bytes at ${at} (${region})`, (b) => Buffer.concat([b.subarray(0, at), b.subarray(Math.min(n, at + length))]));
      }
      for (let k = 0; k < 20; k++) {
        const at = pos(region);
        const from = rng.int(0, n - 64);
        const length = rng.int(2, 64);
        raw(`copy ${length} bytes from ${from} over ${at} (${region})`, (b) => {
          const c = new Uint8Array(b);
          c.set(b.subarray(from, from + length).subarray(0, n - at), at);
          return c;
        });
      }
      for (let k = 0; k < 20; k++) {
        const count = rng.int(2, 8);
        const ats = Array.from({ length: count }, () => pos(region));
        raw(`${count} random bytes (${region}) at ${ats.join(',')}`, (b) => {
          for (const at of ats) b[at] = rng.int(0, 255);
          return b;
        });
      }
    }
    for (let k = 0; k < 100; k++) {
      const length = rng.int(0, n - 1);
      raw(`truncate to ${length}`, (b) => b.slice(0, length));
    }
    for (let k = 0; k < 20; k++) {
      const length = rng.int(1, 40);
      const junk = Uint8Array.from({ length }, () => rng.int(0, 255));
      raw(`append ${length} bytes`, (b) => Buffer.concat([b, junk]));
      raw(`prepend ${length} bytes`, (b) => Buffer.concat([junk, b]));
    }

    // Manifest edits that keep the zip valid.
    const { manifest, blobs } = readProgramFile(original);
    const paths: Array<Array<string | number>> = [];
    const walk = (x: unknown, p: Array<string | number>): void => {
      paths.push(p);
      if (Array.isArray(x)) x.forEach((v, i) => walk(v, [...p, i]));
      else if (typeof x === 'object' && x !== null) for (const [k, v] of Object.entries(x)) walk(v, [...p, k]);
    };
    walk(manifest, []);
    const strings = paths.map((p) => p.reduce<unknown>((o, k) => (o as Record<string, unknown>)[k], manifest)).filter((v): v is string => typeof v === 'string');
    const replacements: unknown[] = [null, 0, -1, 1.5, 1e300, 4, 2 ** 53, '', 'x', [], {}, true, '9.0', { major: 9, minor: 0 }];
    for (let k = 0; k < 500; k++) {
      const m = structuredClone(manifest) as unknown as Record<string, unknown>;
      const p = paths[rng.int(1, paths.length - 1)]!;
      const parent = p.slice(0, -1).reduce<unknown>((o, key) => (o as Record<string, unknown>)[key], m) as Record<string | number, unknown>;
      const key = p[p.length - 1]!;
      const current = parent[key];
      const op = rng.int(0, 5);
      let label: string;
      if (op === 0) {
        if (Array.isArray(parent)) parent.splice(key as number, 1);
        else delete parent[key];
        label = `delete ${p.join('.')}`;
      } else if (op === 1) {
        parent[key] = replacements[rng.int(0, replacements.length - 1)];
        label = `replace ${p.join('.')} with ${JSON.stringify(parent[key])}`;
      } else if (op === 2) {
        parent[key] = strings[rng.int(0, strings.length - 1)];
        label = `replace ${p.join('.')} with the string ${JSON.stringify(parent[key])}`;
      } else if (op === 3 && typeof current === 'number') {
        parent[key] = current + [1, -1, 0.5, 100][rng.int(0, 3)]!;
        label = `nudge ${p.join('.')} to ${String(parent[key])}`;
      } else if (op === 4 && Array.isArray(current) && current.length > 0) {
        const i = rng.int(0, current.length - 1);
        current.splice(rng.int(0, current.length), 0, structuredClone(current[i]));
        label = `duplicate ${p.join('.')}[${i}]`;
      } else {
        if (typeof current === 'object' && current !== null && !Array.isArray(current)) (current as Record<string, unknown>).unexpected = 1;
        else parent[key] = [current];
        label = `wrap or extend ${p.join('.')}`;
      }
      out.push({ label, bytes: packProgramFile(m, blobs), raw: false });
    }
    return out;
  }

  test('about 2,000 variants: typed errors or the right answer, never a crash or a hang', async () => {
    const all = variants();
    expect(all.length).toBeGreaterThanOrEqual(2000);
    const outcomes = new Map<string, number>();
    const count = (key: string): void => void outcomes.set(key, (outcomes.get(key) ?? 0) + 1);
    const failures: string[] = [];
    let slowest = 0;
    for (const v of all) {
      const kind = v.raw ? 'raw' : 'manifest';
      const started = Date.now();
      let program;
      try {
        program = await loadProgramBuffer(v.bytes);
      } catch (error) {
        if (!(error instanceof TensorRTNodeError) || !LOAD_CODES.has(error.code)) failures.push(`${v.label}: load threw ${String(error)}`);
        else if (!/^(program buffer: |Unable to deserialize program: )/.test(error.message)) failures.push(`${v.label}: message does not name the file: ${error.message}`);
        count(`${kind} refused (${error instanceof TensorRTNodeError ? error.code : 'untyped'})`);
        slowest = Math.max(slowest, Date.now() - started);
        continue;
      }
      try {
        const actual = await program.run(inputs);
        if (same(actual, expected)) count(`${kind} loaded, right answer`);
        else failures.push(`${v.label}: loaded and gave a wrong answer`);
      } catch (error) {
        // Only a coherent manifest edit (e.g. an input's declared shape) may make run() refuse, and then with a typed error.
        if (v.raw || !(error instanceof TensorRTNodeError) || error.code === 'E_INTERNAL') failures.push(`${v.label}: loaded, then run threw ${String(error)}`);
        else count(`manifest loaded, run refused (${error.code})`);
      } finally {
        await program.dispose();
      }
      slowest = Math.max(slowest, Date.now() - started);
    }
    process.stdout.write(`program file mutations: ${all.length} variants; slowest ${slowest} ms\n${[...outcomes].map(([k, v]) => `  ${k}: ${v}`).join('\n')}\n`);
    expect(failures).toEqual([]);
    // No timing assertion here (unit tests run on loaded machines): hangs are the fuzz
    // harness's job, which bounds each input by CPU time in a child (docs/fuzzing.md).
    // Harmless damage exists (e.g. a time stamp in a header): some raw variants must load.
    expect(outcomes.get('raw loaded, right answer') ?? 0).toBeGreaterThan(0);
  }, 600_000);

  test('blob damage re-zipped with valid CRCs reaches the SHA-256 check, which names the blob', async () => {
    const { manifest, blobs } = readProgramFile(original);
    // The control: the same entries re-zipped unchanged load and give the same answer.
    const control = await loadProgramBuffer(packProgramFile(manifest, blobs));
    try {
      expect(same(await control.run(inputs), expected)).toBe(true);
    } finally {
      await control.dispose();
    }
    const rng = new Random(0x5348_4132);
    // Same-length damage must reach the SHA-256 check; a length change is caught by the size check before it.
    const damage: Array<[string, (b: Uint8Array) => Uint8Array]> = [];
    for (let k = 0; k < 40; k++) {
      const where = rng.next();
      const bit = 1 << rng.int(0, 7);
      damage.push([`flip bit ${bit} at ${where.toFixed(3)}`, (b) => ((b[Math.floor(where * b.length)] ^= bit), b)]);
    }
    for (let k = 0; k < 10; k++) {
      const where = rng.next();
      const value = rng.int(1, 255);
      damage.push([`set byte at ${where.toFixed(3)} to ~its value`, (b) => ((b[Math.floor(where * b.length)] = ~b[Math.floor(where * b.length)]! & 0xff), b)]);
      damage.push([`add ${value} to the byte at ${where.toFixed(3)}`, (b) => ((b[Math.floor(where * b.length)] += value), b)]);
    }
    damage.push(['reverse the bytes', (b) => b.reverse()]);
    const resized: Array<[string, (b: Uint8Array) => Uint8Array]> = [
      ['truncate to half', (b) => b.slice(0, b.length >> 1)],
      ['append a byte', (b) => Buffer.concat([b, Buffer.of(0)])],
      ['delete the first byte', (b) => b.slice(1)],
    ];
    const wrong: string[] = [];
    let bySha = 0;
    for (const name of blobs.keys()) {
      const escaped = name.replace(/\./g, '\\.');
      const sha = new RegExp(`^program buffer: blob "${escaped}" is corrupt: its SHA-256 is [0-9a-f]{64}, the manifest says ${manifest.blobs[name]!.sha256}$`);
      const size = new RegExp(`^program buffer: blob "${escaped}" is corrupt: \\d+ bytes, the manifest says ${manifest.blobs[name]!.bytes}$`);
      for (const [list, want] of [[damage, sha], [resized, size]] as const) {
        for (const [label, f] of list) {
          const mutated = new Map(blobs);
          const before = blobs.get(name)!;
          const after = f(new Uint8Array(before));
          expect(Buffer.from(after).equals(Buffer.from(before))).toBe(false);
          mutated.set(name, after);
          const error = await loadProgramBuffer(packProgramFile(manifest, mutated)).then(
            async (p) => (await p.dispose(), null),
            (e: unknown) => e,
          );
          if (error instanceof BadProgramError && want.test(error.message) && (error.details as { blob?: string }).blob === name) {
            if (want === sha) bySha++;
          } else wrong.push(`${name}, ${label}: ${error === null ? 'loaded' : String(error)}`);
        }
      }
    }
    expect(wrong).toEqual([]);
    expect(blobs.size).toBe(3);
    expect(bySha).toBe(blobs.size * damage.length);
  });
});
