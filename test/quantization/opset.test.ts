/**
 * Raising a model's opset for its Q/DQ nodes: an opset-11 model whose ops changed form or
 * meaning on the way (Squeeze/Unsqueeze/ReduceSum axes and Split's split at 13, Softmax's 2-D
 * flattening at 13, Dropout's ratio at 12, RoiAlign's coordinates at 16, the other reductions'
 * axes and Split's num_outputs at 18) gives the same outputs in onnxruntime raised to 13 and to
 * 19 as it did; calibrate() raises it as per-channel int8 (13) and fp8 (19) need, and refuses
 * models older than opset 11 that need raising, naming the file.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

import { Tensor } from '../../lib/ir/tensor';
import { calibrate } from '../../lib/quantization';
import { encodeModel, Names, openFloatModel } from '../../lib/quantization/onnx-model';
import { raiseOpset } from '../../lib/quantization/opset';
import { expectClose } from '../helpers/compare';
import { rejection } from '../helpers/errors';
import { buildSymbolicModel, i64, type SymNode } from '../helpers/onnx-symbolic-model';
import { runOrtModel } from '../helpers/ort-single-op';
import { Random } from '../helpers/random';
import { decode, opsetOf } from './onnx-inspect';

const rng = new Random(12);
const W = rng.tensor([4, 3, 3, 3], 'float32', -0.3, 0.3);

/** Conv, then ops whose form or meaning changed between opset 11 and 19, each an output. */
function legacyModel(opset: number): Uint8Array {
  const nodes: SymNode[] = [
    { op: 'Conv', name: 'conv', inputs: ['x', 'w'], outputs: ['c'], attrs: { pads: [1, 1, 1, 1] } },
    { op: 'Unsqueeze', name: 'unsqueeze', inputs: ['c'], outputs: ['u'], attrs: { axes: [1] } },
    { op: 'Squeeze', name: 'squeeze', inputs: ['u'], outputs: ['s'], attrs: { axes: [1] } },
    { op: 'ReduceSum', name: 'reduce_sum', inputs: ['s'], outputs: ['rs'], attrs: { axes: [3], keepdims: 1 } },
    // Over the flattened [2, 256] before opset 13: not the same as along axis 1.
    { op: 'Softmax', name: 'softmax', inputs: ['s'], outputs: ['sm'], attrs: { axis: 1 } },
    { op: 'LogSoftmax', name: 'log_softmax', inputs: ['rs'], outputs: ['ls'], attrs: { axis: -1 } },
    { op: 'Hardmax', name: 'hardmax', inputs: ['s'], outputs: ['hm'] },
    { op: 'Split', name: 'split', inputs: ['s'], outputs: ['sp1', 'sp2'], attrs: { axis: 2, split: [3, 5] } },
    { op: 'Split', name: 'split_even', inputs: ['s'], outputs: ['se1', 'se2'], attrs: { axis: 3 } },
    { op: 'Dropout', name: 'dropout', inputs: ['s'], outputs: ['d'], attrs: { ratio: 0.3 } },
    { op: 'ReduceMean', name: 'reduce_mean', inputs: ['s'], outputs: ['rm'], attrs: { axes: [2, 3], keepdims: 0 } },
    { op: 'ReduceMax', name: 'reduce_max', inputs: ['s'], outputs: ['rx'], attrs: { axes: [1] } },
    { op: 'RoiAlign', name: 'roi_align', inputs: ['s', 'rois', 'batch'], outputs: ['ra'], attrs: { output_height: 2, output_width: 2, sampling_ratio: 2 } },
  ];
  return buildSymbolicModel({
    inputs: { x: { dtype: 'float32', dims: [2, 3, 8, 8] } },
    initializers: { w: W, rois: Tensor.from('float32', [2, 4], [0.5, 1.5, 5.5, 6.25, 1, 0, 7, 3.5]), batch: i64([0, 1]) },
    nodes,
    outputs: ['c', 'rs', 'sm', 'ls', 'hm', 'sp1', 'sp2', 'se1', 'se2', 'd', 'rm', 'rx', 'ra'],
    opset,
  });
}

const x = rng.tensor([2, 3, 8, 8]);

