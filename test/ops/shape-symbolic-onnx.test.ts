/**
 * SHAPE family on ONNX models with dynamic dims (dim_param): the shape arithmetic folds to
 * SymInt arguments, the inferred output shape is exact and symbolic (checked as printed), and
 * the result matches onnxruntime at several sizes.
 */
import { loadOnnx } from '../../lib/frontends/onnx';
import type { DType } from '../../lib/ir/dtype';
import { formatShape } from '../../lib/ir/symbolic';
import { interpret } from '../../lib/interpreter';
import { Tensor } from '../../lib/ir/tensor';
import { expectClose } from '../helpers/compare';
import { runOrtModel } from '../helpers/ort-single-op';
import { Random } from '../helpers/random';

// eslint-disable-next-line @typescript-eslint/no-require-imports
const { onnx } = require('onnx-proto');

const rng = new Random(4242);
const ELEM: Partial<Record<DType, number>> = { float32: 1, int64: 7, int32: 6, bool: 9, float16: 10 };

interface NodeSpec {
  op: string;
  inputs: string[];
  outputs: string[];
  attrs?: Record<string, number | number[] | string>;
}

interface ModelSpec {
  inputs: Array<{ name: string; dtype: DType; shape: Array<number | string> }>;
  initializers?: Array<{ name: string; tensor: Tensor }>;
  nodes: NodeSpec[];
  outputs: string[];
  opset?: number;
}

function attribute(name: string, v: number | number[] | string): unknown {
  const T = onnx.AttributeProto.AttributeType;
  if (typeof v === 'number') return { name, type: T.INT, i: v };
  if (typeof v === 'string') return { name, type: T.STRING, s: Buffer.from(v) };
  return { name, type: T.INTS, ints: v };
}

function tensorProto(name: string, t: Tensor): unknown {
  return { name, dims: [...t.shape], dataType: ELEM[t.dtype], rawData: new Uint8Array(t.data.buffer, t.data.byteOffset, t.data.byteLength).slice() };
}

function buildModel(spec: ModelSpec): Uint8Array {
  const model = onnx.ModelProto.create({
    irVersion: 8,
    opsetImport: [{ domain: '', version: spec.opset ?? 17 }],
    graph: {
      name: 'symbolic',
      node: spec.nodes.map((n, i) => ({
        name: `${n.op}_${i}`,
        opType: n.op,
        input: n.inputs,
        output: n.outputs,
        attribute: Object.entries(n.attrs ?? {}).map(([k, v]) => attribute(k, v)),
      })),
      input: spec.inputs.map((x) => ({
        name: x.name,
        type: { tensorType: { elemType: ELEM[x.dtype], shape: { dim: x.shape.map((d) => (typeof d === 'number' ? { dimValue: d } : { dimParam: d })) } } },
      })),
      initializer: (spec.initializers ?? []).map((i) => tensorProto(i.name, i.tensor)),
      output: spec.outputs.map((name) => ({ name })),
    },
  });
  return onnx.ModelProto.encode(model).finish();
}

const i64 = (values: number[]): Tensor => Tensor.from('int64', [values.length], values);

/** Imports `spec`, checks the printed output shapes, and compares with onnxruntime on each input set. */
async function check(spec: ModelSpec, shapes: string[], runs: Tensor[][]): Promise<void> {
  const bytes = buildModel(spec);
  const graph = loadOnnx(bytes);
  expect(graph.outputs.map((v) => formatShape(v.tensorType.shape))).toEqual(shapes);
  for (const inputs of runs) {
    const expected = await runOrtModel(bytes, inputs);
    const actual = interpret(graph, inputs);
    actual.forEach((t, i) => expectClose(t, expected[i]!, undefined, `output ${i}`));
  }
}

/** Nodes computing `dim` = Shape(x)[axis] as a 1-D int64 [1] tensor named `name`. */
function dimOf(x: string, axis: number, name: string): NodeSpec[] {
  return [
    { op: 'Shape', inputs: [x], outputs: [`${name}_shape`] },
    { op: 'Gather', inputs: [`${name}_shape`, `${name}_axis`], outputs: [`${name}_scalar`] },
    { op: 'Unsqueeze', inputs: [`${name}_scalar`, 'zero_axes'], outputs: [name] },
  ];
}

const dimInits = (...names: Array<[string, number]>): Array<{ name: string; tensor: Tensor }> => [
  { name: 'zero_axes', tensor: i64([0]) },
  ...names.map(([n, axis]) => ({ name: `${n}_axis`, tensor: Tensor.scalar('int64', axis) })),
];

const f32 = (...shape: number[]): Tensor => rng.tensor(shape, 'float32', -2, 2);

