/**
 * ONNX control flow: If, Loop and Scan import as trt.if / trt.loop / trt.scan nodes whose
 * subgraphs read outer values through explicit inputs; the interpreter runs them (checked
 * against onnxruntime), bounded loops fail typed, the graphs survive serialization, and
 * compile() runs the control-flow node in a fallback segment between engine segments.
 */
import { compile } from '../../../lib/compile';
import { loadOnnx } from '../../../lib/frontends/onnx';
import { interpret } from '../../../lib/interpreter';
import type { Graph } from '../../../lib/ir/graph';
import { deserializeGraph, deserializeGraphFromBuffer, serializeGraph, serializeGraphToBuffer } from '../../../lib/ir/serialize';
import { formatShape } from '../../../lib/ir/symbolic';
import { Tensor } from '../../../lib/ir/tensor';
import { verifyGraph } from '../../../lib/ir/verify';
import { expectClose, FP32 } from '../../helpers/compare';
import { thrownError as errorOf } from '../../helpers/errors';
import { buildSymbolicModel, type SymGraphAttr, type SymModelSpec } from '../../helpers/onnx-symbolic-model';
import { closeOrt, runOrtModel } from '../../helpers/ort-single-op';

afterAll(closeOrt);

const f32 = (shape: number[], values: number[]): Tensor => Tensor.from('float32', shape, values);
const i64 = (value: number): Tensor => Tensor.scalar('int64', value);
const bool = (value: boolean): Tensor => Tensor.from('bool', [], [value ? 1 : 0]);

/** Imports `spec`, runs it through the interpreter and onnxruntime, and expects the same outputs. */
async function againstOrt(spec: SymModelSpec, inputs: Tensor[]): Promise<Tensor[]> {
  const model = buildSymbolicModel(spec);
  const ours = interpret(loadOnnx(model), inputs);
  const theirs = await runOrtModel(model, inputs);
  expect(ours.length).toBe(theirs.length);
  ours.forEach((t, i) => {
    expect(t.shape).toEqual(theirs[i]!.shape);
    expectClose(t, theirs[i]!, FP32);
  });
  return ours;
}

const branch = (op: string, a: string, b: string): SymGraphAttr => ({
  graph: { inputs: [], nodes: [{ op, inputs: [a, b], outputs: ['out'] }], outputs: [{ name: 'out', dtype: 'float32', dims: [3] }] },
});

const ifModel: SymModelSpec = {
  inputs: { c: { dtype: 'bool', dims: [] }, x: { dtype: 'float32', dims: [3] }, y: { dtype: 'float32', dims: [3] } },
  nodes: [{ op: 'If', inputs: ['c'], outputs: ['z'], attrs: { then_branch: branch('Add', 'x', 'y'), else_branch: branch('Mul', 'x', 'y') } }],
  outputs: ['z'],
};