function raised(model: Uint8Array, target: number): Uint8Array {
  const m = openFloatModel(model, 'legacy', undefined);
  raiseOpset(m, target, new Names(m.graph), 'the test');
  return encodeModel(m.model);
}

test.each([13, 19])('an opset-11 model raised to %d gives the same outputs in onnxruntime', async (target) => {
  const model = legacyModel(11);
  const before = await runOrtModel(model, [x]);
  const after = raised(model, target);
  expect(opsetOf(decode(after))).toBe(target);
  expect(Number(decode(after).irVersion)).toBeGreaterThanOrEqual(target === 19 ? 9 : 7);
  const outputs = await runOrtModel(after, [x]);
  expect(outputs).toHaveLength(before.length);
  outputs.forEach((t, i) => expectClose(t, before[i]!, { rtol: 1e-6, atol: 1e-6 }, `output ${i}`));
});

test('raising rewrites only what changed: LogSoftmax along the last axis stays one node, the others become inputs', () => {
  const m = decode(raised(legacyModel(11), 19));
  const ops = m.graph!.node!.map((n) => n.opType);
  expect(ops.filter((o) => o === 'LogSoftmax')).toHaveLength(1);
  expect(ops.filter((o) => o === 'Flatten')).toHaveLength(2); // Softmax, Hardmax
  const squeeze = m.graph!.node!.find((n) => n.name === 'squeeze')!;
  expect(squeeze.attribute).toEqual([]);
  expect(squeeze.input).toHaveLength(2);
  const split = m.graph!.node!.find((n) => n.name === 'split_even')!;
  expect(Number(split.attribute!.find((a) => a.name === 'num_outputs')?.i)).toBe(2);
});

describe('calibrate() raises where the Q/DQ nodes need it', () => {
  const batches = [{ x }, { x: rng.tensor([2, 3, 8, 8]) }];

  test.each([
    ['int8 per channel', 13, { precision: 'int8' as const }],
    ['fp8', 19, { precision: 'fp8' as const }],
  ])('%s: opset 11 → %d, and the Q/DQ model runs', async (_, to, options) => {
    const { model, report } = await calibrate(legacyModel(11), batches, options);
    expect(report.opset).toEqual({ from: 11, to });
    expect(report.quantizedNodeNames).toEqual(['conv']);
    const [c] = await runOrtModel(model, [x]);
    const [float] = await runOrtModel(legacyModel(11), [x]);
    expect(c!.shape).toEqual(float!.shape);
  });

  test('int8 with per-tensor weights needs opset 10 only: an opset-10 model stays at 10 and runs', async () => {
    const conv = buildSymbolicModel({ inputs: { x: { dtype: 'float32', dims: [2, 3, 8, 8] } }, initializers: { w: W }, nodes: [{ op: 'Conv', name: 'conv', inputs: ['x', 'w'], outputs: ['y'] }], outputs: ['y'], opset: 10 });
    const { model, report } = await calibrate(conv, batches, { perChannelWeights: false });
    expect(report.opset).toEqual({ from: 10, to: 10 });
    const [y] = await runOrtModel(model, [x]);
    expect(y!.shape).toEqual([2, 4, 6, 6]);
  });

  test('a model older than opset 11 that must be raised is E_UNSUPPORTED_OP naming the file and the opsets, before any batch runs', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'trtn-opset-'));
    try {
      const file = path.join(dir, 'old.onnx');
      fs.writeFileSync(file, buildSymbolicModel({ inputs: { x: { dtype: 'float32', dims: [2, 3, 8, 8] } }, initializers: { w: W }, nodes: [{ op: 'Conv', name: 'conv', inputs: ['x', 'w'], outputs: ['y'] }], outputs: ['y'], opset: 9 }));
      let pulled = 0;
      const source = (function* () {
        pulled++;
        yield { x };
      })();
      for (const options of [{}, { perChannelWeights: false }, { precision: 'fp8' as const }]) {
        const e = await rejection(calibrate(file, source, options));
        expect(e.code).toBe('E_UNSUPPORTED_OP');
        expect(e.message).toContain(file);
        expect(e.message).toContain('opset 9');
      }
      expect(pulled).toBe(0);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
