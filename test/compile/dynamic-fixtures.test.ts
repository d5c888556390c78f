/**
 * Dynamic shapes end to end: each fixture is compiled ONCE with run-time dims
 * (optimization profiles from the model's range_constraints or from settings.inputs), then
 * run through the program's worker at every size PyTorch stored for it (compared with
 * PyTorch's outputs) and at the profile bounds (compared with the interpreter running the
 * model as loaded).
 *
 * What the fixtures allow:
 * - encoder .pt2: batch (s23 ∈ [1, 16]) and sequence (s27 ∈ [2, 128]) are both dynamic.
 * - encoder .onnx: the TorchScript exporter baked the sequence length 16 into the attention
 *   reshapes (Reshape to [16, batch*4, 16]), so the ONNX graph is only valid at seq = 16:
 *   its `seq` dim_param is fixed by a range of one value (and thereby specialized), batch is
 *   dynamic.
 * - mlp: batch dynamic (.pt2: s77 ∈ [1, 64] from the model; .onnx: dim_param `batch`,
 *   unbounded in the model, given as a range).
 * - mobilenet_v3_small: batch dynamic (.pt2: s77 ∈ [1, 64]; .onnx: dim_param `batch`, given
 *   as a range); PyTorch stored batch 2 and batch 5. Convolution, batch norm and pooling
 *   convert with their dynamic-batch converters: zero fallback (tested below).
 * - llama_rotary_complex_input_dynamic (.pt2 only): sequence s25 ∈ [2, 64] shared by `x`
 *   and the complex `freqs_cis` (lowered to real carriers by lib/lowering/complex/).
 */
import * as fs from 'node:fs';
import * as path from 'node:path';

import { compile, type CompileSettings } from '../../lib/compile';
import { loadModel } from '../../lib/compile/load-model';
import { ShapeOutOfRangeError } from '../../lib/errors';
import { interpret } from '../../lib/interpreter';
import type { Program } from '../../lib/runtime/program';
import { loadProgramBuffer } from '../../lib/runtime/program-file';
import { Tensor } from '../../lib/ir/tensor';
import { expectClose, FP32 } from '../helpers/compare';
import { loadFixture } from '../helpers/fixtures';
import { closeOrt, runOrtModel } from '../helpers/ort-single-op';
import { withDynamicBatch } from '../conversion/dynamic-batch-helpers';
import { Random } from '../helpers/random';

afterAll(() => closeOrt());

const rng = new Random(4242);

interface Case {
  fixture: string;
  format: 'pt2' | 'onnx';
  settings: CompileSettings;
  /** Inputs at the profile bounds (and in between), compared with the interpreter. */
  bounds: () => Tensor[][];
  /** engine segments expected (fallback segments: none). */
  segments: number;
}

const ids = (batch: number, seq: number): Tensor[] => [rng.intTensor([batch, seq], 0, 999)];
const llama = (seq: number): Tensor[] => [rng.tensor([1, seq, 64]), Tensor.from('complex64', [seq, 8], rng.floats(seq * 16))];

const CASES: Case[] = [
  { fixture: 'mlp', format: 'pt2', settings: {}, bounds: () => [1, 64, 17].map((n) => [rng.tensor([n, 32])]), segments: 1 },
  {
    fixture: 'mlp',
    format: 'onnx',
    settings: { inputs: { input0: { min: [1, 32], opt: [8, 32], max: [64, 32] } } },
    bounds: () => [1, 64, 17].map((n) => [rng.tensor([n, 32])]),
    segments: 1,
  },
  {
    fixture: 'encoder',
    format: 'pt2',
    settings: {},
    bounds: () => [ids(1, 2), ids(16, 128), ids(3, 33)],
    segments: 1,
  },
  {
    fixture: 'encoder',
    format: 'onnx',
    settings: { inputs: { input0: { min: [1, 16], max: [16, 16] } } },
    bounds: () => [ids(1, 16), ids(16, 16), ids(5, 16)],
    segments: 1,
  },
  {
    fixture: 'llama_rotary_complex_input_dynamic',
    format: 'pt2',
    settings: {},
    bounds: () => [llama(2), llama(64), llama(37)],
    segments: 1,
  },
];

describe.each(CASES.map((c) => [`${c.fixture} (.${c.format})`, c] as const))('%s, compiled once with run-time dims', (_label, c) => {
  const fixture = loadFixture(c.fixture);
  const file = path.join(fixture.dir, fixture.files[c.format]!);
  let program: Program;
  const logs: string[] = [];

  beforeAll(async () => {
    program = await compile(file, { backend: 'reference', ...c.settings, logger: (level, message) => logs.push(`${level}: ${message}`) });
  }, 120_000);
  afterAll(() => program?.dispose());

  test('every op runs in an engine segment, with _dyn variants where shapes are computed', () => {
    const refused = program.report.ops.filter((o) => !o.converted);
    expect(refused.map((o) => `${o.node} (${o.target}): ${o.reasons.join('; ')}`)).toEqual([]);
    expect(program.report.segments.map((s) => s.kind)).toEqual(new Array(c.segments).fill('engine'));
    expect(program.inputs.some((io) => io.shape.some((d) => typeof d !== 'number'))).toBe(true);
  });

  test('matches PyTorch at every size stored in the fixture', async () => {
    for (const [k, { inputs, outputs }] of fixture.cases.entries()) {
      const actual = await program.run(inputs);
      actual.forEach((t, i) => expectClose(t, outputs[i]!, FP32, `${c.fixture} case ${k} output ${i}`));
    }
  }, 120_000);

  test('matches the interpreter at the profile bounds', async () => {
    const graph = loadModel(file);
    for (const inputs of c.bounds()) {
      const expected = interpret(graph, inputs);
      const actual = await program.run(inputs);
      actual.forEach((t, i) => expectClose(t, expected[i]!, FP32, `${c.fixture} at [${inputs[0]!.shape.join(', ')}] output ${i}`));
    }
  }, 120_000);
});

