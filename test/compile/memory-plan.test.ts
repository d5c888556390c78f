/**
 * The program memory budget: the plan of live tensors (lib/compile/memory-plan.ts), its check
 * in compile(), and the ONNX import bound that keeps folded shape lists shape-sized
 * (a kilobyte of Concat(s, s) doublings once took seconds and gigabytes in loadOnnx).
 */
import * as os from 'node:os';

import { compile, Tensor } from '../../lib';
import { loadOnnx } from '../../lib/frontends/onnx';
import { Graph, tensorType } from '../../lib/ir/graph';
import { call } from '../../lib/ir/builder';
import { sym } from '../../lib/ir/symbolic';
import { defaultMaxProgramBytes, planMemory } from '../../lib/compile/memory-plan';
import { buildSymbolicModel, constantNode, i64 } from '../helpers/onnx-symbolic-model';
import { rejection } from '../helpers/errors';

const MIB = 2 ** 20;

async function expectTypedError(promise: Promise<unknown>, code: string): Promise<Awaited<ReturnType<typeof rejection>>> {
  const error = await rejection(promise);
  expect(error.code).toBe(code);
  return error;
}

/** ConstantOfShape([n]) → Neg → Add(x) → Mul(x) → ReduceSum: one large constant carried through pointwise ops. */
function expandingModel(elements: number): Uint8Array {
  return buildSymbolicModel({
    inputs: { x: { dtype: 'float32', dims: [1] } },
    nodes: [
      constantNode('shape', i64([elements])),
      { op: 'ConstantOfShape', inputs: ['shape'], outputs: ['c'], attrs: { value: Tensor.from('float32', [1], [1]) } },
      { op: 'Neg', inputs: ['c'], outputs: ['a'] },
      { op: 'Add', inputs: ['a', 'x'], outputs: ['b'] },
      { op: 'Mul', inputs: ['b', 'x'], outputs: ['d'] },
      { op: 'ReduceSum', inputs: ['d'], outputs: ['y'], attrs: { keepdims: 1 } },
    ],
    outputs: ['y'],
  });
}

/** Shape(x) followed by `levels` Concat(s, s): each level doubles the list. */
function doublingModel(levels: number): Uint8Array {
  const nodes = [{ op: 'Shape', inputs: ['x'], outputs: ['s0'] }];
  for (let i = 0; i < levels; i++) nodes.push({ op: 'Concat', inputs: [`s${i}`, `s${i}`], outputs: [`s${i + 1}`], attrs: { axis: 0 } } as never);
  nodes.push({ op: 'ReduceSum', inputs: [`s${levels}`], outputs: ['y'], attrs: { keepdims: 1 } } as never);
  return buildSymbolicModel({ inputs: { x: { dtype: 'float32', dims: ['n', 3] } }, nodes, outputs: ['y'] });
}

describe('planMemory', () => {
  it('counts constants for the whole run and frees each intermediate after its last reader', () => {
    const g = new Graph('chain');
    const x = g.addInput('x', tensorType('float32', [256]));
    const w = g.addConstant('w', Tensor.from('float32', [256], new Float32Array(256)), 'parameter');
    const a = call(g, 'aten.add.Tensor', { self: x, other: w }).output; // x, w, a live: 3 KiB
    const b = call(g, 'aten.relu.default', { self: a }).output; // x freed after a; w, a, b: 3 KiB
    const c = call(g, 'aten.sum.default', { self: b }).output; // w, b, c
    g.setOutputs([c]);
    const plan = planMemory(g);
    expect(plan.constantBytes).toBe(1024);
    expect(plan.peakBytes).toBe(3 * 1024);
    expect(plan.peakNode).toBe(a.producer.name);
    expect(plan.largestAtPeak.map((t) => t.bytes)).toEqual([1024, 1024, 1024]);
    expect(plan.unbounded).toEqual([]);
  });

  it('takes dynamic dims at the top of their ranges, and names values without an upper bound', () => {
    const g = new Graph('dynamic');
    g.symbols.set('s', { min: 1, max: 1000 });
    g.symbols.set('u', { min: 1, max: Infinity });
    const x = g.addInput('x', tensorType('float16', [sym('s'), 8]));
    const y = g.addInput('y', tensorType('float32', [sym('u')]));
    const r = call(g, 'aten.relu.default', { self: x }).output;
    g.setOutputs([r, y]);
    const plan = planMemory(g);
    expect(plan.peakBytes).toBe(2 * 1000 * 8 * 2);
    expect(plan.unbounded).toEqual(['y']);
    // Symbolic dims are written as the model's sizes in what the error message lists.
    expect(plan.largestAtPeak.map((t) => t.shape)).toContainEqual(['s', 8]);
  });

  it('defaults the budget to the memory where tensors live', () => {
    expect(defaultMaxProgramBytes()).toBe(os.totalmem());
    expect(defaultMaxProgramBytes(80 * 2 ** 30)).toBe(80 * 2 ** 30);
  });
});

