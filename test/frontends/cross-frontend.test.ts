/**
 * The same PyTorch model exported both ways (torch.export → .pt2, torch.onnx.export → .onnx)
 * gives the same outputs through the two frontends: at the fixture's stored inputs (both
 * also equal PyTorch's outputs, tested per frontend), and at new sizes of the dynamic dims,
 * where onnxruntime running the .onnx file is the independent reference for the .pt2 path.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';

import { loadOnnx } from '../../lib/frontends/onnx';
import { loadPt2 } from '../../lib/frontends/pt2';
import { interpret } from '../../lib/interpreter';
import type { Tensor } from '../../lib/ir/tensor';
import { expectClose, FP32 } from '../helpers/compare';
import { loadFixture, ONNX_FIXTURES } from '../helpers/fixtures';
import { runOrtModel } from '../helpers/ort-single-op';
import { Random } from '../helpers/random';

const rng = new Random(4242);

describe.each(ONNX_FIXTURES)('%s: .onnx and .pt2 agree', (name) => {
  const fixture = loadFixture(name);
  const onnxFile = path.join(fixture.dir, fixture.files.onnx!);
  const pt2File = path.join(fixture.dir, fixture.files.pt2!);

  test('at the stored inputs (every stored size)', () => {
    const onnxGraph = loadOnnx(onnxFile);
    const pt2Graph = loadPt2(pt2File);
    fixture.cases.forEach((c, k) => {
      const fromOnnx = interpret(onnxGraph, c.inputs);
      const fromPt2 = interpret(pt2Graph, c.inputs);
      expect(fromPt2).toHaveLength(fromOnnx.length);
      fromPt2.forEach((t, i) => expectClose(t, fromOnnx[i]!, FP32, `${name} case ${k} output ${i}`));
    });
  });

  test('at new inputs (and new sizes where both exports are dynamic), the .pt2 path matches onnxruntime', async () => {
    // The encoder's ONNX export bakes its traced size into a Reshape, so it has no other size;
    // squeezenet's .pt2 has a static batch, so only the values are new.
    const cases: Tensor[][] = {
      mlp: [[rng.tensor([1, 32])], [rng.tensor([9, 32])]],
      encoder: [],
      mobilenet_v3_small: [[rng.tensor([1, 3, 96, 96])], [rng.tensor([3, 3, 96, 96])]],
      squeezenet1_1: [[rng.tensor([1, 3, 64, 64])]],
    }[name]!;
    const graph = loadPt2(pt2File);
    const bytes = fs.readFileSync(onnxFile);
    for (const inputs of cases) {
      const expected = await runOrtModel(bytes, inputs);
      interpret(graph, inputs).forEach((t, i) => expectClose(t, expected[i]!, FP32, `${name} [${inputs[0]!.shape.join(', ')}]`));
    }
  });
});
