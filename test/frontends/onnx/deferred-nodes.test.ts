/**
 * ONNX nodes imported at run time (lib/frontends/onnx/deferred.ts): an op whose shape-like
 * input (a Reshape's shape, a Slice's starts, a TopK's K...) the model computes from tensor
 * data is kept as a trt.deferred_node, typed by its op's rule, and imported with the run's
 * values at every run. Each model here computes that input from a graph input (so no import
 * could know it), and is compared with onnxruntime-node on the same model: through loadOnnx +
 * interpret, and compiled on the reference and onnxruntime backends (the node in a fallback
 * segment), also after a save and load of the program.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

import { compile } from '../../../lib/compile';
import { loadOnnx } from '../../../lib/frontends/onnx';
import { interpret } from '../../../lib/interpreter';
import { Tensor } from '../../../lib/ir/tensor';
import { loadProgram } from '../../../lib/runtime/program-file';
import { expectClose, FP32 } from '../../helpers/compare';
import { buildSymbolicModel, constantNode, i64, type SymNode } from '../../helpers/onnx-symbolic-model';
import { closeOrt, runOrtModel } from '../../helpers/ort-single-op';
import { Random } from '../../helpers/random';

afterAll(closeOrt);

const rng = new Random(31);

interface Case {
  name: string;
  /** The op under test reads `v` (a graph input, int64 [n]) through Identity as its shape-like input. */
  nodes: SymNode[];
  x: Tensor;
  v: Tensor;
  /** The rank loadOnnx gives each output (its sizes unknown until the run). */
  ranks: number[];
}

const x34 = rng.tensor([3, 4]);
const CASES: Case[] = [
  { name: 'Reshape', nodes: [{ op: 'Reshape', inputs: ['x', 'k'], outputs: ['y'] }], x: x34, v: i64([2, 3, -1]), ranks: [3] },
  { name: 'Expand', nodes: [{ op: 'Expand', inputs: ['x', 'k'], outputs: ['y'] }], x: rng.tensor([3, 1]), v: i64([2, 3, 5]), ranks: [3] },
  { name: 'Tile', nodes: [{ op: 'Tile', inputs: ['x', 'k'], outputs: ['y'] }], x: x34, v: i64([2, 1]), ranks: [2] },
  {
    name: 'Slice (starts from data)',
    nodes: [constantNode('ends', i64([3, 4])), { op: 'Slice', inputs: ['x', 'k', 'ends'], outputs: ['y'] }],
    x: x34,
    v: i64([1, 2]),
    ranks: [2],
  },
  { name: 'Pad', nodes: [{ op: 'Pad', inputs: ['x', 'k'], outputs: ['y'], attrs: { mode: 'reflect' } }], x: x34, v: i64([1, 0, 0, 2]), ranks: [2] },
  { name: 'TopK (K from data)', nodes: [{ op: 'TopK', inputs: ['x', 'k'], outputs: ['y', 'idx'], attrs: { axis: 1 } }], x: x34, v: i64([2]), ranks: [2, 2] },
  { name: 'ConstantOfShape', nodes: [{ op: 'ConstantOfShape', inputs: ['k'], outputs: ['c'] }, { op: 'Add', inputs: ['c', 'x'], outputs: ['y'] }], x: rng.tensor([4]), v: i64([2, 3, 4]), ranks: [3] },
  { name: 'Unsqueeze', nodes: [{ op: 'Unsqueeze', inputs: ['x', 'k'], outputs: ['y'] }], x: x34, v: i64([0, 3]), ranks: [4] },
  { name: 'ReduceSum, keepdims 0', nodes: [{ op: 'ReduceSum', inputs: ['x', 'k'], outputs: ['y'], attrs: { keepdims: 0 } }], x: x34, v: i64([1]), ranks: [1] },
  { name: 'Resize (sizes from data)', nodes: [{ op: 'Resize', inputs: ['x4', '', '', 'k'], outputs: ['y'], attrs: { mode: 'nearest' } }], x: rng.tensor([1, 1, 2, 3]), v: i64([1, 1, 4, 5]), ranks: [4] },
];

/** The case's model: x and v are graph inputs, v reaches the op through an Identity (a computed value). */
function model(c: Case): Uint8Array {
  const nodes: SymNode[] = [{ op: 'Identity', inputs: ['v'], outputs: ['k'] }, ...c.nodes.map((n) => ({ ...n, inputs: n.inputs.map((i) => (i === 'x4' ? 'x' : i)) }))];
  const outputs = c.nodes.flatMap((n) => n.outputs).filter((o) => !['c', 'ends'].includes(o));
  return buildSymbolicModel({
    inputs: { x: { dtype: 'float32', dims: [...c.x.shape] }, v: { dtype: 'int64', dims: [c.v.size] } },
    nodes,
    outputs,
    opset: 18,
  });
}