describe.each(['pt2', 'onnx'] as const)('mobilenet_v3_small (.%s), compiled once with a run-time batch', (format) => {
  const fixture = loadFixture('mobilenet_v3_small');
  const file = path.join(fixture.dir, fixture.files[format]!);
  let program: Program;
  beforeAll(async () => {
    const settings: CompileSettings = format === 'onnx' ? { inputs: { input0: { min: [1, 3, 96, 96], opt: [2, 3, 96, 96], max: [8, 3, 96, 96] } } } : {};
    program = await compile(file, { backend: 'reference', ...settings });
  }, 120_000);
  afterAll(() => program?.dispose());

  test('the batch stays a run-time dim; every op runs in one engine segment, convolutions by their dynamic converter', () => {
    expect(program.inputs[0]!.shape.map((d) => typeof d === 'number')).toEqual([false, true, true, true]);
    expect(program.report.ops.filter((o) => !o.converted).map((o) => `${o.node} (${o.target}): ${o.reasons.join('; ')}`)).toEqual([]);
    expect(program.report.segments.map((s) => s.kind)).toEqual(['engine']);
    const conv = program.report.ops.filter((o) => o.target === 'aten.convolution.default');
    expect(conv.length).toBe(52);
    for (const o of conv) expect(o.converter).toBe('aten.convolution.default (dynamic)');
  });

  test('matches PyTorch at batch 2 and batch 5 (the stored cases) from one program', async () => {
    expect(fixture.cases.map((c) => c.inputs[0]!.shape[0])).toEqual([2, 5]);
    for (const [k, { inputs, outputs }] of fixture.cases.entries()) {
      const actual = await program.run(inputs);
      actual.forEach((t, i) => expectClose(t, outputs[i]!, FP32, `mobilenet case ${k} output ${i}`));
    }
  }, 120_000);

  test('batch 7 equals the same program run on each image alone (batch 1), and onnxruntime on the .onnx', async () => {
    const x = rng.tensor([7, 3, 96, 96]);
    const [y] = await program.run([x]);
    const image = 3 * 96 * 96;
    const rows: number[] = [];
    for (let b = 0; b < 7; b++) {
      const one = Tensor.from('float32', [1, 3, 96, 96], (x.data as Float32Array).subarray(b * image, (b + 1) * image));
      const [r] = await program.run([one]);
      rows.push(...(r!.data as Float32Array));
    }
    expectClose(y!, Tensor.from('float32', [7, 100], rows), FP32, 'batch 7 vs 7 x batch 1');
    const [ort] = await runOrtModel(new Uint8Array(fs.readFileSync(path.join(fixture.dir, fixture.files.onnx!))), [x]);
    expectClose(y!, ort!, FP32, `mobilenet (.${format}) batch 7 vs onnxruntime`);
  }, 120_000);
});

describe('squeezenet1_1 (.onnx) with its batch dim renamed to a dim_param, compiled once for batch 1..8', () => {
  // The export has a static batch of 1; its graph (Conv, Relu, MaxPool, Concat,
  // GlobalAveragePool, Flatten) bakes no batch size in, so renaming the input's dim 0 makes
  // it a dynamic-batch model (onnxruntime runs it as such).
  const fixture = loadFixture('squeezenet1_1');
  const model = withDynamicBatch(new Uint8Array(fs.readFileSync(path.join(fixture.dir, fixture.files.onnx!))));
  let program: Program;
  beforeAll(async () => {
    program = await compile(model, { backend: 'reference', inputs: { input0: { min: [1, 3, 64, 64], max: [8, 3, 64, 64] } } });
  }, 120_000);
  afterAll(() => program?.dispose());

  test('zero fallback; matches PyTorch at the stored batch 1 and onnxruntime at batch 6', async () => {
    expect(program.report.ops.filter((o) => !o.converted).map((o) => `${o.node} (${o.target}): ${o.reasons.join('; ')}`)).toEqual([]);
    expect(program.report.segments.map((s) => s.kind)).toEqual(['engine']);
    const [{ inputs, outputs }] = fixture.cases;
    expectClose((await program.run(inputs))[0]!, outputs[0]!, FP32, 'squeezenet batch 1 vs PyTorch');
    const x = rng.tensor([6, 3, 64, 64]);
    expectClose((await program.run([x]))[0]!, (await runOrtModel(model, [x]))[0]!, FP32, 'squeezenet batch 6 vs onnxruntime');
  }, 120_000);
});

