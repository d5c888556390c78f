/**
 * Shape idioms of the TorchScript ONNX exporter (torch.onnx.export(dynamo=False)) that import
 * only if shape arithmetic folds symbolically. `x.expand(b, -1, ...)` is exported as
 *   size = Reshape(Concat(Unsqueeze(b), [-1], ...), [-1])
 *   ones = ConstantOfShape(Shape(size), 1); neg = Mul(ones, -1)
 *   Expand(x, Where(Equal(size, neg), ones, size))
 * and `b` is a symbolic dim: Equal(b, -1) is false for every size (dims are never negative),
 * so the target shape is known up to symbols. Every case: the model as built here against
 * onnxruntime-node at two sizes, through loadOnnx + the interpreter and through compile()
 * (reference backend, one program for both sizes, nothing in fallback).
 */
import { compile } from '../../../lib/compile';
import { loadOnnx } from '../../../lib/frontends/onnx';
import { interpret } from '../../../lib/interpreter';
import { Tensor } from '../../../lib/ir/tensor';
import { expectClose, FP32 } from '../../helpers/compare';
import { buildSymbolicModel, constantNode, i64, i64Scalar, type SymModelSpec, type SymNode } from '../../helpers/onnx-symbolic-model';
import { closeOrt, runOrtModel } from '../../helpers/ort-single-op';
import { Random } from '../../helpers/random';

afterAll(() => closeOrt());

const rng = new Random(2020);

/** Gathers dim `axis` of `shape` as the scalar `out` (what `x.size(axis)` exports to). */
function sizeOf(shape: string, axis: number, out: string): SymNode[] {
  return [constantNode(`${out}_axis`, i64Scalar(axis)), { op: 'Gather', inputs: [shape, `${out}_axis`], outputs: [out], attrs: { axis: 0 } }];
}

/**
 * The exporter's expand: `parts` are scalar tensor names (sizes) or numbers (constants such
 * as -1); `x` is expanded to them as `out`.
 */
function torchscriptExpand(x: string, parts: ReadonlyArray<string | number>, out: string): SymNode[] {
  const nodes: SymNode[] = [constantNode(`${out}_axes`, i64([0]))];
  const listed = parts.map((p, i) => {
    const name = `${out}_p${i}`;
    if (typeof p === 'number') nodes.push(constantNode(name, i64([p])));
    else nodes.push({ op: 'Unsqueeze', inputs: [p, `${out}_axes`], outputs: [name] });
    return name;
  });
  nodes.push(
    { op: 'Concat', inputs: listed, outputs: [`${out}_stack`], attrs: { axis: 0 } },
    constantNode(`${out}_flat`, i64([-1])),
    { op: 'Reshape', inputs: [`${out}_stack`, `${out}_flat`], outputs: [`${out}_size`] },
    { op: 'Shape', inputs: [`${out}_size`], outputs: [`${out}_len`] },
    { op: 'ConstantOfShape', inputs: [`${out}_len`], outputs: [`${out}_ones`], attrs: { value: i64([1]) } },
    constantNode(`${out}_m1`, i64Scalar(-1)),
    { op: 'Mul', inputs: [`${out}_ones`, `${out}_m1`], outputs: [`${out}_neg`] },
    { op: 'Equal', inputs: [`${out}_size`, `${out}_neg`], outputs: [`${out}_eq`] },
    { op: 'Where', inputs: [`${out}_eq`, `${out}_ones`, `${out}_size`], outputs: [`${out}_target`] },
    { op: 'Expand', inputs: [x, `${out}_target`], outputs: [out], name: `/model/${out}/Expand` },
  );
  return nodes;
}

interface Case {
  spec: SymModelSpec;
  /** compile()'s range for each input, in order. */
  ranges: Record<string, { min: number[]; opt: number[]; max: number[] }>;
  /** Inputs at two sizes. */
  sizes: Tensor[][];
}

/** bert's `token_type_ids.expand(batch, seq)` (both symbolic), mixed with the ids. */
const bertLike: Case = {
  spec: {
    inputs: { ids: { dtype: 'int64', dims: ['batch', 'seq'] } },
    initializers: { w: rng.tensor([1, 1]) },
    nodes: [
      { op: 'Shape', inputs: ['ids'], outputs: ['shape'] },
      ...sizeOf('shape', 0, 'b'),
      ...sizeOf('shape', 1, 's'),
      ...torchscriptExpand('w', ['b', 's'], 'tt'),
      { op: 'Cast', inputs: ['ids'], outputs: ['idsf'], attrs: { to: 1 } },
      { op: 'Add', inputs: ['tt', 'idsf'], outputs: ['y'] },
    ],
    outputs: ['y'],
  },
  ranges: { ids: { min: [1, 1], opt: [2, 8], max: [8, 32] } },
  sizes: [[rng.intTensor([1, 8], 0, 50)], [rng.intTensor([2, 13], 0, 50)]],
};