describe('If', () => {
  test('runs the branch the condition picks; each branch reads outer values as inputs of its own', async () => {
    const g = loadOnnx(buildSymbolicModel(ifModel));
    const node = g.calls().find((n) => n.target === 'trt.if')!;
    expect(node.subgraphs!.then_branch!.inputs.map((v) => v.name)).toEqual(['x', 'y']);
    expect(node.args.then_inputs).toEqual([g.inputs[1], g.inputs[2]]);
    const x = f32([3], [1, 2, 3]);
    const y = f32([3], [4, 5, 6]);
    expect((await againstOrt(ifModel, [bool(true), x, y]))[0]!.toArray()).toEqual([5, 7, 9]);
    expect((await againstOrt(ifModel, [bool(false), x, y]))[0]!.toArray()).toEqual([4, 10, 18]);
  });

  test('a condition known at import imports the branch taken in place: no control flow is left', () => {
    const spec: SymModelSpec = { ...ifModel, inputs: { x: ifModel.inputs.x!, y: ifModel.inputs.y! }, initializers: { c: bool(false) } };
    const g = loadOnnx(buildSymbolicModel(spec));
    expect(g.calls().map((n) => n.target)).toEqual(['aten.mul.Tensor']);
    expect(interpret(g, [f32([3], [1, 2, 3]), f32([3], [2, 2, 2])])[0]!.toArray()).toEqual([2, 4, 6]);
  });

  test('branches of different sizes give a run-time dim, which the run fills in', () => {
    const spec: SymModelSpec = {
      ...ifModel,
      nodes: [
        {
          op: 'If',
          inputs: ['c'],
          outputs: ['z'],
          attrs: {
            then_branch: { graph: { inputs: [], nodes: [{ op: 'Identity', inputs: ['x'], outputs: ['out'] }], outputs: [{ name: 'out', dtype: 'float32' }] } },
            else_branch: { graph: { inputs: [], nodes: [{ op: 'Concat', inputs: ['x', 'y'], outputs: ['out'], attrs: { axis: 0 } }], outputs: [{ name: 'out', dtype: 'float32' }] } },
          },
        },
      ],
    };
    const g = loadOnnx(buildSymbolicModel(spec));
    expect(formatShape(g.outputs[0]!.tensorType.shape)).toMatch(/^\[data_dependent_\w+\]$/);
    const x = f32([3], [1, 2, 3]);
    expect(interpret(g, [bool(true), x, x])[0]!.shape).toEqual([3]);
    expect(interpret(g, [bool(false), x, x])[0]!.shape).toEqual([6]);
  });

  test('branches that disagree in their output count are E_BAD_MODEL naming the node', () => {
    const spec: SymModelSpec = {
      ...ifModel,
      nodes: [
        {
          op: 'If',
          name: 'pick',
          inputs: ['c'],
          outputs: ['z'],
          attrs: {
            then_branch: branch('Add', 'x', 'y'),
            else_branch: { graph: { ...branch('Mul', 'x', 'y').graph, outputs: [{ name: 'out', dtype: 'float32' }, { name: 'x', dtype: 'float32' }] } },
          },
        },
      ],
    };
    const e = errorOf(() => loadOnnx(buildSymbolicModel(spec)));
    expect(e.code).toBe('E_BAD_MODEL');
    expect(e.message).toMatch(/ONNX node "pick" \(If\): then_branch has 1 outputs, else_branch 2/);
  });
});

/**
 * body(i, c, acc) -> (i < k, acc + step, acc_new * i): reads k and step from outside. It runs
 * while the body's last condition holds and i < M. `passThrough`: the body's condition is its
 * condition input instead.
 */
/**
 * A Loop body with one float32 carried value `acc` (dims `dims`, null: unknown) that `node`
 * turns into `acc_new`, passing the condition through.
 */
function carriedLoopBody(node: SymGraphAttr['graph']['nodes'][number], dims: number[] | null): SymGraphAttr {
  return {
    graph: {
      inputs: [
        { name: 'i', dtype: 'int64', dims: [] },
        { name: 'c', dtype: 'bool', dims: [] },
        { name: 'acc', dtype: 'float32', dims },
      ],
      nodes: [node],
      outputs: [
        { name: 'c', dtype: 'bool', dims: [] },
        { name: 'acc_new', dtype: 'float32', dims },
      ],
    },
  };
}

function loopModel(withM: boolean, withCond: boolean, mConstant?: number, passThrough = false): SymModelSpec {
  const body: SymGraphAttr = {
    graph: {
      inputs: [
        { name: 'i', dtype: 'int64', dims: [] },
        { name: 'c_in', dtype: 'bool', dims: [] },
        { name: 'acc', dtype: 'float32', dims: [2] },
      ],
      nodes: [
        passThrough ? { op: 'Identity', inputs: ['c_in'], outputs: ['c_out'] } : { op: 'Less', inputs: ['i', 'k'], outputs: ['c_out'] },
        { op: 'Add', inputs: ['acc', 'step'], outputs: ['acc_new'] },
        { op: 'Cast', inputs: ['i'], outputs: ['i_f'], attrs: { to: 1 } },
        { op: 'Mul', inputs: ['acc_new', 'i_f'], outputs: ['scan'] },
      ],
      outputs: [
        { name: 'c_out', dtype: 'bool', dims: [] },
        { name: 'acc_new', dtype: 'float32', dims: [2] },
        { name: 'scan', dtype: 'float32', dims: [2] },
      ],
    },
  };
  const inputs: SymModelSpec['inputs'] = {
    ...(withM && mConstant === undefined ? { m: { dtype: 'int64', dims: [] } } : {}),
    ...(withCond ? { cond: { dtype: 'bool', dims: [] } } : {}),
    a: { dtype: 'float32', dims: [2] },
    step: { dtype: 'float32', dims: [2] },
    k: { dtype: 'int64', dims: [] },
  };
  return {
    inputs,
    ...(mConstant === undefined ? {} : { initializers: { m: i64(mConstant) } }),
    nodes: [{ op: 'Loop', name: 'loop', inputs: [withM ? 'm' : '', withCond ? 'cond' : '', 'a'], outputs: ['acc_final', 'scans'], attrs: { body } }],
    outputs: ['acc_final', 'scans'],
  };
}

