/**
 * The optimization profiles of a program's dynamic inputs (min/opt/max shapes per profile):
 * compile() records them on `program.inputs`, program files (format 1.2) keep them, and a
 * loaded program has them back; malformed ones are E_BAD_PROGRAM naming the field. Files of
 * format 1.1, which did not record them, still load and run, their inputs without profiles.
 */
import * as path from 'node:path';

import { formatInspectReport, inspectProgramBytes } from '../../lib/cli/inspect-command';
import { compile } from '../../lib/compile';
import { BadProgramError } from '../../lib/errors';
import { call } from '../../lib/ir/builder';
import { Graph, tensorType } from '../../lib/ir/graph';
import { sym } from '../../lib/ir/symbolic';
import { Tensor } from '../../lib/ir/tensor';
import type { Program } from '../../lib/runtime/program';
import { checkFormatVersion, loadProgramBuffer, packProgramFile, readProgramFile } from '../../lib/runtime/program-file';
import { rejection } from '../helpers/errors';
import { asFormat11ProgramFile, rawManifest } from '../helpers/legacy-program-file';

const FIXTURES = path.join(__dirname, '..', 'fixtures');
const MLP = path.join(FIXTURES, 'mlp', 'model.onnx');
const ENCODER = path.join(FIXTURES, 'encoder', 'model.onnx');

/** input0 int64[batch, seq] in two profiles; the second leaves opt to the max. */
const TWO_PROFILES = { input0: { profiles: [{ min: [1, 4], opt: [2, 8], max: [2, 16] }, { min: [3, 4], max: [4, 32] }] } };
const RECORDED = [
  { min: [1, 4], opt: [2, 8], max: [2, 16] },
  { min: [3, 4], opt: [4, 32], max: [4, 32] },
];

let encoder: Program;
let mlp: Program;
beforeAll(async () => {
  encoder = await compile(ENCODER, { backend: 'reference', inputs: TWO_PROFILES });
  mlp = await compile(MLP, { backend: 'reference', inputs: { input0: { min: [1, 32], opt: [8, 32], max: [32, 32] } } });
}, 120_000);
afterAll(async () => {
  await encoder?.dispose();
  await mlp?.dispose();
});

type Json = Record<string, unknown>;

/** The file of `program` with its manifest changed by `edit` (blobs untouched). */
function edited(program: Program, edit: (m: Json & { inputs: Json[]; outputs: Json[] }) => void): Uint8Array {
  const { manifest, blobs } = readProgramFile(program.saveBuffer());
  const m = structuredClone(manifest) as unknown as Json & { inputs: Json[]; outputs: Json[] };
  edit(m);
  return packProgramFile(m, blobs);
}