describe.each(CASES)('$name with its shape-like input computed from data', (c) => {
  const bytes = model(c);

  test('loadOnnx keeps it for the run (ranks known, sizes not); interpret gives onnxruntime\'s values', async () => {
    const graph = loadOnnx(bytes);
    expect(graph.nodes.filter((n) => n.kind === 'call' && n.target === 'trt.deferred_node')).toHaveLength(1);
    expect(graph.outputs.map((o) => o.tensorType.shape.length)).toEqual(c.ranks);
    const expected = await runOrtModel(bytes, [c.x, c.v]);
    const actual = interpret(graph, [c.x, c.v]);
    actual.forEach((a, i) => {
      expect(a.shape).toEqual(expected[i]!.shape);
      expectClose(a, expected[i]!, FP32, `output ${i}`);
    });
  });
});

test.each(['reference', 'onnxruntime'] as const)('compiled on the %s backend: the node runs in a fallback segment, with the same values after a save and load', async (backend) => {
  const c = CASES[0]!;
  const bytes = model(c);
  const [expected] = await runOrtModel(bytes, [c.x, c.v]);
  const program = await compile(bytes, { backend });
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'trtn-deferred-'));
  try {
    expect(program.report.ops.filter((o) => !o.converted).map((o) => o.target)).toContain('trt.deferred_node');
    expectClose((await program.run([c.x, c.v]))[0]!, expected!, FP32);
    // Another shape at the next run: the node is imported again with the new values.
    const [other] = await program.run([c.x, i64([4, 1, 3])]);
    expect(other!.shape).toEqual([4, 1, 3]);
    const file = path.join(dir, 'p.trtp');
    await program.save(file);
    const loaded = await loadProgram(file);
    try {
      expectClose((await loaded.run([c.x, c.v]))[0]!, expected!, FP32);
    } finally {
      await loaded.dispose();
    }
  } finally {
    await program.dispose();
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('values that make no valid node are the run\'s fault: E_BAD_INPUT naming the node; the next run works', () => {
  const c = CASES[0]!;
  const graph = loadOnnx(model(c));
  expect(() => interpret(graph, [c.x, i64([5, 5, 1])])).toThrow(
    expect.objectContaining({ code: 'E_BAD_INPUT', message: expect.stringMatching(/Reshape_1.*with the values this run computed for its inputs: .*cannot view a tensor of shape \[3, 4\].* as \[5, 5, 1\]/) }),
  );
  expect(interpret(graph, [c.x, i64([12, 1, 1])])[0]!.shape).toEqual([12, 1, 1]);
});

test('sizes past the run\'s maxTensorBytes are refused before anything is allocated: E_RESOURCE_LIMIT naming the node', () => {
  const c = CASES.find((k) => k.name === 'ConstantOfShape')!;
  const graph = loadOnnx(model(c));
  const t0 = performance.now();
  expect(() => interpret(graph, [c.x, i64([1 << 20, 1 << 20, 4])])).toThrow(
    expect.objectContaining({ code: 'E_RESOURCE_LIMIT', message: expect.stringContaining('ONNX node "ConstantOfShape_1" (ConstantOfShape): with this run\'s values it makes a float32 tensor of shape [1048576, 1048576, 4]') }),
  );
  expect(() => interpret(graph, [c.x, i64([64, 64, 4])], { limits: { maxTensorBytes: 1024 } })).toThrow(expect.objectContaining({ code: 'E_RESOURCE_LIMIT' }));
  expect(performance.now() - t0).toBeLessThan(5000);
});

test('a deferred node whose stored ONNX node is damaged (a forged program file) is E_BAD_MODEL naming the node, not a crash', () => {
  const c = CASES[0]!;
  const graph = loadOnnx(model(c));
  const node = graph.nodes.find((n) => n.kind === 'call' && n.target === 'trt.deferred_node')!;
  // Bytes protobuf reads as an empty node, and bytes it cannot read at all.
  for (const bytes of [[0x0a, 0xff, 0xff, 0xff, 0x7f], [0x0a, 0x05, 0x41]]) {
    (node.args as Record<string, unknown>).node = Buffer.from(bytes).toString('base64');
    expect(() => interpret(graph, [c.x, c.v])).toThrow(
      expect.objectContaining({ code: 'E_BAD_MODEL', message: expect.stringMatching(/^node Reshape_1 \(trt.deferred_node\).*a node imported at run time holds (no ONNX node|an ONNX node without an op type)/) }),
    );
  }
});

test('an input whose length is not known at import (so neither is the output\'s rank) stays refused, naming the node', () => {
  const bytes = buildSymbolicModel({
    inputs: { x: { dtype: 'float32', dims: [3, 4] }, v: { dtype: 'int64', dims: ['n'] } },
    nodes: [
      { op: 'Identity', inputs: ['v'], outputs: ['k'] },
      { op: 'Reshape', inputs: ['x', 'k'], outputs: ['y'] },
    ],
    outputs: ['y'],
  });
  expect(() => loadOnnx(bytes)).toThrow(expect.objectContaining({ code: 'E_UNSUPPORTED_OP', message: expect.stringContaining('ONNX node "Reshape_1" (Reshape): the target shape (input 1) depends on tensor data') }));
});