describe('Loop', () => {
  const a = f32([2], [1, 2]);
  const step = f32([2], [10, 20]);

  test('with M and a condition: the body condition ends it; carried values and stacked scan outputs match onnxruntime', async () => {
    const [acc, scans] = await againstOrt(loopModel(true, true), [i64(10), bool(true), a, step, i64(2)]);
    // Iterations 0, 1, 2 (the third sets the condition false): acc = a + 3·step.
    expect(acc!.toArray()).toEqual([31, 62]);
    expect(scans!.shape).toEqual([3, 2]);
    expect(scans!.toArray()).toEqual([0, 0, 21, 42, 62, 124]);
  });

  test('M ends it before the condition does', async () => {
    const [acc, scans] = await againstOrt(loopModel(true, true), [i64(1), bool(true), a, step, i64(5)]);
    expect(acc!.toArray()).toEqual([11, 22]);
    expect(scans!.shape).toEqual([1, 2]);
  });

  test('a false initial condition runs no iteration: the carried values come back and the scan outputs are empty', async () => {
    const [acc, scans] = await againstOrt(loopModel(true, true), [i64(5), bool(false), a, step, i64(5)]);
    expect(acc!.toArray()).toEqual([1, 2]);
    expect(scans!.shape).toEqual([0, 2]);
  });

  test('without M: a while loop on the condition', async () => {
    const [acc] = await againstOrt(loopModel(false, true), [bool(true), a, step, i64(3)]);
    expect(acc!.toArray()).toEqual([41, 82]);
  });

  test('without a condition input the body condition still ends the loop, as onnxruntime runs it', async () => {
    const [acc, scans] = await againstOrt(loopModel(true, false), [i64(4), a, step, i64(0)]);
    expect(acc!.toArray()).toEqual([11, 22]);
    expect(scans!.shape).toEqual([1, 2]);
    // A run-time M: the scan length is a run-time dim.
    const dynamic = loadOnnx(buildSymbolicModel(loopModel(true, false)));
    expect(formatShape(dynamic.outputs[1]!.tensorType.shape)).toMatch(/^\[data_dependent_\w+, 2\]$/);
  });

  test('a constant M and a condition the body passes through: M iterations, and a static scan length', async () => {
    const g = loadOnnx(buildSymbolicModel(loopModel(true, false, 4, true)));
    expect(formatShape(g.outputs[1]!.tensorType.shape)).toBe('[4, 2]');
    const [acc, scans] = await againstOrt(loopModel(true, false, 4, true), [a, step, i64(0)]);
    expect(acc!.toArray()).toEqual([41, 82]);
    expect(scans!.shape).toEqual([4, 2]);
  });

  test('a carried value that grows per iteration gets a run-time dim in the body and at the output', () => {
    const body = carriedLoopBody({ op: 'Concat', inputs: ['acc', 'x'], outputs: ['acc_new'], attrs: { axis: 0 } }, null);
    const g = loadOnnx(
      buildSymbolicModel({
        inputs: { m: { dtype: 'int64', dims: [] }, x: { dtype: 'float32', dims: [2] } },
        nodes: [{ op: 'Loop', inputs: ['m', '', 'x'], outputs: ['y'], attrs: { body } }],
        outputs: ['y'],
      }),
    );
    expect(formatShape(g.outputs[0]!.tensorType.shape)).toMatch(/^\[data_dependent_\w+\]$/);
    const [y] = interpret(g, [i64(3), f32([2], [1, 2])]);
    expect(y!.toArray()).toEqual([1, 2, 1, 2, 1, 2, 1, 2]);
  });

  describe('bounds', () => {
    const forever = (): Graph => {
      const body = carriedLoopBody({ op: 'Add', inputs: ['acc', 'acc'], outputs: ['acc_new'] }, [1]);
      return loadOnnx(
        buildSymbolicModel({
          inputs: { x: { dtype: 'float32', dims: [1] } },
          nodes: [{ op: 'Loop', name: 'spin', inputs: ['', '', 'x'], outputs: ['y'], attrs: { body } }],
          outputs: ['y'],
        }),
      );
    };

    test('a loop with neither M nor a condition is cut at maxLoopIterations with E_RESOURCE_LIMIT naming the node', () => {
      const e = errorOf(() => interpret(forever(), [f32([1], [0])], { limits: { maxLoopIterations: 50 } }));
      expect(e.code).toBe('E_RESOURCE_LIMIT');
      expect(e.message).toMatch(/node spin \(trt\.loop\).*run 50 iterations without ending/);
      expect(e.details).toMatchObject({ node: 'spin', maxLoopIterations: 50 });
    });

    test('the default bound holds too', () => {
      const e = errorOf(() => interpret(forever(), [f32([1], [0])]));
      expect(e.code).toBe('E_RESOURCE_LIMIT');
      expect(e.message).toMatch(/run 100000 iterations without ending/);
    }, 60_000);

    test('a carried value that outgrows maxTensorBytes fails typed before it is built further', () => {
      const body = carriedLoopBody({ op: 'Concat', inputs: ['acc', 'acc'], outputs: ['acc_new'], attrs: { axis: 0 } }, null);
      const g = loadOnnx(
        buildSymbolicModel({
          inputs: { x: { dtype: 'float32', dims: [1] } },
          nodes: [{ op: 'Loop', name: 'double', inputs: ['', '', 'x'], outputs: ['y'], attrs: { body } }],
          outputs: ['y'],
        }),
      );
      const e = errorOf(() => interpret(g, [f32([1], [1])], { limits: { maxTensorBytes: 1024 } }));
      expect(e.code).toBe('E_RESOURCE_LIMIT');
      expect(e.message).toMatch(/node double \(trt\.loop\).*loop-carried value 0 at iteration 8 would grow to 2048 bytes/);
    });
  });
});