/** llama's rotary `inv_freq[None, :, None].expand(b, -1, 1)` @ positions. */
const rotaryLike: Case = {
  spec: {
    inputs: { pos: { dtype: 'float32', dims: ['batch', 1, 'seq'] } },
    initializers: { inv: rng.tensor([1, 4, 1]) },
    nodes: [
      { op: 'Shape', inputs: ['pos'], outputs: ['shape'] },
      ...sizeOf('shape', 0, 'b'),
      ...torchscriptExpand('inv', ['b', -1, 1], 'freq'),
      { op: 'MatMul', inputs: ['freq', 'pos'], outputs: ['y'] },
    ],
    outputs: ['y'],
  },
  ranges: { pos: { min: [1, 1, 1], opt: [2, 1, 8], max: [8, 1, 32] } },
  sizes: [[rng.tensor([1, 1, 8])], [rng.tensor([2, 1, 13])]],
};

/** distilbert/clip's `position_ids[:, :seq].expand(batch, -1)` with an arithmetic size (b * 1 + 0). */
const arithmeticSize: Case = {
  spec: {
    inputs: { x: { dtype: 'float32', dims: ['batch', 'seq', 3] } },
    initializers: { row: rng.tensor([1, 1, 3]) },
    nodes: [
      { op: 'Shape', inputs: ['x'], outputs: ['shape'] },
      ...sizeOf('shape', 0, 'b0'),
      constantNode('one', i64Scalar(1)),
      { op: 'Mul', inputs: ['b0', 'one'], outputs: ['b'] },
      ...torchscriptExpand('row', ['b', -1, -1], 'r'),
      { op: 'Mul', inputs: ['r', 'x'], outputs: ['y'] },
    ],
    outputs: ['y'],
  },
  ranges: { x: { min: [1, 1, 3], opt: [2, 8, 3], max: [8, 32, 3] } },
  sizes: [[rng.tensor([1, 8, 3])], [rng.tensor([2, 13, 3])]],
};

/** The model against onnxruntime at both sizes: as loaded (interpreter) and compiled once (reference backend, nothing in fallback). */
function expectMatchesOrt(c: Case): void {
  const model = buildSymbolicModel(c.spec);

  test('imports with shape values known up to symbols and matches onnxruntime', async () => {
    const graph = loadOnnx(model);
    for (const inputs of c.sizes) {
      const [expected] = await runOrtModel(model, inputs);
      const [actual] = interpret(graph, inputs);
      expectClose(actual!, expected!, FP32, `at [${inputs[0]!.shape.join(', ')}]`);
    }
  });

  test('compiles once with nothing in fallback and matches onnxruntime at both sizes', async () => {
    const program = await compile(model, { backend: 'reference', inputs: c.ranges, minBlockSize: 1 });
    try {
      expect(program.report.ops.filter((o) => !o.converted).map((o) => `${o.node} (${o.target}): ${o.reasons.join('; ')}`)).toEqual([]);
      expect(program.report.segments.map((s) => s.kind)).toEqual(['engine']);
      for (const inputs of c.sizes) {
        const [expected] = await runOrtModel(model, inputs);
        const [actual] = await program.run(inputs);
        expectClose(actual!, expected!, FP32, `at [${inputs[0]!.shape.join(', ')}]`);
      }
    } finally {
      program.dispose();
    }
  }, 60_000);
}

/**
 * A decoder's causal mask as traced: arange(seq) compared with itself (run-time values),
 * `mask[None, None].expand(batch, -1, -1, -1)` (the idiom), then Where into 0 / -1e9, plus
 * the ids so the batch rows differ.
 */
