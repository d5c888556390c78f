/**
 * The `tf32` precision reaches cuDNN convolutions as it reaches cuBLASLt GEMMs
 * (lib/backends/cuda/layers/linalg.ts).
 */
import { lowerLayer, type LoweredStep } from '../../../../lib/backends/cuda/layers';
import type { TrtDType } from '../../../../lib/network';
import { Tensor } from '../../../../lib/ir/tensor';

const convOf = (kind: 'convolution' | 'deconvolution', dtype: TrtDType, tf32: boolean | undefined): LoweredStep | undefined => {
  const kernel = Tensor.from('float32', [2, 2, 3, 3], new Array(36).fill(0.5));
  const steps = lowerLayer({
    layer: {
      index: 0,
      name: 'conv',
      params: { kind, nbOutputMaps: 2, kernelSize: [3, 3], stride: [1, 1], prePadding: [1, 1], postPadding: [1, 1], dilation: [1, 1], groups: 1, kernel, bias: null },
      inputs: [0],
      outputs: [1],
    },
    inputs: [{ dtype, shape: [1, 2, 5, 5], at: { buffer: 0 } }],
    outputs: [{ dtype, shape: [1, 2, 5, 5], at: { buffer: 1 } }],
    values: [undefined],
    scratch: () => ({ buffer: 9 }),
    check: () => {
      throw new Error('a convolution registers no run-time check');
    },
    weight: () => ({ buffer: 8 }),
    ...(tf32 === undefined ? {} : { tf32 }),
  });
  return steps.find((s) => s.kind === 'conv');
};

test.each(['convolution', 'deconvolution'] as const)('float32 %s steps use TF32 only when the build allows it; fp16/bf16 never carry the flag', (kind) => {
  expect(convOf(kind, 'float32', undefined)).toMatchObject({ kind: 'conv', input: [1, 2, 5, 5] });
  expect(convOf(kind, 'float32', undefined)).not.toHaveProperty('tf32');
  expect(convOf(kind, 'float32', false)).not.toHaveProperty('tf32');
  expect(convOf(kind, 'float32', true)).toMatchObject({ kind: 'conv', tf32: true });
  expect(convOf(kind, 'float16', true)).toMatchObject({ kind: 'conv', dtype: 'float16' });
  expect(convOf(kind, 'float16', true)).not.toHaveProperty('tf32');
  expect(convOf(kind, 'bfloat16', true)).not.toHaveProperty('tf32');
});