describe('compiled and saved', () => {
  test('program.inputs carries every profile, opt defaulted to the max where not given; outputs and static inputs have none', async () => {
    expect(encoder.inputs[0]!.profiles).toEqual(RECORDED);
    expect(encoder.outputs[0]!.profiles).toBeUndefined();
    const fixed = await compile(MLP, { backend: 'reference', inputs: { input0: { shape: [4, 32] } } });
    try {
      expect(fixed.inputs[0]).not.toHaveProperty('profiles');
      expect(rawManifest(fixed.saveBuffer()).inputs[0]).not.toHaveProperty('profiles');
    } finally {
      await fixed.dispose();
    }
  });

  test('the file holds them on the input, and a loaded program has them back; saving it again gives the same bytes', async () => {
    const bytes = encoder.saveBuffer();
    const raw = rawManifest(bytes);
    expect(raw.formatVersion).toBe('1.3');
    expect(raw.inputs[0]!.profiles).toEqual(RECORDED);
    expect(raw.inputs[0]).not.toHaveProperty('extra');
    const loaded = await loadProgramBuffer(bytes);
    try {
      expect(loaded.inputs[0]!.profiles).toEqual(RECORDED);
      expect(String(loaded.inputs[0])).toBe('input0: int64[batch, seq]');
      expect(Buffer.from(loaded.saveBuffer()).equals(Buffer.from(bytes))).toBe(true);
    } finally {
      await loaded.dispose();
    }
  });

  test('program.inputs gives copies: changing them changes neither the program nor its file', () => {
    const before = encoder.saveBuffer();
    encoder.inputs[0]!.profiles![0]!.opt[0] = 99;
    expect(encoder.data.inputs[0]!.profiles).toEqual(RECORDED);
    expect(Buffer.from(encoder.saveBuffer()).equals(Buffer.from(before))).toBe(true);
  });

  test('inspect shows each run-time dim with its range and opt, per profile, in text and JSON', async () => {
    const one = await inspectProgramBytes(mlp.saveBuffer(), 'mlp.trtp', 'program file "mlp.trtp"', []);
    expect(one.inputs[0]).toMatchObject({
      shape: '[batch, 32]',
      profiles: [{ min: [1, 32], opt: [8, 32], max: [32, 32] }],
      ranges: [{ dim: 'batch', axes: [0], profiles: [{ min: 1, opt: 8, max: 32 }] }],
    });
    expect(one.outputs[0]).not.toHaveProperty('ranges');
    expect(formatInspectReport(one)).toContain('\n  input0: float32[batch, 32]  batch: 1..32 (opt 8)\n');

    const two = await inspectProgramBytes(encoder.saveBuffer(), 'enc.trtp', 'program file "enc.trtp"', []);
    expect(two.inputs[0]!.ranges).toEqual([
      { dim: 'batch', axes: [0], profiles: [{ min: 1, opt: 2, max: 2 }, { min: 3, opt: 4, max: 4 }] },
      { dim: 'seq', axes: [1], profiles: [{ min: 4, opt: 8, max: 16 }, { min: 4, opt: 32, max: 32 }] },
    ]);
    expect(formatInspectReport(two)).toContain(
      ['  input0: int64[batch, seq]', '    profile 0: batch: 1..2 (opt 2), seq: 4..16 (opt 8)', '    profile 1: batch: 3..4 (opt 4), seq: 4..32 (opt 32)'].join('\n'),
    );
  });
});

describe('format 1.1 files (no profiles)', () => {
  test('load, run and save as before, their inputs without profiles; inspect shows the symbols\' ranges without an opt', async () => {
    const old = asFormat11ProgramFile(mlp.saveBuffer());
    expect(rawManifest(old).formatVersion).toBe('1.1');
    expect(rawManifest(old).inputs[0]).not.toHaveProperty('profiles');
    const loaded = await loadProgramBuffer(old);
    try {
      expect(loaded.inputs[0]).not.toHaveProperty('profiles');
      const x = Tensor.from('float32', [3, 32], Array.from({ length: 96 }, (_, i) => Math.cos(i)));
      const [a] = await mlp.run([x]);
      const [b] = await loaded.run([x]);
      expect([...b!.data]).toEqual([...a!.data]);
      // It had no profiles to lose: saved again, a 1.2 file without them.
      const again = rawManifest(loaded.saveBuffer());
      expect(again.formatVersion).toBe('1.3');
      expect(again.inputs[0]).not.toHaveProperty('profiles');
    } finally {
      await loaded.dispose();
    }
    const report = await inspectProgramBytes(old, 'old.trtp', 'program file "old.trtp"', []);
    expect(report.formatVersion).toBe('1.1');
    expect(report.inputs[0]!.ranges).toEqual([{ dim: 'batch', axes: [0], profiles: [{ min: 1, max: 32 }] }]);
    expect(formatInspectReport(report)).toContain('\n  input0: float32[batch, 32]  batch: 1..32\n');
  });

  test('a 1.1 reader refuses a 1.2 file by its version, and a 1.1 file holding profiles is refused', async () => {
    expect(() => checkFormatVersion(rawManifest(mlp.saveBuffer()).formatVersion, 'program file "m.trtp"', '0.2.0', { major: 1, minor: 1 })).toThrow(
      /format version 1\.3 is newer than this tensorrt-node \(.*\) reads \(up to 1\.1\)/,
    );
    const forged = edited(mlp, (m) => {
      m.formatVersion = '1.1';
    });
    const error = await rejection(loadProgramBuffer(forged, {}, 'program file "f.trtp"'));
    expect(error).toBeInstanceOf(BadProgramError);
    expect(error.message).toBe('program file "f.trtp": inputs[0].profiles: format 1.1 files have no profiles (they came with format 1.2)');
  });
});