const causalMask: Case = {
  spec: {
    inputs: { ids: { dtype: 'int64', dims: ['batch', 'seq'] } },
    nodes: [
      { op: 'Shape', inputs: ['ids'], outputs: ['shape'] },
      ...sizeOf('shape', 0, 'b'),
      ...sizeOf('shape', 1, 's'),
      constantNode('zero', i64Scalar(0)),
      constantNode('one', i64Scalar(1)),
      { op: 'Range', inputs: ['zero', 's', 'one'], outputs: ['positions'] },
      constantNode('ax0', i64([0])),
      constantNode('ax1', i64([1])),
      constantNode('ax01', i64([0, 1])),
      { op: 'Unsqueeze', inputs: ['positions', 'ax1'], outputs: ['q'] },
      { op: 'Unsqueeze', inputs: ['positions', 'ax0'], outputs: ['k'] },
      { op: 'LessOrEqual', inputs: ['k', 'q'], outputs: ['allowed'] },
      { op: 'Unsqueeze', inputs: ['allowed', 'ax01'], outputs: ['allowed4'] },
      ...torchscriptExpand('allowed4', ['b', -1, -1, -1], 'mask'),
      constantNode('open', Tensor.scalar('float32', 0)),
      constantNode('closed', Tensor.scalar('float32', -1e9)),
      { op: 'Where', inputs: ['mask', 'open', 'closed'], outputs: ['bias'] },
      { op: 'Cast', inputs: ['ids'], outputs: ['idsf'], attrs: { to: 1 } },
      constantNode('ax12', i64([1, 2])),
      { op: 'Unsqueeze', inputs: ['idsf', 'ax12'], outputs: ['ids4'] },
      { op: 'Add', inputs: ['bias', 'ids4'], outputs: ['y'] },
    ],
    outputs: ['y'],
  },
  ranges: { ids: { min: [1, 1], opt: [2, 8], max: [4, 32] } },
  sizes: [[rng.intTensor([1, 8], 0, 50)], [rng.intTensor([2, 13], 0, 50)]],
};

describe.each([
  ['bert token types: expand(batch, seq)', bertLike],
  ['rotary: expand(b, -1, 1)', rotaryLike],
  ['expand(b * 1, -1, -1)', arithmeticSize],
  ['causal mask: arange compare, expand(b, -1, -1, -1), Where', causalMask],
] as const)('TorchScript expand idiom, %s', (_name, c) => expectMatchesOrt(c));

/** -INT64_MAX, exactly: flip's end. */
const MINUS_INT64_MAX = Tensor.from('int64', [1], [-(2n ** 63n - 1n)]);

/**
 * swin's `F.pad(x, (0, 0, 0, pad_r, 0, pad_b))` with pad_r = (4 - W % 4) % 4 (and pad_b from
 * H) for x [B, H, W, C], as the TorchScript exporter's _prepare_onnx_paddings writes it:
 * the torch-order list is extended with zeros to 2·rank, reshaped to [-1, 2], flipped
 * (Slice with step -1), transposed and flattened into ONNX's begins-then-ends order.
 */
function swinPad(dims: ReadonlyArray<number | string>, sizes: Tensor[][]): Case {
  const dimSize = (axis: number, out: string): SymNode[] => [
    ...sizeOf('shape', axis, `${out}_n`),
    { op: 'Mod', inputs: [`${out}_n`, 'win'], outputs: [`${out}_m`] },
    { op: 'Sub', inputs: ['win', `${out}_m`], outputs: [`${out}_s`] },
    { op: 'Mod', inputs: [`${out}_s`, 'win'], outputs: [out] },
  ];
  const torchOrder: Array<string | number> = [0, 0, 0, 'pad_r', 0, 'pad_b'];
  const listed: SymNode[] = [constantNode('axes0', i64([0]))];
  const names = torchOrder.map((p, i) => {
    if (typeof p === 'number') listed.push(constantNode(`pl${i}`, i64([p])));
    else listed.push({ op: 'Unsqueeze', inputs: [p, 'axes0'], outputs: [`pl${i}`] });
    return `pl${i}`;
  });
  return {
    spec: {
      inputs: { x: { dtype: 'float32', dims } },
      nodes: [
        { op: 'Shape', inputs: ['x'], outputs: ['shape'] },
        constantNode('win', i64Scalar(4)),
        ...dimSize(1, 'pad_b'),
        ...dimSize(2, 'pad_r'),
        ...listed,
        { op: 'Concat', inputs: names, outputs: ['pad'], attrs: { axis: 0 } },
        { op: 'Shape', inputs: ['pad'], outputs: ['pad_shape'] },
        { op: 'Gather', inputs: ['pad_shape', 'axes0'], outputs: ['pad_len'], attrs: { axis: 0 } },
        constantNode('rank', i64Scalar(4)),
        constantNode('two', i64Scalar(2)),
        { op: 'Mul', inputs: ['rank', 'two'], outputs: ['rank2'] },
        { op: 'Sub', inputs: ['rank2', 'pad_len'], outputs: ['extension'] },
        { op: 'Cast', inputs: ['pad'], outputs: ['pad64'], attrs: { to: 7 } },
        { op: 'ConstantOfShape', inputs: ['extension'], outputs: ['zeros'], attrs: { value: i64([0]) } },
        { op: 'Concat', inputs: ['pad64', 'zeros'], outputs: ['paddings'], attrs: { axis: 0 } },
        constantNode('pairs', i64([-1, 2])),
        { op: 'Reshape', inputs: ['paddings', 'pairs'], outputs: ['paired'] },
        constantNode('m1', i64([-1])),
        constantNode('end', MINUS_INT64_MAX),
        { op: 'Slice', inputs: ['paired', 'm1', 'end', 'axes0', 'm1'], outputs: ['flipped'] },
        { op: 'Transpose', inputs: ['flipped'], outputs: ['begins_ends'], attrs: { perm: [1, 0] } },
        { op: 'Reshape', inputs: ['begins_ends', 'm1'], outputs: ['onnx_pads'] },
        { op: 'Cast', inputs: ['onnx_pads'], outputs: ['pads'], attrs: { to: 7 } },
        constantNode('zero', Tensor.scalar('float32', 0)),
        { op: 'Pad', inputs: ['x', 'pads', 'zero'], outputs: ['y'], attrs: { mode: 'constant' }, name: '/features/attn/Pad' },
      ],
      outputs: ['y'],
    },
    ranges: { x: { min: dims.map((d) => (typeof d === 'number' ? d : 1)), opt: sizes[0]![0]!.shape as number[], max: dims.map((d) => (typeof d === 'number' ? d : 16)) } },
    sizes,
  };
}

