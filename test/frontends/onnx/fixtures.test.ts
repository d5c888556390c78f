/**
 * The ONNX fixtures (exported by torch.onnx.export) imported and interpreted on the CPU must
 * match the outputs PyTorch computed for them; at other sizes of their dynamic dims, they
 * must match onnxruntime running the same file.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';

import { TensorRTNodeError } from '../../../lib/errors';
import { loadOnnx } from '../../../lib/frontends/onnx';
import { interpret } from '../../../lib/interpreter';
import type { Graph } from '../../../lib/ir/graph';
import { printGraph } from '../../../lib/ir/printer';
import type { Tensor } from '../../../lib/ir/tensor';
import { expectClose, FP32 } from '../../helpers/compare';
import { loadFixture, ONNX_FIXTURES } from '../../helpers/fixtures';
import { runOrtModel } from '../../helpers/ort-single-op';
import { Random } from '../../helpers/random';

const rng = new Random(20261129);


describe.each(ONNX_FIXTURES)('ONNX fixture %s', (name) => {
  const fixture = loadFixture(name);
  const file = path.join(fixture.dir, fixture.files.onnx!);
  let graph: Graph;
  beforeAll(() => {
    graph = loadOnnx(file);
  });

  test('matches the PyTorch outputs', () => {
    for (const c of fixture.cases) {
      const outputs = interpret(graph, c.inputs);
      outputs.forEach((t, i) => expectClose(t, c.outputs[i]!, FP32, `${name} output ${i}`));
    }
  });

  test('keeps its dynamic dims symbolic', () => {
    const printed = printGraph(graph);
    const dynamic = fixture.name === 'squeezenet1_1' ? [] : fixture.name === 'encoder' ? ['batch', 'seq'] : ['batch'];
    for (const s of dynamic) expect(graph.symbols.has(s)).toBe(true);
    expect(graph.inputs[0]!.tensorType.shape.filter((d) => typeof d !== 'number')).toHaveLength(dynamic.length);
    // The printed input signature carries the symbols, not -1 or a traced size.
    for (const s of dynamic) expect(printed.split('\n')[0]).toMatch(new RegExp(`\\[[^\\]]*\\b${s}\\b`));
  });

  test('matches onnxruntime at other sizes of its dynamic dims', async () => {
    const bytes = fs.readFileSync(file);
    const sizes: Tensor[][] = {
      mlp: [[rng.tensor([1, 32])], [rng.tensor([7, 32])]],
      // The encoder's export declares batch and seq dynamic but bakes [16, 4, 16] into a
      // Reshape, so no other size runs in onnxruntime either; see the test below.
      encoder: [],
      mobilenet_v3_small: [[rng.tensor([1, 3, 96, 96])]],
      squeezenet1_1: [],
    }[name]!;
    for (const inputs of sizes) {
      const expected = await runOrtModel(bytes, inputs);
      const actual = interpret(graph, inputs);
      actual.forEach((t, i) => expectClose(t, expected[i]!, FP32, `${name} at [${inputs[0]!.shape.join(', ')}] output ${i}`));
    }
  });
});

test('the encoder ONNX export only runs at its traced size: other sizes are typed errors, as in onnxruntime', async () => {
  const fixture = loadFixture('encoder');
  const file = path.join(fixture.dir, fixture.files.onnx!);
  const inputs = [rng.intTensor([1, 5], 0, 999)];
  await expect(runOrtModel(fs.readFileSync(file), inputs)).rejects.toThrow(/Reshape/);
  let error: unknown;
  try {
    interpret(loadOnnx(file), inputs);
  } catch (e) {
    error = e;
  }
  expect(error).toBeInstanceOf(TensorRTNodeError);
  expect((error as TensorRTNodeError).message).toContain('Reshape_4');
});
