/**
 * End to end with complex numbers: the three rotary fixtures (complex64 graph input, and a
 * complex64 buffer sliced by the sequence length) compile with zero fallback into exactly one
 * engine segment each, and, run on the reference backend through a worker thread, match
 * the outputs PyTorch stored for them. The program still presents complex64 inputs.
 */
import * as path from 'node:path';

import { compile } from '../../lib/compile';
import { expectClose, FP32 } from '../helpers/compare';
import { loadFixture } from '../helpers/fixtures';

const cases: Array<[string, string[]]> = [
  ['rotary_only', ['xq: float32[1, 8, 4, 16]', 'xk: float32[1, 8, 2, 16]', 'freqs_cis: complex64[8, 8]']],
  ['llama_rotary_complex_input', ['x: float32[1, 8, 64]', 'freqs_cis: complex64[8, 8]']],
  ['llama_tokens_complex_buffer', ['tokens: int64[1, 12]']],
];

describe.each(cases)('%s', (name, signature) => {
  const fixture = loadFixture(name);

  test('compiles into one engine segment with zero fallback and matches PyTorch', async () => {
    const { inputs, outputs } = fixture.cases[0]!;
    const log: string[] = [];
    const program = await compile(path.join(fixture.dir, fixture.files.pt2!), {
      backend: 'reference',
      inputs: inputs.map((t) => ({ shape: [...t.shape] })),
      logger: (level, message) => log.push(message),
    });
    try {
      const fallback = program.report.ops.filter((o) => !o.converted);
      expect(fallback.map((o) => `${o.node} (${o.target}): ${o.reasons.join('; ')}`)).toEqual([]);
      expect(program.report.segments.map((s) => s.kind)).toEqual(['engine']);
      expect(program.report.ops.some((o) => o.target === 'trt.complex_mul')).toBe(true);
      expect(program.inputs.map((io) => `${io.name}: ${io.dtype}[${io.shape.join(', ')}]`)).toEqual(signature);
      expect(log.join('\n')).toContain('complex lowering:');
      const actual = await program.run(inputs);
      actual.forEach((t, i) => expectClose(t, outputs[i]!, FP32, `${name} output ${i}`));
    } finally {
      await program.dispose();
    }
  }, 120_000);
});