describe('ONNX shape ops on dynamic dims', () => {
  test('Shape → Gather → Unsqueeze → Concat → Reshape gives [N, 2, 4]', async () => {
    await check(
      {
        inputs: [{ name: 'x', dtype: 'float32', shape: ['N', 8] }],
        initializers: [...dimInits(['n', 0]), { name: 'rest', tensor: i64([2, 4]) }],
        nodes: [...dimOf('x', 0, 'n'), { op: 'Concat', inputs: ['n', 'rest'], outputs: ['shape'], attrs: { axis: 0 } }, { op: 'Reshape', inputs: ['x', 'shape'], outputs: ['y'] }],
        outputs: ['y'],
      },
      ['[N, 2, 4]'],
      [[f32(3, 8)], [f32(7, 8)]],
    );
  });

  test('Reshape with 0 and -1 on dynamic dims', async () => {
    await check(
      {
        inputs: [{ name: 'x', dtype: 'float32', shape: ['B', 'T', 6] }],
        initializers: [{ name: 's', tensor: i64([0, -1, 3]) }],
        nodes: [{ op: 'Reshape', inputs: ['x', 's'], outputs: ['y'] }],
        outputs: ['y'],
      },
      ['[B, T*2, 3]'],
      [[f32(2, 3, 6)], [f32(1, 5, 6)]],
    );
  });

  test('Slice of a constant buffer to the dynamic length: [min(N, 16), 4]', async () => {
    await check(
      {
        inputs: [{ name: 'x', dtype: 'float32', shape: ['N', 4] }],
        initializers: [...dimInits(['n', 0]), { name: 'buffer', tensor: f32(16, 4) }, { name: 'zero', tensor: i64([0]) }],
        nodes: [...dimOf('x', 0, 'n'), { op: 'Slice', inputs: ['buffer', 'zero', 'n', 'zero'], outputs: ['y'] }],
        outputs: ['y'],
      },
      ['[min(N, 16), 4]'],
      [[f32(3, 4)], [f32(20, 4)]],
    );
  });

  test('Slice with a negative step and INT64 sentinels on a dynamic dim', async () => {
    await check(
      {
        inputs: [{ name: 'x', dtype: 'float32', shape: ['N', 3] }],
        initializers: [
          { name: 'starts', tensor: Tensor.from('int64', [1], [-1n]) },
          { name: 'ends', tensor: Tensor.from('int64', [1], [-(2n ** 63n)]) },
          { name: 'axes', tensor: i64([0]) },
          { name: 'steps', tensor: i64([-2]) },
        ],
        nodes: [{ op: 'Slice', inputs: ['x', 'starts', 'ends', 'axes', 'steps'], outputs: ['y'] }],
        outputs: ['y'],
      },
      ['[(N+1)//2, 3]'],
      [[f32(5, 3)], [f32(4, 3)], [f32(1, 3)], [f32(0, 3)]],
    );
  });

  test('Split by num_outputs on a dynamic dim (opset 18)', async () => {
    await check(
      {
        opset: 18,
        inputs: [{ name: 'x', dtype: 'float32', shape: [2, 'N'] }],
        nodes: [{ op: 'Split', inputs: ['x'], outputs: ['a', 'b'], attrs: { axis: 1, num_outputs: 2 } }],
        outputs: ['a', 'b'],
      },
      ['[2, (N+1)//2]', '[2, N-(N+1)//2]'],
      [[f32(2, 5)], [f32(2, 6)]],
    );
  });

  test('Expand to Shape(y) broadcasts bidirectionally: [N, 4]', async () => {
    await check(
      {
        inputs: [
          { name: 'x', dtype: 'float32', shape: [1, 4] },
          { name: 'y', dtype: 'float32', shape: ['N', 1] },
        ],
        nodes: [
          { op: 'Shape', inputs: ['y'], outputs: ['s'] },
          { op: 'Expand', inputs: ['x', 's'], outputs: ['z'] },
        ],
        outputs: ['z'],
      },
      ['[N, 4]'],
      [[f32(1, 4), f32(3, 1)]],
    );
  });

  test('ConstantOfShape(Shape(x)) and Range(0, N, 1)', async () => {
    await check(
      {
        inputs: [{ name: 'x', dtype: 'float32', shape: ['N', 2] }],
        initializers: [
          { name: 'axis0', tensor: Tensor.scalar('int64', 0) },
          { name: 'start', tensor: Tensor.scalar('int64', 0) },
          { name: 'delta', tensor: Tensor.scalar('int64', 1) },
        ],
        nodes: [
          { op: 'Shape', inputs: ['x'], outputs: ['s'] },
          { op: 'ConstantOfShape', inputs: ['s'], outputs: ['c'] },
          { op: 'Gather', inputs: ['s', 'axis0'], outputs: ['n'] },
          { op: 'Range', inputs: ['start', 'n', 'delta'], outputs: ['r'] },
        ],
        outputs: ['c', 'r'],
      },
      ['[N, 2]', '[N]'],
      [[f32(3, 2)], [f32(70, 2)]],
    );
  });

  test('Squeeze of a dynamic axis that is 1 at run time', async () => {
    await check(
      {
        inputs: [{ name: 'x', dtype: 'float32', shape: ['N', 3] }],
        initializers: [{ name: 'axes', tensor: i64([0]) }],
        nodes: [{ op: 'Squeeze', inputs: ['x', 'axes'], outputs: ['y'] }],
        outputs: ['y'],
      },
      ['[3]'],
      [[f32(1, 3)]],
    );
  });

  test('Tile by dynamic repeats, Transpose, Concat and Gather on dynamic dims', async () => {
    await check(
      {
        inputs: [
          { name: 'x', dtype: 'float32', shape: ['N', 2] },
          { name: 'i', dtype: 'int64', shape: ['K'] },
        ],
        initializers: [...dimInits(['n', 0]), { name: 'one', tensor: i64([1]) }],
        nodes: [
          ...dimOf('x', 0, 'n'),
          { op: 'Concat', inputs: ['one', 'n'], outputs: ['reps'], attrs: { axis: 0 } },
          { op: 'Tile', inputs: ['x', 'reps'], outputs: ['t'] },
          { op: 'Transpose', inputs: ['x'], outputs: ['tt'] },
          { op: 'Concat', inputs: ['x', 'x'], outputs: ['cc'], attrs: { axis: 0 } },
          { op: 'Gather', inputs: ['x', 'i'], outputs: ['g'] },
        ],
        outputs: ['t', 'tt', 'cc', 'g'],
      },
      ['[N, N*2]', '[2, N]', '[N*2, 2]', '[K, 2]'],
      [[f32(3, 2), i64([2, -1, 0, 1])]],
    );
  });
});