describe.each([
  ['static H, W (the zoo: only the batch is dynamic)', swinPad(['batch', 6, 7, 3], [[rng.tensor([1, 6, 7, 3])], [rng.tensor([3, 6, 7, 3])]])],
  ['symbolic H, W (pads known up to symbols)', swinPad(['batch', 'h', 'w', 3], [[rng.tensor([1, 6, 7, 3])], [rng.tensor([2, 9, 4, 3])]])],
] as const)('TorchScript pad idiom (swin window padding), %s', (_name, c) => expectMatchesOrt(c));

describe('comparisons of shape values fold when the symbols decide them', () => {
  /** y = Expand(row, Where(cond, size, ones)) for x [batch, seq]; cond is built by `condNodes` from b, s (scalars). */
  function model(condNodes: SymNode[]): Uint8Array {
    return buildSymbolicModel({
      inputs: { x: { dtype: 'float32', dims: ['batch', 'seq'] } },
      initializers: { row: rng.tensor([1, 1]), size2: i64([1, 1]) },
      nodes: [
        { op: 'Shape', inputs: ['x'], outputs: ['shape'] },
        ...sizeOf('shape', 0, 'b'),
        ...sizeOf('shape', 1, 's'),
        ...condNodes,
        { op: 'Where', inputs: ['cond', 'shape', 'size2'], outputs: ['target'] },
        { op: 'Expand', inputs: ['row', 'target'], outputs: ['e'], name: 'expand' },
        { op: 'Add', inputs: ['e', 'x'], outputs: ['y'] },
      ],
      outputs: ['y'],
    });
  }
  const sizes = [rng.tensor([1, 8]), rng.tensor([3, 5])];

  test.each([
    ['Less(-1, b) for a size b', [constantNode('m1', i64Scalar(-1)), { op: 'Less', inputs: ['m1', 'b'], outputs: ['cond'] }]],
    ['GreaterOrEqual(s + 1, 1)', [constantNode('one', i64Scalar(1)), { op: 'Add', inputs: ['s', 'one'], outputs: ['s1'] }, { op: 'GreaterOrEqual', inputs: ['s1', 'one'], outputs: ['cond'] }]],
    [
      'And(Not(Equal(b, -2)), LessOrEqual(-2, b + 2))',
      [
        constantNode('m2', i64Scalar(-2)),
        constantNode('two', i64Scalar(2)),
        { op: 'Equal', inputs: ['b', 'm2'], outputs: ['eq'] },
        { op: 'Not', inputs: ['eq'], outputs: ['ne'] },
        { op: 'Add', inputs: ['b', 'two'], outputs: ['b2'] },
        { op: 'LessOrEqual', inputs: ['m2', 'b2'], outputs: ['le'] },
        { op: 'And', inputs: ['ne', 'le'], outputs: ['cond'] },
      ],
    ],
  ] as Array<[string, SymNode[]]>)('%s: true for every size, so the target is the input shape', async (_name, condNodes) => {
    const m = model(condNodes);
    const graph = loadOnnx(m);
    for (const x of sizes) {
      const [expected] = await runOrtModel(m, [x]);
      const [actual] = interpret(graph, [x]);
      expect(actual!.shape).toEqual(x.shape);
      expectClose(actual!, expected!, FP32, `at [${x.shape.join(', ')}]`);
    }
  });

  test('Equal(b, 1) is only known at run time: the Expand is imported at run time (trt.deferred_node), with onnxruntime\'s values', async () => {
    const m = model([constantNode('one', i64Scalar(1)), { op: 'Equal', inputs: ['b', 'one'], outputs: ['cond'] }]);
    const graph = loadOnnx(m);
    expect(graph.nodes.filter((n) => n.target === 'trt.deferred_node').map((n) => n.name)).toEqual(['expand']);
    for (const x of sizes) {
      const [expected] = await runOrtModel(m, [x]);
      const [actual] = interpret(graph, [x]);
      expect(actual!.shape).toEqual(expected!.shape);
      expectClose(actual!, expected!, FP32, `at [${x.shape.join(', ')}]`);
    }
  });
});

