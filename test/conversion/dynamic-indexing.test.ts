/**
 * Gathers, indexing and cumulative sums with run-time dims (the zoo's bert/roberta token-type
 * gather, roberta's position-id cumsum, ONNX Gather on tensors with a dynamic batch): one-op
 * ONNX models whose batch is a dim_param, compiled ONCE for a batch range, run at two
 * batches and compared with onnxruntime-node on the same model; IR graphs where ONNX cannot
 * say it (a gather index smaller than its data) against the interpreter. Nothing may fall back.
 */
import '../../lib/conversion/converters';
import { loadOnnx } from '../../lib/frontends/onnx';
import type { Graph } from '../../lib/ir/graph';
import { interpret } from '../../lib/interpreter';
import { Tensor } from '../../lib/ir/tensor';
import { expectClose, FP32 } from '../helpers/compare';
import { buildSingleOpModel, closeOrt, runOrtModel, type OrtOpSpec } from '../helpers/ort-single-op';
import { Random } from '../helpers/random';
import { DynGraph, compileAndRun } from '../legalization/helpers';
import { withDynamicBatch } from './dynamic-batch-helpers';

const rng = new Random(2003);
const BATCHES = [3, 7];

afterAll(() => closeOrt());

/** Column indices in [-cols, cols) (negative ones count from the end, as ONNX allows). */
const indices = (shape: number[], cols: number): Tensor => rng.intTensor(shape, -cols, cols - 1);

interface Case {
  label: string;
  /** The op for a batch; every fed input has the batch as dim 0. */
  spec: (batch: number) => OrtOpSpec;
  /** compile()'s ranges of the fed inputs (in0, in1...) for batch 1..8. */
  ranges: Record<string, { min: number[]; opt: number[]; max: number[] }>;
  /** Targets that must be converted by their `(dynamic)` converter. */
  targets: string[];
}

const range = (shape: number[]): { min: number[]; opt: number[]; max: number[] } => ({ min: [1, ...shape], opt: [4, ...shape], max: [8, ...shape] });

const CASES: Case[] = [
  {
    label: 'GatherElements axis 1, negative indices (aten.gather.default)',
    spec: (b) => ({ opType: 'GatherElements', inputs: [rng.tensor([b, 5, 4]), indices([b, 3, 4], 5)], attributes: { axis: 1 } }),
    ranges: { in0: range([5, 4]), in1: range([3, 4]) },
    targets: ['aten.gather.default'],
  },
  {
    label: 'GatherElements along the run-time batch axis',
    spec: (b) => ({ opType: 'GatherElements', inputs: [rng.tensor([b, 3]), rng.intTensor([b, 3], 0, b - 1)], attributes: { axis: 0 } }),
    ranges: { in0: range([3]), in1: range([3]) },
    targets: ['aten.gather.default'],
  },
  {
    label: 'CumSum axis 1 (aten.cumsum.default)',
    spec: (b) => ({ opType: 'CumSum', inputs: [rng.tensor([b, 6]), { constant: Tensor.scalar('int64', 1) }] }),
    ranges: { in0: range([6]) },
    targets: ['aten.cumsum.default'],
  },
  {
    label: 'CumSum exclusive, reverse, over the batch (trt.cumsum_onnx)',
    spec: (b) => ({ opType: 'CumSum', inputs: [rng.intTensor([b, 4], -9, 9), { constant: Tensor.scalar('int64', 0) }], attributes: { exclusive: 1, reverse: 1 } }),
    ranges: { in0: range([4]) },
    targets: ['trt.cumsum_onnx'],
  },
  {
    label: 'Gemm with a bias, alpha 0.5 and beta 1.5 on a run-time batch (aten.addmm.default, GPT-2 Conv1D form)',
    spec: (b) => ({
      opType: 'Gemm',
      inputs: [rng.tensor([b, 4]), { constant: rng.tensor([4, 5]) }, { constant: rng.tensor([5]) }],
      attributes: { alpha: 0.5, beta: 1.5 },
    }),
    ranges: { in0: range([4]) },
    targets: ['aten.addmm.default'],
  },
  {
    label: 'Gather axis 1 by a 2-D index table (aten.index.Tensor)',
    spec: (b) => ({ opType: 'Gather', inputs: [rng.tensor([b, 6, 2]), { constant: indices([2, 3], 6) }], attributes: { axis: 1 } }),
    ranges: { in0: range([6, 2]) },
    targets: ['aten.index.Tensor'],
  },
  {
    label: 'Gather axis 2 by run-time indices (aten.index.Tensor)',
    spec: (b) => ({ opType: 'Gather', inputs: [rng.tensor([b, 2, 5]), indices([b, 2], 5)], attributes: { axis: 2 } }),
    ranges: { in0: range([2, 5]), in1: range([2]) },
    targets: ['aten.index.Tensor'],
  },
  {
    label: 'GatherND addressing the run-time batch by negative tuples (trt.gather_nd)',
    spec: (b) => ({ opType: 'GatherND', inputs: [rng.tensor([b, 5, 4]), { constant: Tensor.from('int64', [3, 2], [-1, 4, 0, -5, -1, 0]) }] }),
    ranges: { in0: range([5, 4]) },
    targets: ['trt.gather_nd'],
  },
  {
    label: 'GatherND with a batch dim, run-time positions (trt.gather_nd)',
    spec: (b) => ({ opType: 'GatherND', inputs: [rng.tensor([b, 6, 3]), rng.intTensor([b, 2, 1], -6, 5)], attributes: { batch_dims: 1 } }),
    ranges: { in0: range([6, 3]), in1: range([2, 1]) },
    targets: ['trt.gather_nd'],
  },
  {
    label: 'ScatterND rows of the run-time batch replaced (trt.scatter_nd)',
    spec: (b) => ({ opType: 'ScatterND', inputs: [rng.tensor([b, 4]), { constant: Tensor.from('int64', [2, 1], [-1, 0]) }, { constant: rng.tensor([2, 4]) }] }),
    ranges: { in0: range([4]) },
    targets: ['trt.scatter_nd'],
  },
  {
    label: 'Gather along the run-time batch by negative indices (aten.index.Tensor)',
    spec: (b) => ({ opType: 'Gather', inputs: [rng.tensor([b, 3]), { constant: Tensor.from('int64', [2], [-1, 0]) }], attributes: { axis: 0 } }),
    ranges: { in0: range([3]) },
    targets: ['aten.index.Tensor'],
  },
];

