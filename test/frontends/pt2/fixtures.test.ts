/**
 * Every torch.export fixture (test/fixtures/*) imports, verifies, runs in the CPU interpreter
 * and matches the outputs PyTorch computed (fp32 rtol 1e-4 / atol 1e-5; complex compared as
 * interleaved floats). Dynamic fixtures keep their symbols and ranges and run at every size
 * recorded from one import.
 */
import { interpret } from '../../../lib/interpreter';
import { printGraph } from '../../../lib/ir/printer';
import { findProblems } from '../../../lib/ir/verify';
import { readNumbers } from '../../../lib/kernels/access';
import { Tensor } from '../../../lib/ir/tensor';
import { expectClose, FP32 } from '../../helpers/compare';
import { loadFixture, PT2_FIXTURES } from '../../helpers/fixtures';
import { pt2Graph } from '../../helpers/pt2-graphs';

function maxAbsDiff(a: Tensor, b: Tensor): number {
  const x = readNumbers(a);
  const y = readNumbers(b);
  let m = 0;
  for (let i = 0; i < y.length; i++) m = Math.max(m, Math.abs(x[i]! - y[i]!));
  return m;
}

describe.each(PT2_FIXTURES)('%s.pt2', (name) => {
  test('imports into a valid graph', () => {
    const g = pt2Graph(name);
    expect(findProblems(g)).toEqual([]);
    expect(g.outputs.length).toBe(loadFixture(name).cases[0]!.outputs.length);
    // Assertions and casts to the same dtype are gone; no node reads an undeclared op.
    for (const n of g.calls()) {
      expect(n.target).not.toMatch(/_assert|^aten\.to\.|type_as|dropout/);
    }
  });

  test('runs in the interpreter and matches PyTorch (every recorded size, one import)', () => {
    const g = pt2Graph(name);
    const fixture = loadFixture(name);
    const diffs: number[] = [];
    fixture.cases.forEach((c, k) => {
      const outputs = interpret(g, c.inputs);
      expect(outputs).toHaveLength(c.outputs.length);
      outputs.forEach((t, i) => {
        expectClose(t, c.outputs[i]!, FP32, `${name} case ${k} output ${i}`);
        diffs.push(maxAbsDiff(t, c.outputs[i]!));
      });
    });
    console.log(`${name}: max abs diff ${diffs.map((d) => d.toExponential(2)).join(', ')}`);
  });
});

describe('graph inputs and symbols', () => {
  test('complex64 graph inputs stay complex', () => {
    const g = pt2Graph('rotary_only');
    expect(g.inputs.map((v) => [v.name, v.tensorType.dtype])).toEqual([
      ['xq', 'float32'],
      ['xk', 'float32'],
      ['freqs_cis', 'complex64'],
    ]);
    const ops = new Set(g.calls().map((n) => n.target));
    expect(ops).toContain('aten.view_as_complex.default');
    expect(ops).toContain('aten.view_as_real.default');
  });

  test('a complex64 buffer becomes a constant, sliced by the sequence length', () => {
    const g = pt2Graph('llama_tokens_complex_buffer');
    const buffer = g.nodes.find((n) => n.kind === 'constant' && n.origin === 'buffer');
    expect(buffer?.meta.fqn).toBe('freqs_cis');
    expect(buffer?.output.tensorType.dtype).toBe('complex64');
    expect([...buffer!.tensor!.shape]).toEqual([64, 8]);
    const slice = g.users(buffer!.output).find((n) => n.target === 'aten.slice.Tensor');
    expect(slice?.output.tensorType.shape).toEqual([12, 8]);
    expect(g.inputs.map((v) => v.name)).toEqual(['tokens']);
  });

  test('dynamic sequence length: symbol, range and shapes', () => {
    const g = pt2Graph('llama_rotary_complex_input_dynamic');
    expect([...g.symbols]).toEqual([['s25', { min: 2, max: 64 }]]);
    const text = printGraph(g);
    expect(text).toContain('graph model(%x: float32[1, s25, 64], %freqs_cis: complex64[s25, 8]):');
    expect(text).toContain('symbols: s25 ∈ [2, 64]');
    expect(text).toMatch(/complex64\[1, s25, 4, 8\] = aten\.view_as_complex\.default/);
  });

  test('encoder: two symbols with their ranges; SymInt arithmetic becomes sym.*', () => {
    const g = pt2Graph('encoder');
    expect(Object.fromEntries(g.symbols)).toEqual({ s23: { min: 1, max: 16 }, s27: { min: 2, max: 128 } });
    const text = printGraph(g);
    expect(text).toContain('%ids: int64[s23, s27]');
    expect(text).toContain('SymInt(s23*4) = sym.mul(');
    expect(text).toContain('SymInt(s23*s27) = sym.mul(');
    expect(text).toMatch(/float32\[s23\*s27, 64\] = aten\.view\.default/);
  });

  test('mlp: dynamic batch', () => {
    const g = pt2Graph('mlp');
    expect([...g.symbols]).toEqual([['s77', { min: 1, max: 64 }]]);
    expect(printGraph(g)).toContain('%x: float32[s77, 32]');
    expect(printGraph(g)).toMatch(/return \(softmax=%\w+\)|return \(%softmax\)/);
  });

  test('mobilenet_v3_small: dynamic batch, the only symbol', () => {
    const g = pt2Graph('mobilenet_v3_small');
    expect(g.symbols.size).toBe(1);
    const [[symbol, range]] = [...g.symbols];
    expect(range!.min).toBeGreaterThanOrEqual(1);
    expect(range!.max).toBeGreaterThanOrEqual(5);
    expect(printGraph(g).split('\n')[0]).toContain(`float32[${symbol}, 3, 96, 96]`);
  });

  test('static models have no symbols', () => {
    expect(pt2Graph('squeezenet1_1').symbols.size).toBe(0);
  });

  test('in-place ops (relu_, hardswish_, add_, dropout_) become functional ops', () => {
    const g = pt2Graph('mobilenet_v3_small');
    const ops = new Set(g.calls().map((n) => n.target));
    for (const op of ops) expect(op).not.toMatch(/_\.(default|Tensor)$/);
    expect(ops).toContain('aten.hardswish.default');
    expect(ops).toContain('aten.relu.default');
    // num_batches_tracked buffers are read by nothing and removed.
    expect(g.nodes.some((n) => String(n.meta.fqn ?? '').endsWith('num_batches_tracked'))).toBe(false);
  });

  test('the dynamic model runs at other lengths within its range', () => {
    const g = pt2Graph('llama_rotary_complex_input_dynamic');
    const fixture = loadFixture('llama_rotary_complex_input_dynamic');
    // Seq 8 and 16 are the fixture's; a third length checks nothing was specialized.
    const [x, freqs] = fixture.cases[1]!.inputs as [Tensor, Tensor];
    const seq = 5;
    const x5 = new Tensor('float32', [1, seq, 64], (x.data as Float32Array).slice(0, seq * 64));
    const f5 = new Tensor('complex64', [seq, 8], (freqs.data as Float32Array).slice(0, seq * 8 * 2));
    const [out] = interpret(g, [x5, f5]);
    expect([...out!.shape]).toEqual([1, seq, 64]);
    // Causal attention: the first 5 positions do not depend on later ones.
    const full = fixture.cases[1]!.outputs[0]!;
    expectClose(out!, new Tensor('float32', [1, seq, 64], (full.data as Float32Array).slice(0, seq * 64)));
  });
});
