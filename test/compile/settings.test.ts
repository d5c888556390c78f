/** compile() settings validation: unknown keys and bad values name the key and the value. */
import { InvalidArgumentError } from '../../lib/errors';
import { resolveSettings } from '../../lib/compile/settings';

const message = (settings: unknown): string => {
  try {
    resolveSettings(settings as never);
  } catch (e) {
    expect(e).toBeInstanceOf(InvalidArgumentError);
    return (e as Error).message;
  }
  throw new Error('expected an error');
};

test('defaults', () => {
  expect(resolveSettings()).toEqual({
    backend: 'auto',
    build: { precisions: ['fp32'], workspaceBytes: undefined, timingCache: undefined, hardwareCompatibility: 'none', optimizationLevel: 3 },
    inputs: undefined,
    minBlockSize: 5,
    torchExecutedOps: new Set(),
    requireFullCompilation: false,
    truncateDouble: false,
    complexFallback: false,
    dynamicFallback: false,
    device: { type: 'gpu', gpuId: undefined, dlaCore: null, allowGpuFallback: false },
    logger: undefined,
    onProgress: undefined,
    tensorParallel: undefined,
    limits: { maxTensorBytes: 2 ** 32 },
  });
});

test.each([
  [{ minBlockSze: 3 }, 'unknown key "minBlockSze"'],
  [{ backend: 'cudnn' }, 'backend must be "auto" or one of "tensorrt", "cuda", "onnxruntime", "reference", got "cudnn"'],
  [{ precisions: [] }, 'precisions must be a non-empty array of "fp32", "tf32", "fp16", "bf16", got []'],
  [{ precisions: ['fp16', 'int4'] }, 'precisions: unknown precision "int4" (known: fp32, tf32, fp16, bf16)'],
  [{ workspaceBytes: -1 }, 'workspaceBytes must be a positive integer, got -1'],
  [{ workspaceBytes: 1.5 }, 'workspaceBytes must be a positive integer, got 1.5'],
  [{ timingCache: '' }, 'timingCache must be a file path or the bytes of a timing cache, got ""'],
  [{ timingCache: 42 }, 'timingCache must be a file path or the bytes of a timing cache, got 42'],
  [{ hardwareCompatibility: 'hopper+' }, 'hardwareCompatibility must be one of "none", "ampere+", got "hopper+"'],
  [{ optimizationLevel: 6 }, 'optimizationLevel must be an integer from 0 to 5, got 6'],
  [{ optimizationLevel: -1 }, 'optimizationLevel must be an integer from 0 to 5, got -1'],
  [{ minBlockSize: 0 }, 'minBlockSize must be an integer >= 1, got 0'],
  [{ minBlockSize: 2.5 }, 'minBlockSize must be an integer >= 1, got 2.5'],
  [{ torchExecutedOps: 'aten.mul.Tensor' }, 'torchExecutedOps must be a list'],
  [{ requireFullCompilation: 'yes' }, 'requireFullCompilation must be a boolean, got "yes"'],
  [{ truncateDouble: 1 }, 'truncateDouble must be a boolean, got 1'],
  [{ logger: 'stderr' }, 'logger must be a function'],
  [{ maxTensorBytes: 0 }, 'maxTensorBytes must be a positive integer number of bytes, got 0'],
  [{ maxTensorBytes: 1.5 }, 'maxTensorBytes must be a positive integer number of bytes, got 1.5'],
  [{ maxTensorBytes: '1GB' }, 'maxTensorBytes must be a positive integer number of bytes, got "1GB"'],
  [{ inputs: [{ shape: [1, -2] }] }, 'inputs[0].shape must be a list of non-negative integers, got [1,-2]'],
  [{ inputs: { x: { shape: [1], dtype: 'float128' } } }, 'inputs.x.dtype "float128" is not a dtype'],
  [{ inputs: { x: { shape: [1], size: 3 } } }, 'inputs.x has an unknown key "size"'],
  [{ inputs: 5 }, 'inputs must be a list'],
  [[], 'must be an object'],
])('%j is refused: %s', (settings, expected) => {
  expect(message(settings)).toContain(expected);
});

test('valid settings resolve', () => {
  const r = resolveSettings({ backend: 'reference', minBlockSize: 1, torchExecutedOps: ['aten.mul.Tensor'], inputs: { x: { shape: [2, 3] } } });
  expect(r.torchExecutedOps.has('aten.mul.Tensor')).toBe(true);
  expect(r.minBlockSize).toBe(1);
});