test('shape values of rank 2 (Reshape, Slice on both axes, Transpose) fold and materialize as tensors matching onnxruntime', async () => {
  // [b, s, 5, b, s, 5] → [[b, s, 5], [b, s, 5]] → rows reversed, columns 2 and 0 → [[5, b], [5, b]] → transposed
  const model = buildSymbolicModel({
    inputs: { x: { dtype: 'float32', dims: ['batch', 'seq', 5] } },
    nodes: [
      { op: 'Shape', inputs: ['x'], outputs: ['shape'] },
      { op: 'Concat', inputs: ['shape', 'shape'], outputs: ['twice'], attrs: { axis: 0 } },
      constantNode('rows', i64([2, -1])),
      { op: 'Reshape', inputs: ['twice', 'rows'], outputs: ['grid'] },
      constantNode('starts', i64([-1, 2])),
      constantNode('ends', i64([-10, -100])),
      constantNode('axes', i64([0, 1])),
      constantNode('steps', i64([-1, -2])),
      { op: 'Slice', inputs: ['grid', 'starts', 'ends', 'axes', 'steps'], outputs: ['picked'] },
      { op: 'Transpose', inputs: ['picked'], outputs: ['y'], attrs: { perm: [1, 0] } },
    ],
    outputs: ['y'],
  });
  const graph = loadOnnx(model);
  // Folded at import: what is left builds the tensor from the symbols.
  expect(graph.nodes.map((n) => n.target).filter((t) => t !== 'aten.sym_size.int' && t !== 'placeholder')).toEqual(['trt.sym_tensor', 'aten.reshape.default']);
  for (const x of [rng.tensor([1, 8, 5]), rng.tensor([2, 13, 5])]) {
    const [expected] = await runOrtModel(model, [x]);
    const [actual] = interpret(graph, [x]);
    expect(actual!.shape).toEqual([2, 2]);
    expect(actual!.toArray()).toEqual(expected!.toArray());
  }
});

describe('malformed shape arithmetic on known values is still refused naming the node', () => {
  const on = (nodes: SymNode[]): Uint8Array =>
    buildSymbolicModel({
      inputs: { x: { dtype: 'float32', dims: ['batch', 'seq', 5] } },
      nodes: [{ op: 'Shape', inputs: ['x'], outputs: ['shape'] }, ...nodes],
      outputs: ['y'],
    });

  test('a Slice repeating an axis', () => {
    const m = on([
      constantNode('starts', i64([0, 1])),
      constantNode('ends', i64([1, 2])),
      constantNode('axes', i64([0, 0])),
      { op: 'Slice', inputs: ['shape', 'starts', 'ends', 'axes'], outputs: ['y'], name: 'slice' },
    ]);
    expect(() => loadOnnx(m)).toThrow(expect.objectContaining({ code: 'E_BAD_MODEL', message: expect.stringContaining('ONNX node "slice" (Slice)') }));
  });

  test('a Reshape of 3 shape values to [2, -1]', () => {
    const m = on([constantNode('rows', i64([2, -1])), { op: 'Reshape', inputs: ['shape', 'rows'], outputs: ['y'], name: 'rows' }]);
    expect(() => loadOnnx(m)).toThrow(expect.objectContaining({ code: 'E_BAD_MODEL', message: expect.stringContaining('ONNX node "rows" (Reshape)') }));
  });
});