describe('malformed profiles are E_BAD_PROGRAM naming the field', () => {
  const cases: Array<[string, (m: Json & { inputs: Json[]; outputs: Json[] }) => void, string]> = [
    ['opt above max', (m) => ((m.inputs[0]!.profiles as Json[])[0]!.opt = [64, 32]), 'inputs[0].profiles[0]: dim 0 (batch) has min 1, opt 64, max 32, not min <= opt <= max'],
    ['a wrong rank', (m) => ((m.inputs[0]!.profiles as Json[])[0]!.min = [1]), 'inputs[0].profiles[0].min has 1 dims, the input 2 [batch, 32]'],
    ['a static dim that differs', (m) => ((m.inputs[0]!.profiles as Json[])[0]!.max = [32, 16]), 'inputs[0].profiles[0]: dim 1 is 32, but the profile gives min 32, opt 32, max 16'],
    ['a negative size', (m) => ((m.inputs[0]!.profiles as Json[])[0]!.min = [-1, 32]), 'inputs[0].profiles[0].min[0] is not a non-negative integer (got -1)'],
    ['a missing opt', (m) => delete (m.inputs[0]!.profiles as Json[])[0]!.opt, 'inputs[0].profiles[0]'],
    ['an empty list', (m) => (m.inputs[0]!.profiles = []), 'inputs[0].profiles is empty (an input without run-time dims has no profiles)'],
    ['profiles on an output', (m) => (m.outputs[0]!.profiles = m.inputs[0]!.profiles), 'outputs[0].profiles: outputs have no optimization profiles'],
    [
      'a range outside the symbol\'s',
      (m) => ((m.inputs[0]!.profiles as Json[])[0]!.max = [33, 32]),
      'inputs[0].profiles[0]: dim 0 (batch) ranges over [1, 33], outside the symbol\'s range [1, 32]',
    ],
  ];
  test.each(cases)('%s', async (_, edit, message) => {
    const error = await rejection(loadProgramBuffer(edited(mlp, edit), {}, 'program file "bad.trtp"'));
    expect(error).toBeInstanceOf(BadProgramError);
    expect((error as BadProgramError).code).toBe('E_BAD_PROGRAM');
    expect(error.message).toContain(`program file "bad.trtp": ${message}`);
  });

  test('inputs with different numbers of profiles', async () => {
    // x and y share the batch symbol, so both carry both profiles.
    const g = new Graph('pair');
    g.symbols.set('b', { min: 1, max: 64 });
    const x = g.addInput('x', tensorType('float32', [sym('b'), 4]));
    const y = g.addInput('y', tensorType('float32', [sym('b'), 4]));
    g.setOutputs([call(g, 'aten.add.Tensor', { self: x, other: y }).output], ['z']);
    const pair = await compile(g, { backend: 'reference', minBlockSize: 1, inputs: { x: { profiles: [{ min: [1, 4], opt: [2, 4], max: [4, 4] }, { min: [5, 4], opt: [8, 4], max: [16, 4] }] } } });
    try {
      expect(pair.inputs.map((io) => io.profiles)).toEqual([pair.inputs[0]!.profiles, pair.inputs[0]!.profiles]);
      expect(pair.inputs[1]!.profiles).toHaveLength(2);
      const bytes = edited(pair, (m) => ((m.inputs[1]!.profiles as Json[]).length = 1));
      const error = await rejection(loadProgramBuffer(bytes, {}, 'program file "bad.trtp"'));
      expect(error).toBeInstanceOf(BadProgramError);
      expect(error.message).toBe('program file "bad.trtp": inputs[1].profiles lists 1 profiles, inputs[0].profiles 2: every input has one per optimization profile');
    } finally {
      await pair.dispose();
    }
  });
});
