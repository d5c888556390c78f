/**
 * Complex ops in fallback segments: the complex lowering keeps an op without a rewrite rule
 * complex for a fallback segment (complexFallback) only when the CPU interpreter runs it on
 * complex values (lib/interpreter/complex-fallback.ts); every other one is refused at compile
 * time. This file enumerates every op of the IR op table that accepts complex values and that
 * no rule rewrites, and checks for each one that it is either
 * - run by the interpreter: then a reference case (./complex-fallback-cases.ts) covers it, and
 *   the case's output matches its independent reference, or
 * - refused by the lowering with E_UNSUPPORTED_OP naming the node, before any backend runs.
 * A new op (or a new complex form of an op) that reaches a fallback segment without an
 * interpreter implementation and a reference case fails here.
 */
import '../../lib/ir/ops';
import { interpret } from '../../lib/interpreter';
import { INTERPRETER_COMPLEX_OPS, interpreterComplexRefusal } from '../../lib/interpreter/complex-fallback';
import { call } from '../../lib/ir/builder';
import { isComplex, type DType } from '../../lib/ir/dtype';
import { Graph, tensorType, Value, type Arg, type Node } from '../../lib/ir/graph';
import { getOp, opNames } from '../../lib/ir/ops/registry';
import type { ArgSchema } from '../../lib/ir/schema';
import { Tensor } from '../../lib/ir/tensor';
import {
  complexCos,
  complexExp,
  complexLog,
  complexLog1p,
  complexPow,
  complexPowScalar,
  complexSigmoid,
  complexSin,
  complexSqrt,
  complexTan,
  complexTanh,
} from '../../lib/kernels/complex';
import { lowerComplex } from '../../lib/lowering/complex';
import { ruleRefusal } from '../../lib/lowering/complex/rules';
import { expectClose, expectTensor, FP32 } from '../helpers/compare';
import { thrownError } from '../helpers/errors';
import { carrierOf } from '../lowering/complex/helpers';
import { CASES, CASE_TARGETS, REF, toleranceOf, type ComplexCase, type P } from './complex-fallback-cases';

// ---------------------------------------------------------------------------------------------
// Finding every op the IR accepts complex values for.

/** A deterministic pseudo-random generator (a linear congruential one). */
function lcg(seed: number): () => number {
  let s = seed;
  return () => {
    s = (s * 1103515245 + 12345) % 2147483648;
    return s / 2147483648;
  };
}

const SHAPES: number[][] = [[2, 3], [3, 3], [2, 3, 4, 4], [4], [3], [2], []];
const TENSOR_DTYPES: DType[] = ['complex64', 'float32', 'int64', 'bool'];

/** Candidate values for a non-tensor argument (its default first). */
function candidates(a: ArgSchema): Arg[] {
  const { base, list, optional } = a.type;
  let v: Arg[];
  switch (base) {
    case 'int':
    case 'SymInt':
      v = list ? [[0], [1], [0, 1], [2, 3], [6], [3, 2], [1, 1], [2], [-1], [1, 0]] : [0, 1, -1, 2];
      break;
    case 'bool':
      v = list ? [[false]] : [false, true];
      break;
    case 'float':
      v = list ? [[1, 1]] : [0.5, 1, 2];
      break;
    case 'Scalar':
      v = [1, 2.5, 0];
      break;
    case 'ScalarType':
      v = ['complex64', 'float32', 'int64', 'complex128'];
      break;
    case 'str':
      v = ['none', 'sum', 'mean', 'prod', 'amax', 'add', 'multiply', 'floor', 'trunc', 'constant', 'reflect', 'replicate', 'circular', 'nearest', 'linear', 'bilinear', 'tanh', 'ij', 'xy'];
      break;
    default:
      v = [null];
  }
  if (a.hasDefault) v = [a.default as Arg, ...v];
  if (optional) v = [...v, null];
  return v;
}

interface Probe {
  target: string;
  graph: Graph;
  node: Node;
}

/** An argument as a signature: tensors by their dtype, so forms that differ only in shapes count once. */
const signature = (args: Record<string, Arg>): string =>
  JSON.stringify(args, (_k, v: unknown) => (v instanceof Value ? (v.type.kind === 'tensor' ? v.type.dtype : 'symint') : v));

