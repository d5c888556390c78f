/**
 * Values named like Object.prototype's properties: an input, a segment
 * boundary, an output or a constant output named `__proto__`, `constructor`, `toString` or
 * `hasOwnProperty` compiles, runs (inputs in order and by name), saves and loads like any
 * other name. Expected values are computed by hand from the inputs.
 * Needs dist/ (npm run build:ts): runs go through the worker thread.
 */
import { compile } from '../../lib/compile';
import { loadProgramBuffer } from '../../lib/runtime/program-file';
import type { Program } from '../../lib/runtime/program';
import { Tensor } from '../../lib/ir/tensor';
import { expectTensor } from '../helpers/compare';
import { rejection } from '../helpers/errors';
import { buildGraphModel } from '../helpers/ort-single-op';

const NAMES = ['__proto__', 'constructor', 'toString', 'hasOwnProperty'] as const;
const X = [1, -2, 3, -4];

/** An own property `key` (an object literal's `__proto__: v` would set the prototype instead). */
const byName = (key: string, t: Tensor): Record<string, Tensor> => Object.defineProperty({}, key, { value: t, enumerable: true }) as Record<string, Tensor>;

/**
 * ONNX: input `name` → Relu → `name`+mid → Neg → `<other>` → Abs → output `<other2>`, with
 * Neg forced out of TensorRT so that the values around it are segment boundaries.
 */
function model(input: string, boundary: string, output: string): Uint8Array {
  return buildGraphModel({
    nodes: [
      { opType: 'Relu', inputs: [input], outputs: [`${boundary}`] },
      { opType: 'Neg', inputs: [boundary], outputs: [`${boundary}_neg`] },
      { opType: 'Abs', inputs: [`${boundary}_neg`], outputs: [output] },
    ],
    inputs: { [input]: Tensor.from('float32', [4], X) },
    outputs: [output],
  });
}

async function expectRuns(program: Program, input: string): Promise<void> {
  const x = Tensor.from('float32', [4], X);
  const expected = X.map((v) => Math.abs(-Math.max(v, 0)));
  expectTensor((await program.run([x]))[0]!, 'float32', [4], expected);
  expectTensor((await program.run(byName(input, x)))[0]!, 'float32', [4], expected);
}

describe.each(NAMES.map((n, i) => [n, NAMES[(i + 1) % NAMES.length]!, NAMES[(i + 2) % NAMES.length]!]))('input %s, boundary %s, output %s', (input, boundary, output) => {
  let program: Program;
  beforeAll(async () => {
    program = await compile(model(input, boundary, output), { backend: 'reference', minBlockSize: 1, torchExecutedOps: ['aten.neg.default'] });
  });
  afterAll(() => program.dispose());

  test('compiles into segments that pass those values by name, and runs', async () => {
    expect(program.report.segments.map((s) => s.kind)).toEqual(['engine', 'fallback', 'engine']);
    expect(program.inputs.map((i) => i.name)).toEqual([input]);
    expect(program.outputs.map((o) => o.name)).toEqual([output]);
    await expectRuns(program, input);
  });

  test('saves and loads', async () => {
    const loaded = await loadProgramBuffer(program.saveBuffer());
    try {
      await expectRuns(loaded, input);
    } finally {
      await loaded.dispose();
    }
  });

  test('a missing input is still missing when the prototype has the name', async () => {
    const x = Tensor.from('float32', [4], X);
    const inherited = Object.create(byName(input, x)) as Record<string, Tensor>;
    expect((await rejection(program.run(inherited))).message).toContain(`missing ${input}`);
  });
});

test('a constant output named __proto__ and a computed one named constructor', async () => {
  const onnx = buildGraphModel({
    nodes: [
      { opType: 'Constant', inputs: [], outputs: ['__proto__'], attributes: { value: Tensor.from('float32', [2], [7, 8]) } },
      { opType: 'Relu', inputs: ['toString'], outputs: ['constructor'] },
    ],
    inputs: { toString: Tensor.from('float32', [4], X) },
    outputs: ['__proto__', 'constructor'],
  });
  const program = await compile(onnx, { backend: 'reference', minBlockSize: 1 });
  const loaded = await loadProgramBuffer(program.saveBuffer());
  try {
    for (const p of [program, loaded]) {
      const [c, y] = await p.run(byName('toString', Tensor.from('float32', [4], X)));
      expectTensor(c!, 'float32', [2], [7, 8]);
      expectTensor(y!, 'float32', [4], X.map((v) => Math.max(v, 0)));
    }
  } finally {
    await program.dispose();
    await loaded.dispose();
  }
});