/** Unconverted ops as readable lines (empty: nothing falls back). */
const refused = (program: { report: { ops: ReadonlyArray<{ converted: boolean; node: string; target: string; reasons: readonly string[] }> } }): string[] =>
  program.report.ops.filter((o) => !o.converted).map((o) => `${o.node} (${o.target}): ${o.reasons.join('; ')}`);

/**
 * `graph` compiled once (reference backend) and run at each of `runs`: nothing falls back,
 * `target` is converted by its `(dynamic)` converter, and every output matches the interpreter
 * on the same inputs.
 */
async function expectDynamicMatches(graph: Graph, runs: Tensor[][], target: string): Promise<void> {
  const { program, outputs } = await compileAndRun(graph, { minBlockSize: 1 }, runs);
  expect(refused(program)).toEqual([]);
  expect(program.report.ops.find((o) => o.target === target)!.converter).toBe(`${target} (dynamic)`);
  for (const [r, inputs] of runs.entries()) {
    const [expected] = interpret(graph, inputs);
    expect(outputs[r]![0]!.shape).toEqual(expected!.shape);
    expectClose(outputs[r]![0]!, expected!, FP32, `run ${r}`);
  }
}

describe.each(CASES.map((c) => [c.label, c] as const))('%s', (_label, c) => {
  test('compiled once for batch 1..8: nothing in fallback, (dynamic) converters, matches onnxruntime at two batches', async () => {
    const specs = BATCHES.map((b) => c.spec(b));
    const model = withDynamicBatch(buildSingleOpModel(specs[0]!));
    const runs = specs.map((s) => s.inputs.filter((x): x is Tensor => x instanceof Tensor));
    const { program, outputs } = await compileAndRun(loadOnnx(model), { minBlockSize: 1, inputs: c.ranges }, runs);
    expect(refused(program)).toEqual([]);
    const used = program.report.ops.filter((o) => c.targets.includes(o.target));
    expect(used.map((o) => o.target)).toEqual(expect.arrayContaining(c.targets));
    for (const o of used) expect(o.converter).toBe(`${o.target} (dynamic)`);
    for (const [r, inputs] of runs.entries()) {
      // The constants of the model are those of the first spec: onnxruntime runs that model.
      const [expected] = await runOrtModel(model, inputs);
      expectClose(outputs[r]![0]!, expected!, FP32, `${c.label} batch ${inputs[0]!.shape[0]}`);
    }
  }, 60_000);
});