/**
 * For each op of the table, nodes that type-check with at least one complex tensor argument or
 * a complex output (up to `formsPerOp` forms with different arguments), found by a seeded
 * random search over argument values and dtypes (the first try gives every tensor argument
 * the complex64 dtype). Ops that never take complex values have none.
 */
function probeComplexOps(triesPerOp = 2500, formsPerOp = 6, triesAfterFirst = 600): Probe[] {
  const found: Probe[] = [];
  const rnd = lcg(20240611);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rnd() * xs.length)]!;
  for (const target of opNames()) {
    const schema = getOp(target)!.schema;
    const seen = new Set<string>();
    let limit = triesPerOp;
    for (let attempt = 0; attempt < limit && seen.size < formsPerOp; attempt++) {
      const g = new Graph('probe');
      const shape = pick(SHAPES);
      let inputs = 0;
      let complexIn = false;
      const tensor = (dtype: DType): Value => {
        if (isComplex(dtype)) complexIn = true;
        return g.addInput(`in${inputs++}`, tensorType(dtype, rnd() < 0.8 ? shape : pick(SHAPES)));
      };
      const args: Record<string, Arg> = {};
      for (const a of schema.args) {
        if (a.type.base !== 'Tensor') {
          args[a.name] = pick(candidates(a));
          continue;
        }
        if (a.type.optional && attempt > 0 && rnd() < 0.4) {
          args[a.name] = null;
          continue;
        }
        const dtype = attempt === 0 ? 'complex64' : pick(TENSOR_DTYPES);
        args[a.name] = a.type.list ? [tensor(dtype), tensor(dtype)] : tensor(dtype);
      }
      let node: Node;
      try {
        node = call(g, target, args, { name: 'probe' });
      } catch {
        continue;
      }
      const complexOut = node.outputs.some((v) => v.type.kind === 'tensor' && isComplex(v.type.dtype));
      const key = signature(args);
      if ((!complexIn && !complexOut) || seen.has(key)) continue;
      if (seen.size === 0) limit = Math.min(triesPerOp, attempt + triesAfterFirst);
      seen.add(key);
      g.setOutputs(node.outputs.filter((v) => v.type.kind === 'tensor'));
      found.push({ target, graph: g, node });
    }
  }
  return found;
}

const probes = probeComplexOps();

/** Deterministic sample values for a probe input: small reals and pairs, zero indices, alternating bools. */
function sampleTensor(dtype: DType, shape: number[], salt: number): Tensor {
  const n = shape.reduce((a, b) => a * b, 1) * (isComplex(dtype) ? 2 : 1);
  return Tensor.from(
    dtype,
    shape,
    Array.from({ length: n }, (_, k) => (dtype === 'bool' ? k % 2 : dtype === 'int64' ? 0 : (((k * 7 + salt) % 11) - 5) / 3)),
  );
}

const realOf: Partial<Record<DType, DType>> = { complex64: 'float32', complex128: 'float64' };

/**
 * The same form on real values: complex inputs become float inputs of the part type, complex
 * dtype arguments the part type. Null when the IR refuses that form.
 */
function realTwin(p: Probe): { graph: Graph; inputs: (complex: Tensor[]) => Tensor[] } | null {
  const g = new Graph('twin');
  const values = new Map<Value, Value>();
  for (const v of p.graph.inputs) {
    const t = v.tensorType;
    values.set(v, g.addInput(v.name, tensorType(realOf[t.dtype] ?? t.dtype, t.shape)));
  }
  const swap = (a: Arg): Arg =>
    a instanceof Value ? values.get(a)! : Array.isArray(a) ? a.map(swap) : typeof a === 'string' && realOf[a as DType] !== undefined ? realOf[a as DType]! : a;
  try {
    const node = call(g, p.target, Object.fromEntries(Object.entries(p.node.args).map(([k, a]) => [k, swap(a)])));
    g.setOutputs(node.outputs.filter((v) => v.type.kind === 'tensor'));
  } catch {
    return null;
  }
  // The real twin reads the real parts of the complex samples.
  const inputs = (complex: Tensor[]): Tensor[] =>
    complex.map((t) => (realOf[t.dtype] === undefined ? t : Tensor.from(realOf[t.dtype]!, t.shape, t.toArray().filter((_, k) => k % 2 === 0))));
  return { graph: g, inputs };
}

