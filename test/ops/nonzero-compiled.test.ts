/**
 * ONNX NonZero compiled into engine segments as a nonzero layer, whose count is a run-time dim
 * of the Network: models with NonZero in the middle (Relu → NonZero → Transpose → Gather /
 * GatherND) and as a graph output, compiled on the reference and onnxruntime backends and
 * compared exactly with onnxruntime-node running the same ONNX file; the partition report
 * (NonZero in an engine segment there; in a fallback segment where the backend's engines
 * cannot hold such a size); N = 0; save → load → run; and the refusals of the cuda and
 * tensorrt backends.
 */
import { cudaBackend } from '../../lib/backends/cuda';
import { compile, dryRun } from '../../lib/compile';
import type { DataDependentSizes } from '../../lib/conversion/registry';
import { convertWhole } from '../helpers/convert-compare';
import { loadOnnx } from '../../lib/frontends/onnx';
import { Tensor } from '../../lib/ir/tensor';
import { dataDependentTensors, Network } from '../../lib/network';
import { partition } from '../../lib/partitioning/partition';
import { loadProgramBuffer, saveProgramBuffer } from '../../lib/runtime/program-file';
import type { Program } from '../../lib/runtime/program';
import { expectExact, expectTensor } from '../helpers/compare';
import { buildSymbolicModel, type SymModelSpec } from '../helpers/onnx-symbolic-model';
import { closeOrt, runOrtModel } from '../helpers/ort-single-op';

const f32 = (shape: number[], values: number[]): Tensor => Tensor.from('float32', shape, values);

afterAll(() => closeOrt());

/**
 * x [4, 4] → Relu → NonZero [2, N] → Transpose [N, 2] → Gather(axis 0) [N, 2, 4] and
 * GatherND [N] (the nonzero values); the NonZero output is a graph output too.
 */
const MIDDLE: SymModelSpec = {
  inputs: { x: { dtype: 'float32', dims: [4, 4] } },
  nodes: [
    { op: 'Relu', inputs: ['x'], outputs: ['r'] },
    { op: 'NonZero', inputs: ['r'], outputs: ['nz'], name: 'nonzero' },
    { op: 'Transpose', inputs: ['nz'], outputs: ['t'], attrs: { perm: [1, 0] } },
    { op: 'Gather', inputs: ['r', 't'], outputs: ['rows'], attrs: { axis: 0 } },
    { op: 'GatherND', inputs: ['r', 't'], outputs: ['values'] },
  ],
  outputs: ['rows', 'values', 'nz'],
  opset: 13,
};

/** Inputs with some, all and no positive elements (N = 7, 16, 0). */
const INPUTS: Record<string, Tensor> = {
  some: f32([4, 4], [1, -2, 0, 3.5, -1, 0, 2, 0, 0, 0, 0, 4, 5, -6, 7, 0.25]),
  all: f32(
    [4, 4],
    Array.from({ length: 16 }, (_, i) => i + 1),
  ),
  none: f32([4, 4], new Array<number>(16).fill(-1)),
};

/** The report's verdict on the NonZero node: converted (engine segment) or not, with the segment kind. */
function nonzeroVerdict(program: Program): { converted: boolean; segment: string | undefined; reasons: string[] } {
  const op = program.report.ops.find((o) => o.target === 'trt.nonzero')!;
  return { converted: op.converted, segment: program.report.segments[op.segment]?.kind, reasons: op.reasons };
}

async function runAll(program: Program, x: Tensor): Promise<Tensor[]> {
  return Object.values(await program.run({ x }));
}