describe('reports and errors', () => {
  test('the encoder report lists, per segment, the ops that run as _dyn variants', async () => {
    const fixture = loadFixture('encoder');
    const program = await compile(path.join(fixture.dir, 'model.pt2'), { backend: 'reference' });
    try {
      const dyn = program.report.segments[0]!.dynamicOps!;
      expect(dyn).toContainEqual({ node: 'sym_size_int_4', target: 'aten.sym_size.int', variant: 'trt.size_dyn' });
      expect(dyn).toContainEqual({ node: 'mul_3', target: 'sym.mul', variant: 'trt.sym_mul_dyn' });
      expect(dyn).toContainEqual({ node: 'view_3', target: 'aten.view.default', variant: 'trt.reshape_dyn' });
      expect(dyn.filter((d) => d.variant === 'trt.reshape_dyn')).toHaveLength(22); // 11 views per layer
    } finally {
      await program.dispose();
    }
  });

  test('a run-time shape outside the compiled range is E_SHAPE_OUT_OF_RANGE naming the input, dim and range', async () => {
    const fixture = loadFixture('llama_rotary_complex_input_dynamic');
    const program = await compile(path.join(fixture.dir, 'model.pt2'), { backend: 'reference' });
    try {
      const error = await program.run(llama(65)).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ShapeOutOfRangeError);
      expect((error as ShapeOutOfRangeError).code).toBe('E_SHAPE_OUT_OF_RANGE');
      expect((error as Error).message).toBe('input "x" dim 1 (s25) must be in [2, 64], got 65');
      expect((error as ShapeOutOfRangeError).details).toMatchObject({ input: 'x', dim: 1, min: 2, max: 64, value: 65 });
    } finally {
      await program.dispose();
    }
  });

  test('llama with its complex multiplies forced to fallback: SymInts and profiles cross segments', async () => {
    const fixture = loadFixture('llama_rotary_complex_input_dynamic');
    const program = await compile(path.join(fixture.dir, 'model.pt2'), { backend: 'reference', torchExecutedOps: ['trt.complex_mul'], minBlockSize: 1 });
    try {
      expect(program.report.segments.map((s) => s.kind)).toEqual(['engine', 'fallback', 'engine', 'fallback', 'engine', 'fallback', 'engine', 'fallback', 'engine']);
      for (const { inputs, outputs } of fixture.cases) {
        const [y] = await program.run(inputs);
        expectClose(y!, outputs[0]!, FP32, `seq ${inputs[0]!.shape[1]}`);
      }
    } finally {
      await program.dispose();
    }
  }, 120_000);

  test('a saved dynamic program keeps its profiles and ranges', async () => {
    const fixture = loadFixture('mlp');
    const file = path.join(fixture.dir, 'model.pt2');
    const compiled = await compile(file, { backend: 'reference' });
    const bytes = compiled.saveBuffer();
    await compiled.dispose();
    const program = await loadProgramBuffer(bytes);
    try {
      const graph = loadModel(file);
      for (const n of [1, 64]) {
        const x = rng.tensor([n, 32]);
        expectClose((await program.run([x]))[0]!, interpret(graph, [x])[0]!, FP32, `batch ${n}`);
      }
      const error = await program.run([rng.tensor([65, 32])]).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ShapeOutOfRangeError);
      expect((error as Error).message).toBe('input "x" dim 0 (s77) must be in [1, 64], got 65');
    } finally {
      await program.dispose();
    }
  });

  test('several optimization profiles: one engine serves both ranges; between them nothing fits', async () => {
    const fixture = loadFixture('mlp');
    const program = await compile(path.join(fixture.dir, 'model.onnx'), {
      backend: 'reference',
      inputs: {
        input0: {
          profiles: [
            { min: [1, 32], opt: [4, 32], max: [8, 32] },
            { min: [16, 32], max: [64, 32] },
          ],
        },
      },
    });
    try {
      const graph = loadModel(path.join(fixture.dir, 'model.onnx'));
      for (const n of [1, 8, 16, 64]) {
        const x = rng.tensor([n, 32]);
        expectClose((await program.run([x]))[0]!, interpret(graph, [x])[0]!, FP32, `batch ${n}`);
      }
      const gap = await program.run([rng.tensor([12, 32])]).catch((e: unknown) => e);
      expect(gap).toBeInstanceOf(ShapeOutOfRangeError);
      expect((gap as Error).message).toMatch(/^input "input0" dim 0 is 12, outside the optimization profile's range \[1, 8\] \(no optimization profile fits: .*profile 1 needs "input0" dim 0 in \[16, 64\]\)/);
      const above = await program.run([rng.tensor([65, 32])]).catch((e: unknown) => e);
      expect((above as Error).message).toBe('input "input0" dim 0 (batch) must be in [1, 64], got 65');
    } finally {
      await program.dispose();
    }
  });
});