const runs = (f: () => unknown): boolean => {
  try {
    f();
    return true;
  } catch {
    return false;
  }
};
const probedTargets = new Set(probes.map((p) => p.target));

/** What the lowering does with a probed node: rewrite it by a rule, keep it for a fallback segment, or refuse it. */
const fate = (p: Probe): 'rule' | 'fallback' | 'refused' => (ruleRefusal(p.node) === null ? 'rule' : interpreterComplexRefusal(p.node) === null ? 'fallback' : 'refused');

describe('every op the IR accepts complex values for', () => {
  test('the search finds the complex forms of ops of every kind (math, movement, creation, rewritten ones)', () => {
    for (const target of ['aten.sqrt.default', 'aten.pow.Tensor_Tensor', 'aten.gather.default', 'aten.zeros.default', 'aten.erf.default', 'aten.mul.Tensor', 'aten.view_as_real.default']) {
      expect(probedTargets.has(target)).toBe(true);
    }
    // Ops PyTorch defines for real values only are not found (the IR refuses their complex forms).
    for (const target of ['aten.relu.default', 'aten.maximum.default', 'aten.floor.default']) expect(probedTargets.has(target)).toBe(false);
    // Several forms of one op: a reduction with and without a dtype argument.
    expect(new Set(probes.filter((p) => p.target === 'aten.sum.dim_IntList').map(fate))).toEqual(new Set(['rule', 'fallback', 'refused']));
  });

  test('without a rewrite rule: run by the interpreter and covered by a reference case, or refused by the lowering with E_UNSUPPORTED_OP naming the node', () => {
    const uncovered: string[] = [];
    const notRefused: string[] = [];
    for (const p of probes) {
      const { target } = p;
      const f = fate(p);
      if (f === 'rule') continue;
      if (f === 'fallback') {
        if (!CASE_TARGETS.has(target)) uncovered.push(target);
        continue;
      }
      let e;
      try {
        lowerComplex(p.graph, { fallback: true });
      } catch (error) {
        e = error as { code?: string; details?: { ops?: Array<{ node: string; target: string }> } };
      }
      if (e?.code !== 'E_UNSUPPORTED_OP' || !e.details?.ops?.some((o) => o.node === 'probe' && o.target === target)) notRefused.push(`${target} ${signature(p.node.args)}`);
    }
    expect(uncovered).toEqual([]);
    expect(notRefused).toEqual([]);
  });

  test('every form kept for a fallback segment runs there: wherever the same form runs on real values, the lowered graph runs and gives what the complex graph gives', () => {
    const failures: string[] = [];
    let checked = 0;
    for (const p of probes) {
      if (fate(p) !== 'fallback') continue;
      const inputs = p.graph.inputs.map((v, i) => sampleTensor(v.tensorType.dtype, v.tensorType.shape as number[], i));
      const twin = realTwin(p);
      // Shapes or indices the IR accepts but no kernel can use (a select_scatter index past the
      // dim, bool masks selecting more rows than the values have) fail for real values too.
      if (twin === null || !runs(() => interpret(twin.graph, twin.inputs(inputs)))) continue;
      checked++;
      const where = `${p.target} ${signature(p.node.args)}`;
      let expected: Tensor[];
      try {
        expected = interpret(p.graph, inputs);
      } catch (e) {
        failures.push(`${where}: on complex values: ${(e as Error).message}`);
        continue;
      }
      try {
        lowerComplex(p.graph, { fallback: true });
        const actual = interpret(p.graph, inputs.map(carrierOf));
        actual.forEach((t, i) => expectClose(t, carrierOf(expected[i]!), FP32, `output ${i}`));
      } catch (e) {
        failures.push(`${where}: lowered: ${(e as Error).message}`);
      }
    }
    expect(failures).toEqual([]);
    expect(checked).toBeGreaterThan(150);
  });

  test('the refused ones include ops PyTorch has no complex kernel for, and complex forms the interpreter does not run', () => {
    const refused = probes.filter((p) => fate(p) === 'refused').map((p) => p.target);
    for (const target of ['aten.erf.default', 'aten.softmax.int', 'aten.arange.default', 'aten.scatter_reduce.two']) expect(refused).toContain(target);
  });
});