describe('NonZero of a 0-d input', () => {
  const model = buildSymbolicModel({
    inputs: { x: { dtype: 'float32', dims: [] } },
    nodes: [{ op: 'NonZero', inputs: ['x'], outputs: ['nz'] }],
    outputs: ['nz'],
    opset: 13,
  });
  it.each([
    ['nonzero', 2.5, 1],
    ['zero', 0, 0],
  ])('gives [1, N] as onnxruntime-node does on the same file (%s)', async (_name, value, n) => {
    const x = f32([], [value]);
    const [expected] = await runOrtModel(model, [x]);
    expectExact(expected!, Tensor.from('int64', [1, n], new Array<number>(n).fill(0)));
    for (const backend of ['reference', 'onnxruntime'] as const) {
      const program = await compile(model, { backend, minBlockSize: 1 });
      try {
        expectExact(Object.values(await program.run({ x }))[0]!, expected!, `${backend}`);
      } finally {
        await program.dispose();
      }
    }
  });
});

describe.each(['reference', 'onnxruntime'] as const)('NonZero in an engine segment on the %s backend', (backend) => {
  const model = buildSymbolicModel(MIDDLE);
  let program: Program;
  beforeAll(async () => {
    program = await compile(model, { backend, minBlockSize: 1 });
  });
  afterAll(() => program.dispose());

  it('the partition report puts every node, NonZero included, in one engine segment', () => {
    expect(nonzeroVerdict(program)).toEqual({ converted: true, segment: 'engine', reasons: [] });
    expect(program.report.segments.map((s) => s.kind)).toEqual(['engine']);
    expect(program.report.ops.every((o) => o.converted)).toBe(true);
    // The program's outputs print the data-dependent size.
    expect(String(program.outputs[2]!.shape)).toMatch(/^\[2, data_dependent_\d+\]$/);
  });

  it.each(Object.keys(INPUTS))('matches onnxruntime-node on the ONNX file (%s positive elements)', async (name) => {
    const x = INPUTS[name]!;
    const expected = await runOrtModel(model, [x]);
    const actual = await runAll(program, x);
    expect(actual).toHaveLength(3);
    actual.forEach((t, i) => expectExact(t, expected[i]!, ['rows', 'values', 'nz'][i]));
  });

  it('N = 0: empty outputs of the right ranks', async () => {
    const [rows, values, nz] = await runAll(program, INPUTS.none!);
    expectTensor(rows!, 'float32', [0, 2, 4], []);
    expectTensor(values!, 'float32', [0], []);
    expectExact(nz!, Tensor.from('int64', [2, 0], []));
  });

  it('hand-computed: the nonzero values in row-major order and their positions', async () => {
    const [, values, nz] = await runAll(program, INPUTS.some!);
    expectTensor(values!, 'float32', [7], [1, 3.5, 2, 4, 5, 7, 0.25]);
    expectExact(nz!, Tensor.from('int64', [2, 7], [0, 0, 1, 2, 3, 3, 3, 0, 3, 2, 3, 0, 2, 3]));
  });

  it('save → load → run keeps working, the count still bound per run', async () => {
    const loaded = await loadProgramBuffer(saveProgramBuffer(program));
    try {
      expect(nonzeroVerdict(loaded).converted).toBe(true);
      for (const x of Object.values(INPUTS)) {
        const expected = await runOrtModel(model, [x]);
        (await runAll(loaded, x)).forEach((t, i) => expectExact(t, expected[i]!));
      }
    } finally {
      await loaded.dispose();
    }
  });
});