describe('aten.gather.default with an index smaller than self (IR graphs, against the interpreter)', () => {
  const check = (graph: Graph, runs: Tensor[][]): Promise<void> => expectDynamicMatches(graph, runs, 'aten.gather.default');

  test("bert's token types: a static [1, 16] table gathered by position ids [1, seq]", async () => {
    const g = new DynGraph('token_types', { seq: { min: 1, max: 16 } });
    const table = g.graph.addConstant('token_type_ids', rng.intTensor([1, 16], 0, 1));
    const positions = g.input('positions', 'int64', [1, 'seq']);
    const graph = g.outputs(g.call('aten.gather.default', { self: table, dim: 1, index: positions }).output);
    await check(graph, [[rng.intTensor([1, 8], 0, 15)], [rng.intTensor([1, 13], 0, 15)]]);
  }, 60_000);

  test('self [b, 5] gathered along dim 1 by an index [c, 3] with c <= b: self is cut to c rows at run time', async () => {
    const g = new DynGraph('crop', { b: { min: 1, max: 8 }, c: { min: 1, max: 8 } });
    const self = g.input('self', 'float32', ['b', 5]);
    const index = g.input('index', 'int64', ['c', 3]);
    const graph = g.outputs(g.call('aten.gather.default', { self, dim: 1, index }).output);
    await check(graph, [
      [rng.tensor([6, 5]), rng.intTensor([2, 3], 0, 4)],
      [rng.tensor([3, 5]), rng.intTensor([3, 3], 0, 4)],
    ]);
  }, 60_000);
});

describe('aten.index_select.default with run-time dims (IR graphs, against the interpreter)', () => {
  const check = (graph: Graph, runs: Tensor[][]): Promise<void> => expectDynamicMatches(graph, runs, 'aten.index_select.default');

  test("a static table's rows by run-time position ids, negative ones counted from the end (Falcon's rotary tables)", async () => {
    const g = new DynGraph('rows', { seq: { min: 1, max: 16 } });
    const table = g.graph.addConstant('table', rng.tensor([10, 4]));
    const ids = g.input('ids', 'int64', ['seq']);
    const graph = g.outputs(g.call('aten.index_select.default', { self: table, dim: 0, index: ids }).output);
    await check(graph, [[rng.intTensor([5], -10, 9)], [rng.intTensor([12], -10, 9)]]);
  }, 60_000);

  test('along a run-time axis by negative indices, wrapped by the size read at run time', async () => {
    const g = new DynGraph('batch_rows', { b: { min: 1, max: 8 }, k: { min: 1, max: 4 } });
    const self = g.input('self', 'float32', ['b', 3]);
    const index = g.input('index', 'int64', ['k']);
    const graph = g.outputs(g.call('aten.index_select.default', { self, dim: 0, index }).output);
    await check(graph, [
      [rng.tensor([4, 3]), Tensor.from('int64', [3], [-1, 0, -4])],
      [rng.tensor([7, 3]), Tensor.from('int64', [2], [-7, 6])],
    ]);
  }, 60_000);
});

describe('aten.repeat_interleave.self_int with run-time dims (IR graphs, against the interpreter)', () => {
  const check = (graph: Graph, runs: Tensor[][]): Promise<void> => expectDynamicMatches(graph, runs, 'aten.repeat_interleave.self_int');

  test.each([
    [1, 2],
    [2, 3],
    [-1, 2],
    [null, 2],
  ])('dim %p, %d repeats, over [b, seq, 4] with run-time b and seq', async (dim, repeats) => {
    const g = new DynGraph('interleave', { b: { min: 1, max: 4 }, seq: { min: 1, max: 16 } });
    const self = g.input('self', 'float32', ['b', 'seq', 4]);
    const graph = g.outputs(g.call('aten.repeat_interleave.self_int', { self, repeats, dim, output_size: null }).output);
    await check(graph, [[rng.tensor([2, 5, 4])], [rng.tensor([3, 9, 4])]]);
  }, 60_000);
});