describe('the interpreter complex ops (lib/interpreter/complex-fallback.ts)', () => {
  /** A graph of one case: its inputs, the op under test, the op's output. */
  function caseGraph(c: ComplexCase): { graph: Graph; node: Node } {
    const g = new Graph(c.name);
    const values = c.inputs.map((t, i) => g.addInput(`${c.name}_in${i}`, tensorType(t.dtype, t.shape)));
    const node = c.build((target, args, name) => call(g, target, args, name === undefined ? {} : { name }), values);
    g.setOutputs([node.output]);
    return { graph: g, node };
  }

  test('each has a reference case, and each case is an op the lowering sends to a fallback segment', () => {
    expect([...INTERPRETER_COMPLEX_OPS.keys()].filter((t) => !CASE_TARGETS.has(t))).toEqual([]);
    for (const c of CASES) {
      const { node } = caseGraph(c);
      expect([c.name, ruleRefusal(node) === null ? 'rewritten by a rule' : 'no rule']).toEqual([c.name, 'no rule']);
      expect([c.name, interpreterComplexRefusal(node)]).toEqual([c.name, null]);
    }
  });

  test.each(CASES.map((c) => [c.name, c] as const))('%s: the complex op and its lowered fallback form match the reference', (_name, c) => {
    const expected = c.expected(c.inputs);
    const tol = toleranceOf(c);
    // The op as the model has it, on complex tensors.
    const direct = caseGraph(c).graph;
    expectClose(interpret(direct, c.inputs)[0]!, expected, tol, 'complex graph');
    // The lowered graph (carriers, view_as_complex / view_as_real adapters around the kept op), as a fallback segment runs it.
    const lowered = caseGraph(c).graph;
    const lowering = lowerComplex(lowered, { fallback: true });
    expect(lowering.report.fallback.map((f) => f.node)).toEqual([c.name]);
    expectClose(interpret(lowered, c.inputs.map(carrierOf))[0]!, carrierOf(expected), tol, 'lowered graph');
  });

  test('forms of listed ops the interpreter does not run on complex values are refused, naming why', () => {
    const g = new Graph('refused_forms');
    const z = g.addInput('z', tensorType('complex64', [2, 3]));
    const idx = g.addInput('idx', tensorType('int64', [2, 3]));
    const mean = call(g, 'aten.mean.default', { self: z, dtype: 'float32' }, { name: 'mean_real' }).output;
    const product = call(g, 'aten.scatter.reduce', { self: z, dim: 0, index: idx, src: z, reduce: 'multiply' }, { name: 'scatter_mul' }).output;
    const x = g.addInput('x', tensorType('float32', [2, 3]));
    const fill = call(g, 'aten.fill.Tensor', { self: x, value: call(g, 'aten.select.int', { self: call(g, 'aten.select.int', { self: z, dim: 0, index: 0 }).output, dim: 0, index: 0 }).output }, { name: 'fill_real' }).output;
    g.setOutputs([mean, product, fill]);
    const e = thrownError(() => lowerComplex(g, { fallback: true }));
    expect(e.code).toBe('E_UNSUPPORTED_OP');
    expect(e.message.split('\n')).toEqual([
      '3 op(s) on complex values can run on no backend: they have no rewrite into real arithmetic (for an engine segment) and the CPU interpreter cannot run them on complex values (for a fallback segment):',
      '  - node mean_real (aten.mean.default): mean with a dtype argument on complex values has no rule, and aten.mean.default of complex values into dtype float32 would drop the imaginary part (PyTorch refuses it); take real() or abs() first',
      '  - node scatter_mul (aten.scatter.reduce): no rule rewrites aten.scatter.reduce on complex values into real arithmetic, and scatter with reduce="multiply" on complex values is not implemented by the CPU interpreter',
      '  - node fill_real (aten.fill.Tensor): no rule rewrites aten.fill.Tensor on complex values into real arithmetic, and filling a real tensor with a complex value would drop its imaginary part (PyTorch refuses a nonzero one)',
      'Compute them on real values (real(), imag(), abs()) in the model.',
    ]);
    // Nothing was rewritten: the graph still has its complex input.
    expect(g.inputs[0]!.tensorType.dtype).toBe('complex64');
  });

  test('without complexFallback the error says which ops no fallback segment could run either', () => {
    const g = new Graph('mixed');
    const z = g.addInput('z', tensorType('complex64', [3]));
    g.setOutputs([call(g, 'aten.erf.default', { self: z }, { name: 'er' }).output, call(g, 'aten.sqrt.default', { self: z }, { name: 'rt' }).output]);
    const e = thrownError(() => lowerComplex(g));
    expect(e.message.split('\n')).toEqual([
      '2 op(s) on complex values have no rewrite into real arithmetic, so they cannot be converted into an engine segment:',
      '  - node er (aten.erf.default): no rule rewrites aten.erf.default on complex values into real arithmetic; nor can a fallback segment run it: the CPU interpreter (fallback segments) has no complex implementation of aten.erf.default',
      '  - node rt (aten.sqrt.default): no rule rewrites aten.sqrt.default on complex values into real arithmetic',
      'Set complexFallback: true to run the others in fallback segments; no backend runs the ones that no fallback segment can run.',
    ]);
    expect(e.details.ops).toEqual([
      {
        node: 'er',
        target: 'aten.erf.default',
        reason: 'no rule rewrites aten.erf.default on complex values into real arithmetic',
        fallback: 'the CPU interpreter (fallback segments) has no complex implementation of aten.erf.default',
      },
      { node: 'rt', target: 'aten.sqrt.default', reason: 'no rule rewrites aten.sqrt.default on complex values into real arithmetic' },
    ]);
  });
});