describe('Scan', () => {
  // body(s, x) -> (s + x, (s + x) * w): w read from outside.
  const body: SymGraphAttr = {
    graph: {
      inputs: [
        { name: 's', dtype: 'float32', dims: [2] },
        { name: 'x', dtype: 'float32', dims: [2] },
      ],
      nodes: [
        { op: 'Add', inputs: ['s', 'x'], outputs: ['s_new'] },
        { op: 'Mul', inputs: ['s_new', 'w'], outputs: ['y'] },
      ],
      outputs: [
        { name: 's_new', dtype: 'float32', dims: [2] },
        { name: 'y', dtype: 'float32', dims: [2] },
      ],
    },
  };
  const spec = (attrs: Record<string, readonly number[]>, xsDims: number[]): SymModelSpec => ({
    inputs: { init: { dtype: 'float32', dims: [2] }, xs: { dtype: 'float32', dims: xsDims }, w: { dtype: 'float32', dims: [2] } },
    nodes: [{ op: 'Scan', inputs: ['init', 'xs'], outputs: ['final', 'ys'], attrs: { body, num_scan_inputs: 1, ...attrs } }],
    outputs: ['final', 'ys'],
    opset: 11,
  });
  const init = f32([2], [0, 0]);
  const w = f32([2], [1, -1]);

  test('forward over axis 0, outputs stacked on axis 0', async () => {
    const [final, ys] = await againstOrt(spec({}, [3, 2]), [init, f32([3, 2], [1, 2, 3, 4, 5, 6]), w]);
    expect(final!.toArray()).toEqual([9, 12]);
    expect(ys!.toArray()).toEqual([1, -2, 4, -6, 9, -12]);
  });

  test('reversed input over axis 1, output stacked on axis 1 in reverse', async () => {
    const attrs = { scan_input_axes: [1], scan_input_directions: [1], scan_output_axes: [1], scan_output_directions: [1] };
    const [final, ys] = await againstOrt(spec(attrs, [2, 3]), [init, f32([2, 3], [1, 2, 3, 4, 5, 6]), w]);
    expect(final!.toArray()).toEqual([6, 15]);
    expect(ys!.shape).toEqual([2, 3]);
  });

  test('negative axes count from the end', async () => {
    const attrs = { scan_input_axes: [-1], scan_output_axes: [-1] };
    const [, ys] = await againstOrt(spec(attrs, [2, 3]), [init, f32([2, 3], [1, 2, 3, 4, 5, 6]), w]);
    expect(ys!.shape).toEqual([2, 3]);
  });

  // Scan-8: input 0 is sequence_lens (left out here); states and scan inputs have a batch axis first.
  const spec8 = (attrs: Record<string, readonly number[]>, lens: Tensor | null): SymModelSpec => ({
    inputs: { init: { dtype: 'float32', dims: [2, 2] }, xs: { dtype: 'float32', dims: [2, 3, 2] }, w: { dtype: 'float32', dims: [2] } },
    ...(lens === null ? {} : { initializers: { lens } }),
    nodes: [{ op: 'Scan', inputs: [lens === null ? '' : 'lens', 'init', 'xs'], outputs: ['final', 'ys'], attrs: { body, num_scan_inputs: 1, ...attrs } }],
    outputs: ['final', 'ys'],
    opset: 8,
  });

  test('Scan-8: each batch item scanned over axis 1 (forward and reversed), a full-length sequence_lens', async () => {
    const xs = f32([2, 3, 2], [1, 2, 3, 4, 5, 6, -1, 0, 2, 2, 0.5, -3]);
    const i2 = f32([2, 2], [0, 1, 10, -10]);
    const [final] = await againstOrt(spec8({}, null), [i2, xs, w]);
    expect(final!.toArray()).toEqual([9, 13, 11.5, -11]);
    await againstOrt(spec8({ directions: [1] }, null), [i2, xs, w]);
    await againstOrt(spec8({}, Tensor.from('int64', [2], [3, 3])), [i2, xs, w]);
  });

  test('Scan-8 with sequence_lens shorter than the scan is refused naming the form', () => {
    const e = errorOf(() => loadOnnx(buildSymbolicModel(spec8({}, Tensor.from('int64', [2], [3, 2])))));
    expect(e.code).toBe('E_UNSUPPORTED_OP');
    expect(e.message).toMatch(/sequence_lens shorter than the scan inputs/);
  });
});