describe('trt.gather_nd addressing run-time dims (IR graphs, against the interpreter)', () => {
  const check = (graph: Graph, runs: Tensor[][]): Promise<void> => expectDynamicMatches(graph, runs, 'trt.gather_nd');

  test('tuples (row, position) into [b, seq, 4], negative components wrapped by the run-time sizes', async () => {
    const g = new DynGraph('last_token', { b: { min: 1, max: 4 }, seq: { min: 1, max: 16 }, n: { min: 1, max: 4 } });
    const self = g.input('self', 'float32', ['b', 'seq', 4]);
    const tuples = g.input('tuples', 'int64', ['n', 2]);
    const graph = g.outputs(g.call('trt.gather_nd', { self, indices: tuples, batch_dims: 0 }).output);
    await check(graph, [
      [rng.tensor([2, 5, 4]), Tensor.from('int64', [3, 2], [0, -1, 1, 4, -2, -5])],
      [rng.tensor([3, 9, 4]), Tensor.from('int64', [2, 2], [-1, 8, 2, -9])],
    ]);
  }, 60_000);

  test('with a batch dim: one run-time position per row', async () => {
    const g = new DynGraph('per_row', { b: { min: 1, max: 4 }, seq: { min: 1, max: 16 } });
    const self = g.input('self', 'float32', ['b', 'seq', 3]);
    const positions = g.input('positions', 'int64', ['b', 1]);
    const graph = g.outputs(g.call('trt.gather_nd', { self, indices: positions, batch_dims: 1 }).output);
    await check(graph, [
      [rng.tensor([2, 6, 3]), Tensor.from('int64', [2, 1], [-1, 2])],
      [rng.tensor([4, 11, 3]), Tensor.from('int64', [4, 1], [10, -11, 0, -3])],
    ]);
  }, 60_000);
});

describe('trt.scatter_nd addressing run-time dims (IR graphs, against the interpreter)', () => {
  test('rows of [b, seq] replaced at run-time tuples, negative components wrapped by the run-time sizes', async () => {
    const g = new DynGraph('shifted', { b: { min: 1, max: 4 }, seq: { min: 2, max: 16 }, n: { min: 1, max: 4 } });
    const self = g.input('self', 'float32', ['b', 'seq']);
    const tuples = g.input('tuples', 'int64', ['n', 1]);
    const updates = g.input('updates', 'float32', ['n', 'seq']);
    const graph = g.outputs(g.call('trt.scatter_nd', { self, indices: tuples, updates, reduction: 'none' }).output);
    const runs = [
      [rng.tensor([3, 5]), Tensor.from('int64', [2, 1], [-1, 0]), rng.tensor([2, 5])],
      [rng.tensor([4, 9]), Tensor.from('int64', [3, 1], [2, -4, 1]), rng.tensor([3, 9])],
    ];
    await expectDynamicMatches(graph, runs, 'trt.scatter_nd');
  }, 60_000);
});