describe('NonZero of other input types, against onnxruntime-node', () => {
  // int64 goes through a comparison with 0 (a cast to int32 would wrap 2^32 to 0); bool
  // straight in; uint8 through an exact cast to int32.
  const cases: Array<{ label: string; spec: SymModelSpec; x: Tensor }> = [
    {
      label: 'int64 with 2^32 (zero in int32)',
      spec: { inputs: { x: { dtype: 'int64', dims: [5] } }, nodes: [{ op: 'Abs', inputs: ['x'], outputs: ['a'] }, { op: 'NonZero', inputs: ['a'], outputs: ['y'] }], outputs: ['y'], opset: 13 },
      x: new Tensor('int64', [5], BigInt64Array.from([0n, 2n ** 32n, -3n, 0n, 1n])),
    },
    {
      label: 'bool from a comparison',
      spec: {
        inputs: { x: { dtype: 'float32', dims: [2, 3] } },
        initializers: { h: f32([], [0.5]) },
        nodes: [
          { op: 'Greater', inputs: ['x', 'h'], outputs: ['m'] },
          { op: 'NonZero', inputs: ['m'], outputs: ['y'] },
        ],
        outputs: ['y'],
        opset: 13,
      },
      x: f32([2, 3], [0.1, 0.9, 0.5, 2, -1, 0.6]),
    },
    {
      label: 'uint8 of rank 3',
      spec: { inputs: { x: { dtype: 'uint8', dims: [2, 2, 3] } }, nodes: [{ op: 'NonZero', inputs: ['x'], outputs: ['y'] }], outputs: ['y'], opset: 13 },
      x: Tensor.from('uint8', [2, 2, 3], [0, 1, 0, 255, 0, 0, 7, 0, 0, 0, 0, 3]),
    },
  ];
  it.each(cases.flatMap((c) => (['reference', 'onnxruntime'] as const).map((b) => [c.label, b, c] as const)))('%s on %s', async (_label, backend, c) => {
    const model = buildSymbolicModel(c.spec);
    const program = await compile(model, { backend, minBlockSize: 1 });
    try {
      expect(nonzeroVerdict(program).converted).toBe(true);
      const [expected] = await runOrtModel(model, [c.x]);
      const [actual] = Object.values(await program.run({ x: c.x }));
      expectExact(actual!, expected!);
    } finally {
      await program.dispose();
    }
  });
});

describe('Compress with a computed condition: a nonzero of the condition and a gather', () => {
  // Rows whose sum is positive (axis 0), and the positive elements of x flattened (no axis).
  const model = buildSymbolicModel({
    inputs: { x: { dtype: 'float32', dims: [3, 4] } },
    initializers: { axes: Tensor.from('int64', [1], [1]), zero: f32([], [0]), flat: Tensor.from('int64', [1], [-1]) },
    nodes: [
      { op: 'ReduceSum', inputs: ['x', 'axes'], outputs: ['s'], attrs: { keepdims: 0 } },
      { op: 'Greater', inputs: ['s', 'zero'], outputs: ['rowsPositive'] },
      { op: 'Compress', inputs: ['x', 'rowsPositive'], outputs: ['rows'], attrs: { axis: 0 } },
      { op: 'Greater', inputs: ['x', 'zero'], outputs: ['positive'] },
      { op: 'Reshape', inputs: ['positive', 'flat'], outputs: ['mask'] },
      { op: 'Compress', inputs: ['x', 'mask'], outputs: ['values'] },
    ],
    outputs: ['rows', 'values'],
    opset: 13,
  });
  const inputs = [
    f32([3, 4], [1, -2, 3, 0.5, -1, -1, 0.5, 0, 2, 2, -5, 4]),
    f32([3, 4], new Array<number>(12).fill(-1)),
    f32([3, 4], Array.from({ length: 12 }, (_, i) => i + 1)),
  ];

  it.each(['reference', 'onnxruntime'] as const)('on %s: in the engine, equal to onnxruntime-node on the file (N = 0 included)', async (backend) => {
    const program = await compile(model, { backend, minBlockSize: 1 });
    try {
      expect(program.report.ops.filter((o) => o.target === 'trt.compress').map((o) => o.converted)).toEqual([true, true]);
      expect(program.report.segments.map((s) => s.kind)).toEqual(['engine']);
      for (const x of inputs) {
        const expected = await runOrtModel(model, [x]);
        (await runAll(program, x)).forEach((t, i) => expectExact(t, expected[i]!, ['rows', 'values'][i]));
      }
      const [rows, values] = await runAll(program, inputs[0]!);
      expectTensor(rows!, 'float32', [2, 4], [1, -2, 3, 0.5, 2, 2, -5, 4]);
      expectTensor(values!, 'float32', [7], [1, 3, 0.5, 0.5, 2, 2, 4]);
    } finally {
      await program.dispose();
    }
  });

  it('a true condition element past the axis is refused at run time (E_BAD_INPUT), as the interpreter does', async () => {
    const long = buildSymbolicModel({
      inputs: { x: { dtype: 'float32', dims: [2, 2] }, c: { dtype: 'bool', dims: [3] } },
      nodes: [
        { op: 'Not', inputs: ['c'], outputs: ['n'] },
        { op: 'Compress', inputs: ['x', 'n'], outputs: ['y'], attrs: { axis: 0 } },
      ],
      outputs: ['y'],
      opset: 13,
    });
    const program = await compile(long, { backend: 'reference', minBlockSize: 1 });
    try {
      expect(program.report.segments.map((s) => s.kind)).toEqual(['engine']);
      const x = f32([2, 2], [1, 2, 3, 4]);
      const [short] = Object.values(await program.run({ x, c: Tensor.from('bool', [3], [0, 1, 1]) }));
      expectTensor(short!, 'float32', [1, 2], [1, 2]);
      await expect(program.run({ x, c: Tensor.from('bool', [3], [1, 1, 0]) })).rejects.toThrow(expect.objectContaining({ code: 'E_BAD_INPUT' }));
    } finally {
      await program.dispose();
    }
  });
});