describe('maxProgramBytes in compile()', () => {
  it('refuses a program whose live tensors exceed the budget, naming the peak and the largest tensors', async () => {
    const started = Date.now();
    const error = await expectTypedError(compile(expandingModel(64 * MIB), { backend: 'reference', maxProgramBytes: 300 * MIB }), 'E_RESOURCE_LIMIT');
    expect(Date.now() - started).toBeLessThan(5000);
    expect(error.message).toMatch(/512\.0 MiB of tensors at once at node \S+/);
    expect(error.message).toContain('float32[67108864] (256.0 MiB)');
    // c and a (256 MiB each) and the input x (4 bytes).
    expect(error.details).toMatchObject({ plannedBytes: 512 * MIB + 4, maxProgramBytes: 300 * MIB });
  });

  it('compiles and runs the same program within the budget', async () => {
    const program = await compile(expandingModel(1024), { backend: 'reference', maxProgramBytes: 64 * 1024 });
    const [y] = await program.run([Tensor.from('float32', [1], [3])]);
    // (−1 + 3) · 3 summed over 1,024 elements.
    expect(Array.from(y!.data as Float32Array)).toEqual([6 * 1024]);
    program.dispose();
  });

  it('rejects a budget that is not a positive integer', async () => {
    await expectTypedError(compile(expandingModel(4), { backend: 'reference', maxProgramBytes: 0 }), 'E_INVALID_ARGUMENT');
    await expectTypedError(compile(expandingModel(4), { backend: 'reference', maxProgramBytes: 1.5 }), 'E_INVALID_ARGUMENT');
  });
});

describe('ONNX shape folding stays shape-sized', () => {
  it('imports 25 Concat doublings of a shape in bounded time, as nodes past the folded-list bound', () => {
    const started = Date.now();
    const graph = loadOnnx(doublingModel(25));
    expect(Date.now() - started).toBeLessThan(5000);
    // The first 5 doublings fold (2 → 64 elements); the other 20 are Concat nodes.
    expect(graph.calls().filter((n) => n.target.startsWith('aten.cat')).length).toBe(20);
  });

  it('still gives the right answer where the unfolded list is small enough to run', async () => {
    const program = await compile(doublingModel(8), { backend: 'reference', inputs: [{ shape: [5, 3] }] });
    const [y] = await program.run([new Tensor('float32', [5, 3])]);
    // 2^8 copies of [5, 3].
    expect(Array.from(y!.data as BigInt64Array)).toEqual([BigInt(256 * 8)]);
    program.dispose();
  });

  it('refuses the doubled list at compile when it would not fit the budget', async () => {
    await expectTypedError(compile(doublingModel(25), { backend: 'reference', inputs: [{ shape: [5, 3] }], maxProgramBytes: 64 * MIB }), 'E_RESOURCE_LIMIT');
  });
});