describe('aten.index.Tensor with several index tensors and run-time dims (IR graphs, against the interpreter)', () => {
  const check = (graph: Graph, runs: Tensor[][]): Promise<void> => expectDynamicMatches(graph, runs, 'aten.index.Tensor');
  const ranges = { b: { min: 1, max: 4 }, seq: { min: 1, max: 16 }, n: { min: 1, max: 4 }, m: { min: 1, max: 4 } };

  test("a sequence classifier's last token: logits[rows, lengths - 1] over [b, seq, 4]", async () => {
    const g = new DynGraph('last_token', ranges);
    const self = g.input('self', 'float32', ['b', 'seq', 4]);
    const rows = g.input('rows', 'int64', ['n']);
    const cols = g.input('cols', 'int64', ['n']);
    const graph = g.outputs(g.call('aten.index.Tensor', { self, indices: [rows, cols] }).output);
    await check(graph, [
      [rng.tensor([2, 5, 4]), Tensor.from('int64', [2], [0, 1]), Tensor.from('int64', [2], [4, -1])],
      [rng.tensor([4, 9, 4]), Tensor.from('int64', [3], [3, -4, 1]), Tensor.from('int64', [3], [-9, 8, 2])],
    ]);
  }, 60_000);

  test('adjacent indices after a kept dim, broadcast [n, 1] with [m]: the kept dim stays in front', async () => {
    const g = new DynGraph('after_kept', ranges);
    const self = g.input('self', 'float32', ['b', 'seq', 5]);
    const i = g.input('i', 'int64', ['n', 1]);
    const j = g.input('j', 'int64', ['m']);
    const graph = g.outputs(g.call('aten.index.Tensor', { self, indices: [null, i, j] }).output);
    await check(graph, [
      [rng.tensor([2, 6, 5]), Tensor.from('int64', [2, 1], [0, -1]), Tensor.from('int64', [3], [4, -5, 2])],
      [rng.tensor([3, 11, 5]), Tensor.from('int64', [3, 1], [10, 2, -11]), Tensor.from('int64', [1], [1])],
    ]);
  }, 60_000);

  test('indices apart (dims 0 and 2): the broadcast dims come first', async () => {
    const g = new DynGraph('apart', ranges);
    const self = g.input('self', 'float32', ['b', 'seq', 3]);
    const i = g.input('i', 'int64', ['n']);
    const k = g.input('k', 'int64', ['n']);
    const graph = g.outputs(g.call('aten.index.Tensor', { self, indices: [i, null, k] }).output);
    await check(graph, [
      [rng.tensor([3, 4, 3]), Tensor.from('int64', [2], [2, -3]), Tensor.from('int64', [2], [0, -1])],
      [rng.tensor([4, 7, 3]), Tensor.from('int64', [4], [0, 1, 2, 3]), Tensor.from('int64', [4], [2, 1, 0, -2])],
    ]);
  }, 60_000);
});

describe('a reshape by run-time sizes keeps the dims the IR knows statically', () => {
  test("SegFormer's tokens [b, 16, 4] to an image [b, 4, 4, -1], permuted and convolved: the channel dim is static for the convolution", async () => {
    const g = new DynGraph('tokens_to_image', { b: { min: 1, max: 4 } });
    const x = g.input('x', 'float32', ['b', 16, 4]);
    const image = g.call('aten.reshape.default', { self: x, shape: [g.size(x, 0), 4, 4, -1] }).output;
    const nchw = g.call('aten.permute.default', { self: image, dims: [0, 3, 1, 2] }).output;
    const weight = g.graph.addConstant('weight', rng.tensor([8, 4, 3, 3]));
    const conv = g.call('aten.convolution.default', { input: nchw, weight, bias: null, stride: [2, 2], padding: [1, 1], dilation: [1, 1], transposed: false, output_padding: [0, 0], groups: 1 }).output;
    const graph = g.outputs(conv);
    const runs = [[rng.tensor([1, 16, 4])], [rng.tensor([3, 16, 4])]];
    const { program, outputs } = await compileAndRun(graph, { minBlockSize: 1 }, runs);
    expect(refused(program)).toEqual([]);
    for (const [r, inputs] of runs.entries()) {
      const [expected] = interpret(graph, inputs);
      expect(outputs[r]![0]!.shape).toEqual(expected!.shape);
      expectClose(outputs[r]![0]!, expected!, FP32, `run ${r}`);
    }
  }, 60_000);
});

describe('aten.scatter along a run-time axis (IR graphs, against the interpreter)', () => {
  test.each(['src', 'value'] as const)('scatter.%s into [b, s] along dim 1, negative indices wrapped by the run-time size', async (form) => {
    const g = new DynGraph('scatter_axis', { b: { min: 1, max: 4 }, s: { min: 3, max: 16 } });
    const self = g.input('self', 'float32', ['b', 's']);
    const index = g.input('index', 'int64', ['b', 2]);
    const src = g.input('src', 'float32', ['b', 2]);
    const node = form === 'src' ? g.call('aten.scatter.src', { self, dim: 1, index, src }) : g.call('aten.scatter.value', { self, dim: 1, index, value: 7.5 });
    const graph = g.outputs(node.output);
    const runs = [
      [rng.tensor([2, 5]), Tensor.from('int64', [2, 2], [0, -1, 3, -5]), rng.tensor([2, 2])],
      [rng.tensor([3, 9]), Tensor.from('int64', [3, 2], [-9, 8, 1, 2, -2, 4]), rng.tensor([3, 2])],
    ];
    await expectDynamicMatches(graph, runs, `aten.scatter.${form}`);
  }, 60_000);
});
