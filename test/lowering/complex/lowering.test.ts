/**
 * ComplexLowering (lib/lowering/complex/index.ts), the record compile() keeps of the complex
 * lowering: whether it changed anything, the compile-log lines, and the program's inputs and
 * outputs as the caller sees them (complex dtype and shape back, with the carrier named).
 * compile() runs on its worker (dist/), so these checks run the lowering in-process.
 */
import '../../../lib/ir/ops';
import { Graph, tensorType } from '../../../lib/ir/graph';
import { printGraph } from '../../../lib/ir/printer';
import { lowerComplex, type BoundaryIO } from '../../../lib/lowering/complex';
import { Tensor } from '../../../lib/ir/tensor';
import { builder } from './helpers';

/** The program's inputs or outputs as lib/compile/pipeline.ts lists them: the (carrier) graph values' types. */
const io = (values: Graph['inputs']): BoundaryIO[] => values.map((v) => ({ dtype: v.tensorType.dtype, shape: [...v.tensorType.shape] }));

describe('a graph with complex inputs, outputs, a buffer and an op without a rule', () => {
  function build(): Graph {
    const g = new Graph('mixed');
    const op = builder(g);
    const x = g.addInput('x', tensorType('float32', [3]));
    const z = g.addInput('z', tensorType('complex64', [3]));
    const w = g.addInput('w', tensorType('complex64', [2, 3]));
    const k = g.addConstant('k', Tensor.from('complex64', [3], [1, 0, 0, 1, -1, 0]), 'buffer');
    const k2 = g.addConstant('k2', Tensor.from('complex64', [3], [0, 1, 2, 0, 1, 1]), 'buffer');
    const p = op('aten.mul.Tensor', { self: op('aten.mul.Tensor', { self: z, other: k }, 'zk'), other: k2 }, 'p');
    const root = op('aten.sqrt.default', { self: w }, 'root');
    g.setOutputs([op('aten.mul.Tensor', { self: x, other: x }, 'sq'), p, op('aten.view_as_real.default', { self: p }, 'vr'), root]);
    return g;
  }

  test('describe() names every complex input, output, buffer and fallback op', () => {
    const lowering = lowerComplex(build(), { fallback: true });
    expect(lowering.changed).toBe(true);
    expect(lowering.describe().split('\n')).toEqual([
      'complex lowering: 2 complex subgraph(s), 3 op(s) rewritten into real arithmetic; complex inputs: z, w; complex outputs: p, root; complex buffers/constants: k, k2',
      '  kept complex for a fallback segment: root (aten.sqrt.default): no rule rewrites aten.sqrt.default on complex values into real arithmetic',
    ]);
  });

  test('present() gives complex inputs and outputs back their dtype and shape; real ones are the same objects', () => {
    const g = build();
    const lowering = lowerComplex(g, { fallback: true });
    const inputs = io(g.inputs);
    const outputs = io(g.outputs);
    expect(inputs.map((v) => `${v.dtype}[${v.shape.join(', ')}]`)).toEqual(['float32[3]', 'float32[3, 2]', 'float32[2, 3, 2]']);
    const shownInputs = lowering.present(inputs, 'inputs');
    expect(shownInputs).toEqual([
      { dtype: 'float32', shape: [3] },
      { dtype: 'complex64', shape: [3], complex: { carrier: 'float32' } },
      { dtype: 'complex64', shape: [2, 3], complex: { carrier: 'float32' } },
    ]);
    expect(shownInputs[0]).toBe(inputs[0]);
    const shownOutputs = lowering.present(outputs, 'outputs');
    expect(shownOutputs).toEqual([
      { dtype: 'float32', shape: [3] },
      { dtype: 'complex64', shape: [3], complex: { carrier: 'float32' } },
      { dtype: 'float32', shape: [3, 2] },
      { dtype: 'complex64', shape: [2, 3], complex: { carrier: 'float32' } },
    ]);
    expect(shownOutputs[2]).toBe(outputs[2]);
    // The records given are not changed.
    expect(outputs[1]).toEqual({ dtype: 'float32', shape: [3, 2] });
  });

  test('carrierShapes() appends the pair axis to the complex inputs only, with the carrier dtype', () => {
    const lowering = lowerComplex(build(), { fallback: true });
    const given = [
      { dtype: 'float32' as const, shape: [3] },
      { dtype: 'complex64' as const, shape: [3] },
      { dtype: 'complex64' as const, shape: [2, 3] },
    ];
    const shapes = lowering.carrierShapes(given);
    expect(shapes).toEqual([
      { dtype: 'float32', shape: [3] },
      { dtype: 'float32', shape: [3, 2] },
      { dtype: 'float32', shape: [2, 3, 2] },
    ]);
    expect(shapes[0]).toBe(given[0]);
  });
});

describe('changed: each kind of complex content alone counts', () => {
  test('no complex value: unchanged, the graph untouched, dashes in the log line', () => {
    const g = new Graph('real');
    const x = g.addInput('x', tensorType('float32', [2]));
    g.setOutputs([builder(g)('aten.neg.default', { self: x }, 'n')]);
    const before = printGraph(g);
    const lowering = lowerComplex(g);
    expect(lowering.changed).toBe(false);
    expect(printGraph(g)).toBe(before);
    expect(lowering.describe()).toBe('complex lowering: 0 complex subgraph(s), 0 op(s) rewritten into real arithmetic; complex inputs: -; complex outputs: -; complex buffers/constants: -');
  });

  test('only ops rewritten (a real input viewed as complex and back)', () => {
    const g = new Graph('ops');
    const op = builder(g);
    const x = g.addInput('x', tensorType('float32', [2, 2]));
    g.setOutputs([op('aten.view_as_real.default', { self: op('aten.view_as_complex.default', { self: x }, 'c') }, 'r')]);
    const { report, changed } = lowerComplex(g);
    expect([report.rewritten, report.inputs.length, report.constants.length, report.fallback.length]).toEqual([2, 0, 0, 0]);
    expect(changed).toBe(true);
  });

  test('only a complex input (passed straight to the output)', () => {
    const g = new Graph('input');
    g.setOutputs([g.addInput('z', tensorType('complex64', [2]))]);
    const lowering = lowerComplex(g);
    const { report } = lowering;
    expect([report.rewritten, report.inputs.length, report.constants.length, report.fallback.length]).toEqual([0, 1, 0, 0]);
    expect(lowering.changed).toBe(true);
  });

  test('only a complex constant (returned as it is)', () => {
    const g = new Graph('constant');
    g.setOutputs([g.addConstant('k', Tensor.from('complex64', [1], [2, -1]))]);
    const lowering = lowerComplex(g);
    const { report } = lowering;
    expect([report.rewritten, report.inputs.length, report.constants.length, report.fallback.length]).toEqual([0, 0, 1, 0]);
    expect(lowering.changed).toBe(true);
    expect(g.outputs[0]!.tensorType).toEqual(tensorType('float32', [1, 2]));
  });

  test('only an op kept for fallback (a complex zeros, no rule)', () => {
    const g = new Graph('fallback');
    g.setOutputs([builder(g)('aten.zeros.default', { size: [3], dtype: 'complex64' }, 'zeros')]);
    const lowering = lowerComplex(g, { fallback: true });
    const { report } = lowering;
    expect([report.rewritten, report.inputs.length, report.constants.length, report.fallback.length]).toEqual([0, 0, 0, 1]);
    expect(lowering.changed).toBe(true);
  });
});
