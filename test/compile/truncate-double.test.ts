/**
 * truncateDouble at the program boundary: engine segments compute float64 values in
 * float32, but the program still takes and returns float64 tensors, and a fallback segment
 * between two engine segments gets the float64 values its graph is typed with. The graph
 * (x, w float64 → mul → relu → [sigmoid in a fallback segment] → add x → mul w) is checked
 * against the same formulas evaluated here in float64, and against the interpreter, within
 * float32 tolerance. Needs dist/ (npm run build:ts).
 */
import { compile, type CompileSettings } from '../../lib/compile';
import { call } from '../../lib/ir/builder';
import { Graph, tensorType } from '../../lib/ir/graph';
import { interpret } from '../../lib/interpreter';
import { loadProgramBuffer } from '../../lib/runtime/program-file';
import { Tensor } from '../../lib/ir/tensor';
import { expectClose, FP32 } from '../helpers/compare';
import { Random } from '../helpers/random';

const SHAPE = [3, 5];

/** y = (sigmoid(relu(x * w)) + x) * w, and r = relu(x * w) as a second output. */
function float64Graph(): Graph {
  const g = new Graph('float64_chain');
  const x = g.addInput('x', tensorType('float64', SHAPE));
  const w = g.addInput('w', tensorType('float64', SHAPE));
  const op = (target: string, args: Parameters<typeof call>[2]) => call(g, target, args).output;
  const r = op('aten.relu.default', { self: op('aten.mul.Tensor', { self: x, other: w }) });
  const s = op('aten.sigmoid.default', { self: r });
  const y = op('aten.mul.Tensor', { self: op('aten.add.Tensor', { self: s, other: x }), other: w });
  g.setOutputs([y, r], ['y', 'r']);
  return g;
}

/** The outputs from the formulas, in float64. */
function expected(x: Float64Array, w: Float64Array): [Tensor, Tensor] {
  const r = x.map((xi, i) => Math.max(xi * w[i]!, 0));
  const y = r.map((ri, i) => (1 / (1 + Math.exp(-ri)) + x[i]!) * w[i]!);
  return [new Tensor('float64', SHAPE, y), new Tensor('float64', SHAPE, r)];
}

describe('truncateDouble: a float64 program with a fallback segment between engine segments', () => {
  const rng = new Random(4242);
  const x = new Tensor('float64', SHAPE, Float64Array.from(rng.floats(15, -3, 3)));
  const w = new Tensor('float64', SHAPE, Float64Array.from(rng.floats(15, -2, 2)));
  const settings: CompileSettings = { backend: 'reference', truncateDouble: true, minBlockSize: 1, torchExecutedOps: ['aten.sigmoid.default'] };

  test('the program is engine → fallback → engine and declares float64 I/O', async () => {
    const program = await compile(float64Graph(), settings);
    try {
      expect(program.data.segments.map((s) => s.kind)).toEqual(['engine', 'fallback', 'engine']);
      expect([...program.inputs, ...program.outputs].map((io) => io.dtype)).toEqual(['float64', 'float64', 'float64', 'float64']);
    } finally {
      await program.dispose();
    }
  });

  test('returns float64 outputs matching the formulas and the interpreter within float32 tolerance', async () => {
    const program = await compile(float64Graph(), settings);
    try {
      const outputs = await program.run([x, w]);
      const want = expected(x.data as Float64Array, w.data as Float64Array);
      const interpreted = interpret(float64Graph(), [x, w]);
      outputs.forEach((t, i) => {
        expect(t.dtype).toBe('float64');
        expect(Object.prototype.toString.call(t.data)).toBe('[object Float64Array]');
        expectClose(t, want[i]!, FP32, `output ${i} vs the formulas`);
        expectClose(t, interpreted[i]!, FP32, `output ${i} vs the interpreter`);
      });
      // By name, too; and a float32 tensor for a float64 input is still refused.
      expect((await program.run({ x, w }))[0]!.dtype).toBe('float64');
      await expect(program.run([new Tensor('float32', SHAPE, Float32Array.from(x.data as Float64Array)), w])).rejects.toMatchObject({ code: 'E_BAD_INPUT' });
    } finally {
      await program.dispose();
    }
  });

  test('a saved and loaded program does the same', async () => {
    const program = await compile(float64Graph(), settings);
    const loaded = await loadProgramBuffer(program.saveBuffer());
    try {
      const want = expected(x.data as Float64Array, w.data as Float64Array);
      const outputs = await loaded.run([x, w]);
      outputs.forEach((t, i) => expectClose(t, want[i]!, FP32, `output ${i}`));
    } finally {
      await program.dispose();
      await loaded.dispose();
    }
  });

  test('one engine segment end to end: float64 in, float64 out', async () => {
    const program = await compile(float64Graph(), { backend: 'reference', truncateDouble: true, minBlockSize: 1 });
    try {
      expect(program.data.segments.map((s) => s.kind)).toEqual(['engine']);
      const outputs = await program.run([x, w]);
      const want = expected(x.data as Float64Array, w.data as Float64Array);
      outputs.forEach((t, i) => expectClose(t, want[i]!, FP32, `output ${i}`));
    } finally {
      await program.dispose();
    }
  });
});