// ---------------------------------------------------------------------------------------------
// The complex kernels at full (complex128) precision, on the values where branches and
// overflow matter. Expected values are closed forms (REF) or exact values.

const Z128 = (ps: P[]): Tensor => Tensor.from('complex128', [ps.length], ps.flat());
const WIDE = { rtol: 1e-13, atol: 1e-300 };
const expectPairs = (actual: Tensor, expected: P[], label: string, tol = WIDE): void => expectClose(actual, Z128(expected), tol, label);

describe('complex kernels (complex128)', () => {
  test('sqrt and log: principal branches, the sign of a zero imaginary part picks the side of the cut', () => {
    const z = Z128([
      [-4, 0],
      [-4, -0],
      [-1e-300, 0],
      [1e300, -1e300],
      [2.5e-310, 1e-310],
      [0, -0],
    ]);
    const roots = complexSqrt(z).toArray();
    expect(roots.slice(0, 6)).toEqual([0, 2, 0, -2, 0, 1e-150]);
    expect(roots.slice(10)).toEqual([0, -0]);
    // Near float64's maximum and among subnormals the result is scaled, not overflowed or flushed.
    expectPairs(complexSqrt(Z128([[1e300, -1e300], [2.5e-310, 1e-310]])), [REF.sqrt([1e300, -1e300]), REF.sqrt([2.5e-310, 1e-310])], 'sqrt, scaled', { rtol: 1e-12, atol: 0 });
    const logs = complexLog(z.reshape([6])).toArray();
    expect(logs.slice(0, 4)).toEqual([Math.log(4), Math.PI, Math.log(4), -Math.PI]);
    expect(logs[10]).toBe(-Infinity);
    expect(Object.is(logs[11], -0)).toBe(true);
    // Near the unit circle ln|z| keeps its relative accuracy: ln|1 + 1e-10 i| = ½·log1p(1e-20) = 5e-21.
    expectPairs(complexLog(Z128([[1, 1e-10]])), [[5e-21, 1e-10]], 'log near |z| = 1');
  });

  test('log1p of a tiny value keeps its relative accuracy (the series z − z²/2)', () => {
    const z: P = [3e-12, -4e-12];
    const sq = REF.mul(z, z);
    expectPairs(complexLog1p(Z128([z])), [[z[0] - sq[0] / 2, z[1] - sq[1] / 2]], 'log1p');
  });

  test('exp, sin and cos do not overflow before the result does', () => {
    // e^710·cos(π/2 − 1e-10): e^710 alone overflows float64, the product does not.
    const b = Math.PI / 2 - 1e-10;
    expectPairs(complexExp(Z128([[710, b]])), [[Math.exp(355) * (Math.exp(355) * Math.cos(b)), Infinity]], 'exp', { rtol: 1e-12, atol: 0 });
    // sin(a + bi) for b beyond cosh's range: infinite parts with the right signs, not NaN.
    expect(complexSin(Z128([[1, 1000]])).toArray()).toEqual([Infinity, Infinity]);
    expect(complexCos(Z128([[1, -1000]])).toArray()).toEqual([Infinity, Infinity]);
    expect(complexSin(Z128([[0, 1000]])).toArray()).toEqual([0, Infinity]);
  });

  test('tanh and tan: huge imaginary parts (periodic), huge real parts (±1), the pole side of tan', () => {
    const z: P[] = [
      [0.5, 1e6],
      [-0.25, 1e15],
      [800, 3],
      [-800, -3],
      [0, 1.5],
    ];
    const t = complexTanh(Z128(z));
    expectPairs(t, z.map(REF.tanh), 'tanh', { rtol: 1e-9, atol: 1e-300 });
    // tanh(±800 ± 3i) = ±1 + i·4·sin b·cos b·e^(−1600): the imaginary part underflows to a zero of its sign.
    expect(t.toArray().slice(4, 8)).toEqual([1, -0, -1, 0]);
    expectPairs(complexTan(Z128([[1, 2]])), [REF.tan([1, 2])], 'tan');
    expect(complexTan(Z128([[1, 800]])).toArray()).toEqual([0, 1]);
  });

  test('sigmoid: 1 for large positive real parts, e^z (not NaN) for large negative ones', () => {
    const s = complexSigmoid(Z128([
      [800, 1],
      [-700, 0.5],
      [-1000, 1],
    ])).toArray();
    expect(s.slice(0, 2)).toEqual([1, 0]);
    expect(s[2]! / (Math.exp(-700) * Math.cos(0.5))).toBeCloseTo(1, 12);
    expect(s.slice(4)).toEqual([0, 0]);
  });

  test('pow: a Scalar exponent keeps torch.pow\'s special cases; a tensor exponent is e^(w·log z) with C99 products at zero', () => {
    const z = Z128([
      [-2, 0],
      [-2, -0],
      [0, 0],
      [NaN, 1],
    ]);
    // (−2 ± 0i)² is a product, so exactly 4 + ∓0i; e^(2·log z) would leave a tiny imaginary part.
    expectTensor(complexPowScalar(z, 2), 'complex128', [4], [4, -0, 4, 0, 0, 0, NaN, NaN]);
    expectTensor(complexPowScalar(z, 0), 'complex128', [4], [1, 0, 1, 0, 1, 0, 1, 0]);
    // 0.5 is sqrt: a real part of exactly 0 on the cut.
    expect(complexPowScalar(z, 0.5).toArray().slice(0, 4)).toEqual([0, Math.SQRT2, 0, -Math.SQRT2]);
    const w = Z128([
      [2, 0],
      [0, 0],
      [-1, 0],
      [1, -1],
    ]);
    const zero = Z128([
      [0, 0],
      [0, 0],
      [0, 0],
      [0, 0],
    ]);
    expectTensor(complexPow(zero, w), 'complex128', [4], [0, 0, NaN, NaN, Infinity, NaN, 0, 0]);
    const base: P = [-1.5, 0.5];
    const exponent: P = [0.25, -2];
    expectPairs(complexPow(Z128([base]), Z128([exponent])), [REF.pow(base, exponent)], 'pow');
  });

  test('C99 special values at infinities and NaN', () => {
    const z = Z128([
      [-Infinity, 1],
      [Infinity, NaN],
      [NaN, 0],
      [1, Infinity],
    ]);
    expectTensor(complexSqrt(z), 'complex128', [4], [0, Infinity, Infinity, NaN, NaN, NaN, Infinity, Infinity]);
    expectTensor(complexLog(z), 'complex128', [4], [Infinity, Math.PI, Infinity, NaN, NaN, NaN, Infinity, Math.PI / 2]);
    expectTensor(complexExp(z), 'complex128', [4], [0 * Math.cos(1), 0 * Math.sin(1), Infinity, NaN, NaN, 0, NaN, NaN]);
    expectTensor(complexTanh(z), 'complex128', [4], [-1, 0, 1, 0, NaN, 0, NaN, NaN]);
  });
});

test('the complex math kernels keep the complex type (complex64 in, complex64 out)', () => {
  const z = Tensor.from('complex64', [2], [1, 2, -3, 0.5]);
  for (const f of [complexSqrt, complexLog, complexLog1p, complexSin, complexCos, complexTan, complexTanh, complexSigmoid, complexExp, (t: Tensor) => complexPowScalar(t, 2.5)]) {
    expect(f(z).dtype).toBe('complex64');
  }
});
