/**
 * End to end: the CNN, MLP and encoder fixtures compile (both frontends) into TensorRT
 * segments with no fallback and, run on the reference backend through a worker thread,
 * match the outputs PyTorch stored for them, at every size stored (each compiled for that
 * size; test/compile/dynamic-fixtures.test.ts compiles once for all sizes).
 */
import * as path from 'node:path';

import { compile } from '../../lib/compile';
import { expectClose, FP32 } from '../helpers/compare';
import { loadFixture, ONNX_FIXTURES } from '../helpers/fixtures';

const cases = ONNX_FIXTURES.flatMap((name) => [
  [name, 'onnx'],
  [name, 'pt2'],
]) as Array<[string, 'onnx' | 'pt2']>;

describe.each(cases)('%s (.%s)', (name, format) => {
  const fixture = loadFixture(name);
  const file = path.join(fixture.dir, fixture.files[format]!);

  test.each(fixture.cases.map((c, k) => [k, c] as const))('case %d: compiles with zero fallback and matches PyTorch', async (_k, c) => {
    const { inputs, outputs } = c;
    const program = await compile(file, { backend: 'reference', inputs: inputs.map((t) => ({ shape: [...t.shape] })) });
    try {
      const fallback = program.report.ops.filter((o) => !o.converted);
      expect(fallback.map((o) => `${o.node} (${o.target}): ${o.reasons.join('; ')}`)).toEqual([]);
      expect(program.report.segments.every((s) => s.kind === 'engine')).toBe(true);
      const actual = await program.run(inputs);
      actual.forEach((t, i) => expectClose(t, outputs[i]!, FP32, `${name} output ${i}`));
    } finally {
      await program.dispose();
    }
  }, 120_000);
});