describe('the IR', () => {
  test('serialization carries the subgraphs, and the copy computes the same', () => {
    const g = loadOnnx(buildSymbolicModel(loopModel(true, true)));
    const copy = deserializeGraphFromBuffer(serializeGraphToBuffer(g));
    const inputs = [i64(10), bool(true), f32([2], [1, 2]), f32([2], [3, 4]), i64(4)];
    expect(interpret(copy, inputs).map((t) => t.toArray())).toEqual(interpret(g, inputs).map((t) => t.toArray()));
  });

  test('a serialized control-flow node without its subgraph is E_BAD_MODEL', () => {
    const { json, weights } = serializeGraph(loadOnnx(buildSymbolicModel(ifModel)));
    const node = json.nodes.find((n) => n.kind === 'call' && n.target === 'trt.if')!;
    if (node.kind === 'call') delete node.subgraphs!.else_branch;
    const e = errorOf(() => deserializeGraph(JSON.parse(JSON.stringify(json)), weights));
    expect(e.code).toBe('E_BAD_MODEL');
    expect(e.message).toMatch(/has no subgraph else_branch/);
  });

  test('verifyGraph checks the subgraphs against the node', () => {
    const g = loadOnnx(buildSymbolicModel(ifModel));
    const node = g.calls().find((n) => n.target === 'trt.if')!;
    // A then_branch that no longer takes the node's inputs.
    node.args.then_inputs = [];
    const e = errorOf(() => verifyGraph(g));
    expect(e.code).toBe('E_INTERNAL');
    expect(e.message).toMatch(/then_branch takes 2 inputs, the node gives it 0/);
  });
});

test('compile() runs the If in a fallback segment, the ops around it in engines', async () => {
  const spec: SymModelSpec = {
    inputs: { c: { dtype: 'bool', dims: [] }, x: { dtype: 'float32', dims: [3] }, y: { dtype: 'float32', dims: [3] } },
    nodes: [
      { op: 'Relu', inputs: ['x'], outputs: ['r'] },
      { op: 'If', inputs: ['c'], outputs: ['z'], attrs: { then_branch: branch('Add', 'r', 'y'), else_branch: branch('Mul', 'r', 'y') } },
      { op: 'Sigmoid', inputs: ['z'], outputs: ['out'] },
    ],
    outputs: ['out'],
  };
  const program = await compile(buildSymbolicModel(spec), { backend: 'reference', minBlockSize: 1 });
  try {
    expect(program.data.segments.map((s) => s.kind)).toEqual(['engine', 'fallback', 'engine']);
    expect(program.report.ops.filter((o) => !o.converted).map((o) => o.target)).toEqual(['trt.if']);
    const x = f32([3], [-1, 2, 3]);
    const y = f32([3], [1, 1, 2]);
    for (const c of [true, false]) {
      const [out] = await program.run([bool(c), x, y]);
      expectClose(out!, interpret(loadOnnx(buildSymbolicModel(spec)), [bool(c), x, y])[0]!, FP32);
    }
  } finally {
    await program.dispose();
  }
});
