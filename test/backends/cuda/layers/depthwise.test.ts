/**
 * The cuda backend's depthwise convolution kernel (lib/backends/cuda/layers/depthwise.ts),
 * run on the CPU kernel emulator, against onnxruntime's Conv with group = C on the same
 * numbers (transposed to NCHW and back by onnxruntime's Transpose): each vector width (C of 16,
 * 12 and 3), strides, dilation, padding, and the bias and ReLU epilogue.
 */
import { Network } from '../../../../lib/network';
import { Tensor } from '../../../../lib/ir/tensor';
import { expectClose, FP32 } from '../../../helpers/compare';
import { closeOrt, runOrtOp } from '../../../helpers/ort-single-op';
import { Random } from '../../../helpers/random';
import { emulateLowered } from '../emulated-network';

const random = new Random(91);

afterAll(() => closeOrt());

interface Case {
  n: number;
  h: number;
  w: number;
  c: number;
  k: [number, number];
  stride: [number, number];
  pad: [number, number];
  dilation: [number, number];
  relu: boolean;
}

const cases: Array<[string, Case]> = [
  ['3×3, 16 channels (vectors of 8), ReLU', { n: 2, h: 7, w: 9, c: 16, k: [3, 3], stride: [1, 1], pad: [1, 1], dilation: [1, 1], relu: true }],
  ['5×5 stride 2, 12 channels (vectors of 4)', { n: 1, h: 9, w: 10, c: 12, k: [5, 5], stride: [2, 2], pad: [2, 2], dilation: [1, 1], relu: false }],
  ['3×2 dilated, 3 channels (one a thread)', { n: 1, h: 8, w: 7, c: 3, k: [3, 2], stride: [1, 2], pad: [2, 1], dilation: [2, 3], relu: false }],
];

test.each(cases)('%s: as onnxruntime\'s Conv with group = C', async (_name, p) => {
  const x = random.tensor([p.n, p.h, p.w, p.c], 'float32', -1, 1);
  const weight = random.tensor([p.c, 1, ...p.k], 'float32', -0.5, 0.5);
  const bias = random.tensor([p.c], 'float32', -0.5, 0.5);
  const net = new Network('depthwise');
  const input = net.addInput('x', 'float32', [p.n, p.h, p.w, p.c]);
  // Channels-last layers keep their kernel as [K, kh, kw, C / groups]: with one channel a group, the same numbers.
  const conv = net.add1(
    {
      kind: 'convolution',
      nbOutputMaps: p.c,
      kernelSize: p.k,
      stride: p.stride,
      prePadding: p.pad,
      postPadding: p.pad,
      dilation: p.dilation,
      groups: p.c,
      kernel: new Tensor('float32', [p.c, ...p.k, 1], weight.data),
      bias,
      channelsLast: true,
      ...(p.relu ? { activation: 'relu' as const } : {}),
    },
    [input],
    'dw',
  );
  net.markOutput(conv, 'y');
  const { outputs, lowered } = emulateLowered(net, { x });
  expect(lowered.steps.map((s) => (s.kind === 'launch' ? s.kernel.key.split('.')[0] : s.kind))).toEqual(['dwconv2d']);

  const [nchw] = await runOrtOp({ opType: 'Transpose', inputs: [x], attributes: { perm: [0, 3, 1, 2] } });
  let [want] = await runOrtOp({
    opType: 'Conv',
    inputs: [nchw!, weight, bias],
    attributes: { group: p.c, kernel_shape: p.k, strides: p.stride, pads: [...p.pad, ...p.pad], dilations: p.dilation },
  });
  if (p.relu) [want] = await runOrtOp({ opType: 'Relu', inputs: [want!] });
  const [nhwc] = await runOrtOp({ opType: 'Transpose', inputs: [want!], attributes: { perm: [0, 2, 3, 1] } });
  expectClose(outputs.y!, nhwc!, FP32, 'depthwise');
});
