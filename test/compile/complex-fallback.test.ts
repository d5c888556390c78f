/**
 * compile(model, { complexFallback: true }) through to run(): complex ops without a rewrite
 * rule run in fallback segments on the CPU interpreter, and the ones it cannot run are refused
 * by compile() itself. The expected values are the independent references of
 * test/interpreter/complex-fallback-cases.ts (closed forms such as √z in polar form and
 * sin(a + bi) = sin a·cosh b + i·cos a·sinh b, or the same op on each part), including the
 * branch cut of sqrt, log and pow (negative reals with +0 and −0 imaginary parts), zero, and
 * large imaginary parts for tanh.
 */
import { compile } from '../../lib/compile';
import type { CompileProgressEvent } from '../../lib/compile/progress';
import { call } from '../../lib/ir/builder';
import { Graph, tensorType, type Value } from '../../lib/ir/graph';
import type { Tensor } from '../../lib/ir/tensor';
import { expectClose } from '../helpers/compare';
import { rejection } from '../helpers/errors';
import { CASES, toleranceOf, type ComplexCase } from '../interpreter/complex-fallback-cases';

/** One graph holding `cases`: each case's inputs as graph inputs, its op's output as a graph output named after it. */
function casesGraph(cases: readonly ComplexCase[]): { graph: Graph; inputs: Tensor[] } {
  const g = new Graph('complex_fallback');
  const inputs: Tensor[] = [];
  const outputs: Value[] = [];
  for (const c of cases) {
    const values = c.inputs.map((t, i) => {
      inputs.push(t);
      return g.addInput(`${c.name}_in${i}`, tensorType(t.dtype, t.shape));
    });
    outputs.push(c.build((target, args, name) => call(g, target, args, name === undefined ? {} : { name }), values).output);
  }
  g.setOutputs(
    outputs,
    cases.map((c) => c.name),
  );
  return { graph: g, inputs };
}

/** Compiles `cases` with complexFallback on the reference backend, runs them once, compares every output with its reference. */
async function compileAndCheck(cases: readonly ComplexCase[]): Promise<void> {
  const { graph, inputs } = casesGraph(cases);
  const program = await compile(graph, { backend: 'reference', complexFallback: true });
  try {
    expect(program.report.segments.some((s) => s.kind === 'fallback')).toBe(true);
    const outputs = await program.run(inputs);
    cases.forEach((c, i) => expectClose(outputs[i]!, c.expected(c.inputs), toleranceOf(c), c.name));
  } finally {
    await program.dispose();
  }
}

const MATH = ['aten.sqrt.default', 'aten.log.default', 'aten.sin.default', 'aten.tanh.default', 'aten.sigmoid.default', 'aten.pow.Tensor_Tensor', 'aten.pow.Tensor_Scalar', 'aten.pow.Scalar'];

test('complex sqrt, log, sin, pow (tensor and Scalar exponents, Scalar base), tanh and sigmoid run in fallback segments, complex64 and complex128', async () => {
  const cases = CASES.filter((c) => MATH.includes(c.target));
  // Each of the ops, with the edge values of its cases (branch cuts, zero, large imaginary parts) and in complex128.
  for (const name of ['sqrt_cut', 'log_cut', 'log_zero', 'sin_trig', 'tanh_edge', 'sigmoid_edge', 'pow_tensor', 'pow_zero_base', 'pow_scalar_half', 'pow_base_minus_2', 'sqrt_wide', 'pow_wide']) {
    expect(cases.map((c) => c.name)).toContain(name);
  }
  await compileAndCheck(cases);
}, 120_000);

test('every op the interpreter runs on complex values compiles with complexFallback and runs to its reference', async () => {
  await compileAndCheck(CASES.filter((c) => !MATH.includes(c.target)));
}, 120_000);

test('an op no backend runs on complex values is refused by compile() with E_UNSUPPORTED_OP naming the node, before partitioning or any build', async () => {
  const g = new Graph('unrunnable');
  const z = g.addInput('z', tensorType('complex64', [4]));
  const root = call(g, 'aten.sqrt.default', { self: z }, { name: 'root' }).output;
  const err = call(g, 'aten.erf.default', { self: root }, { name: 'err' }).output;
  g.setOutputs([err]);
  const stages: CompileProgressEvent['stage'][] = [];
  const e = await rejection(compile(g, { backend: 'reference', complexFallback: true, onProgress: (event) => stages.push(event.stage) }));
  expect(e.code).toBe('E_UNSUPPORTED_OP');
  expect(e.message).toContain('node err (aten.erf.default): no rule rewrites aten.erf.default on complex values into real arithmetic, and the CPU interpreter (fallback segments) has no complex implementation of aten.erf.default');
  // sqrt, which a fallback segment runs, is not listed.
  expect(e.message).not.toContain('aten.sqrt.default');
  expect(stages).not.toContain('partitioning');
  expect(stages).not.toContain('build');
}, 60_000);
