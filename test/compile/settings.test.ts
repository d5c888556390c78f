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
  [{ backend: 'cuda' }, 'backend must be "auto", "reference" or "tensorrt", got "cuda"'],
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