describe('where a backend cannot hold a data-dependent size', () => {
  const graph = (spec: SymModelSpec) => loadOnnx(buildSymbolicModel(spec));
  const placement = (spec: SymModelSpec, sizes: DataDependentSizes): Record<string, string> => {
    const { report } = partition(graph(spec), { minBlockSize: 1, dataDependentSizes: sizes });
    return Object.fromEntries(report.ops.map((o) => [o.target, report.segments[o.segment]!.kind]));
  };

  /** The count of positive elements, through NonZero: its data-dependent size stays inside. */
  const INSIDE: SymModelSpec = {
    inputs: { x: { dtype: 'float32', dims: [3, 4] } },
    nodes: [
      { op: 'Relu', inputs: ['x'], outputs: ['r'] },
      { op: 'NonZero', inputs: ['r'], outputs: ['nz'] },
      { op: 'Transpose', inputs: ['nz'], outputs: ['t'], attrs: { perm: [1, 0] } },
      { op: 'GatherND', inputs: ['r', 't'], outputs: ['v'] },
      { op: 'ReduceSum', inputs: ['v'], outputs: ['y'], attrs: { keepdims: 0 } },
    ],
    outputs: ['y'],
    opset: 13,
  };

  it('none (cuda): NonZero and what reads its size run in a fallback segment, the rest in engines', () => {
    expect(placement(MIDDLE, 'none')).toEqual({ 'aten.relu.default': 'engine', 'trt.nonzero': 'fallback', 'aten.permute.default': 'fallback', 'aten.index.Tensor': 'fallback', 'trt.gather_nd': 'fallback' });
    const { report } = partition(graph(MIDDLE), { minBlockSize: 1, dataDependentSizes: 'none' });
    expect(report.ops.find((o) => o.target === 'trt.nonzero')!.reasons[0]).toMatch(/depends on tensor data, which this backend's engines cannot hold/);
  });

  it('inside (tensorrt): a size that stays inside compiles; one that reaches an output runs in fallback', () => {
    expect(new Set(Object.values(placement(INSIDE, 'inside')))).toEqual(new Set(['engine']));
    const middle = placement(MIDDLE, 'inside');
    expect(middle['aten.relu.default']).toBe('engine');
    expect(middle['trt.nonzero']).toBe('fallback');
    const { report } = partition(graph(MIDDLE), { minBlockSize: 1, dataDependentSizes: 'inside' });
    expect(report.ops.find((o) => o.target === 'trt.gather_nd')!.reasons[0]).toMatch(/leaves its engine segment/);
  });

  it('a data-dependent size never enters an engine from a fallback segment', () => {
    // torchExecutedOps keeps NonZero in the interpreter: what reads its size after it falls
    // back too, up to the sum, whose input still has it; nothing after the sum does.
    const spec: SymModelSpec = { ...INSIDE, nodes: [...INSIDE.nodes, { op: 'Neg', inputs: ['y'], outputs: ['z'] }], outputs: ['z'] };
    const { report } = partition(graph(spec), { minBlockSize: 1, dataDependentSizes: 'anywhere', torchExecutedOps: new Set(['trt.nonzero']) });
    const kinds = Object.fromEntries(report.ops.map((o) => [o.target, report.segments[o.segment]!.kind]));
    expect(kinds).toEqual({
      'aten.relu.default': 'engine',
      'trt.nonzero': 'fallback',
      'aten.permute.default': 'fallback',
      'trt.gather_nd': 'fallback',
      'aten.sum.dim_IntList': 'fallback',
      'aten.neg.default': 'engine',
    });
    expect(report.ops.find((o) => o.target === 'aten.permute.default')!.reasons[0]).toMatch(/from outside its engine segment/);
  });

  it('requireFullCompilation refuses what must fall back for a data-dependent size', () => {
    expect(() => partition(graph(MIDDLE), { requireFullCompilation: true, dataDependentSizes: 'inside' })).toThrow(expect.objectContaining({ code: 'E_UNSUPPORTED_OP' }));
  });

  it('dryRun says what a named backend does: engine on onnxruntime, fallback on cuda', async () => {
    const model = buildSymbolicModel(MIDDLE);
    const on = async (backend: 'onnxruntime' | 'cuda'): Promise<boolean> => (await dryRun(model, { backend, minBlockSize: 1 })).ops.find((o) => o.target === 'trt.nonzero')!.converted;
    expect(await on('onnxruntime')).toBe(true);
    expect(await on('cuda')).toBe(false);
  });

  it('the same graph gives the same answer whichever segment NonZero runs in', async () => {
    // Fallback (torchExecutedOps) against engine, both on the reference backend, and onnxruntime-node on the file.
    const model = buildSymbolicModel(MIDDLE);
    const engine = await compile(model, { backend: 'reference', minBlockSize: 1 });
    const fallback = await compile(model, { backend: 'reference', minBlockSize: 1, torchExecutedOps: ['trt.nonzero'] });
    try {
      expect(nonzeroVerdict(fallback).converted).toBe(false);
      const x = INPUTS.some!;
      const expected = await runOrtModel(model, [x]);
      const [a, b] = await Promise.all([runAll(engine, x), runAll(fallback, x)]);
      a.forEach((t, i) => expectExact(t, expected[i]!));
      b.forEach((t, i) => expectExact(t, expected[i]!));
    } finally {
      await Promise.all([engine.dispose(), fallback.dispose()]);
    }
  });

  /** A network of x → nonzero → (gather of the positions' first row) marked as outputs, converted from MIDDLE. */
  const middleNetwork = (): Network => {
    const g = graph(MIDDLE);
    return convertWhole(g, { dataDependentSizes: 'anywhere' });
  };

  it('the cuda backend refuses a nonzero layer at build, naming it', async () => {
    await expect(cudaBackend.build(middleNetwork(), {} as never, { type: 'gpu', gpuId: 0 } as never)).rejects.toThrow(
      expect.objectContaining({ code: 'E_UNSUPPORTED_OP', message: expect.stringMatching(/layer "nonzero.*" \(nonzero\).*depends on tensor data/) }),
    );
  });

  it('dataDependentTensors finds what a nonzero sizes: the outputs after it, not a static sum of them', () => {
    const net = middleNetwork();
    const rows = net.outputs.find((o) => o.name === 'rows')!;
    expect(dataDependentTensors(net).get(rows.tensor)!.params.kind).toBe('nonzero');
    const g = graph(INSIDE);
    const inside = convertWhole(g, { dataDependentSizes: 'inside' });
    expect(inside.layers.some((l) => l.params.kind === 'nonzero')).toBe(true);
    // What depends on the count: everything after the nonzero with a run-time dim, not the static sum.
    const sized = dataDependentTensors(inside);
    expect([...sized.keys()].map((id) => inside.tensor(id).shape.includes(-1))).not.toContain(false);
    expect(sized.has(inside.outputs[0]!.tensor)).toBe(false);
  });
});
