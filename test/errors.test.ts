/**
 * The typed errors of lib/errors.ts. Codes are public API; the native addon builds its errors
 * through createError, so every code must map to its own subclass.
 */
import {
  BadInputError,
  createError,
  CudaError,
  ERROR_CODES,
  InternalError,
  TensorRTNodeError,
  type ErrorCode,
} from '../lib/errors';

// Written out by hand (not derived from lib/errors.ts) so that a changed or dropped mapping fails.
const EXPECTED: Record<ErrorCode, string> = {
  E_ADDON_LOAD: 'NativeAddonLoadError',
  E_CUDA_MISSING: 'CudaMissingError',
  E_NO_DEVICE: 'NoDeviceError',
  E_CUDA: 'CudaError',
  E_TENSORRT_MISSING: 'TensorRTMissingError',
  E_BACKEND_UNAVAILABLE: 'BackendUnavailableError',
  E_TENSORRT: 'TensorRTError',
  E_INVALID_ARGUMENT: 'InvalidArgumentError',
  E_BAD_MODEL: 'BadModelError',
  E_BAD_INPUT: 'BadInputError',
  E_UNSUPPORTED_OP: 'UnsupportedOpError',
  E_COMPLEX128: 'ComplexDoubleError',
  E_BAD_PROGRAM: 'BadProgramError',
  E_NO_COMPATIBLE_DEVICE: 'NoCompatibleDeviceError',
  E_SHARDING: 'ShardingError',
  E_SHAPE_OUT_OF_RANGE: 'ShapeOutOfRangeError',
  E_DYNAMIC_UNSUPPORTED: 'DynamicUnsupportedError',
  E_RESOURCE_LIMIT: 'ResourceLimitError',
  E_INTERNAL: 'InternalError',
  E_OUT_OF_DEVICE_MEMORY: 'OutOfDeviceMemoryError',
  E_CUDA_LIBRARY_MISSING: 'CudaLibraryMissingError',
  E_NVRTC_COMPILE: 'NvrtcCompileError',
  E_NCCL: 'NcclError',
  E_ABORTED: 'AbortedError',
};

describe('ERROR_CODES', () => {
  test('lists exactly the documented codes and cannot be modified', () => {
    expect([...ERROR_CODES].sort()).toEqual(Object.keys(EXPECTED).sort());
    expect(Object.isFrozen(ERROR_CODES)).toBe(true);
  });
});

describe('createError', () => {
  test.each(Object.entries(EXPECTED))('%s becomes %s', (code, className) => {
    const details = { call: 'cuInit', n: 3 };
    const error = createError(code, 'something failed', details);
    expect(error).toBeInstanceOf(TensorRTNodeError);
    expect(error).toBeInstanceOf(Error);
    expect(error.code).toBe(code);
    expect(error.name).toBe(className);
    expect(error.constructor.name).toBe(className);
    expect(error.message).toBe('something failed');
    expect(error.details).toEqual(details);
    expect(String(error)).toBe(`${className}: something failed`);
  });

  test('each code has a distinct class', () => {
    const classes = new Set(ERROR_CODES.map((code) => createError(code, 'm').constructor));
    expect(classes.size).toBe(ERROR_CODES.length);
  });

  test('an unknown code becomes E_INTERNAL quoting the code and keeping the message and details', () => {
    const error = createError('E_FROM_THE_FUTURE', 'the driver said no', { call: 'cuInit' });
    expect(error).toBeInstanceOf(InternalError);
    expect(error.code).toBe('E_INTERNAL');
    expect(error.name).toBe('InternalError');
    expect(error.message).toContain('the driver said no');
    expect(error.message).toContain('"E_FROM_THE_FUTURE"');
    expect(error.details).toEqual({ call: 'cuInit' });
  });

  test.each(['', 'e_cuda', 'E_CUDA ', 'toString', '__proto__', 'constructor', 'hasOwnProperty'])('%j is not a code', (code) => {
    // Codes are matched exactly; keys inherited from Object.prototype are not error classes
    // (a plain-object lookup would `new Object.prototype.toString(...)` and throw instead).
    const error = createError(code, 'm');
    expect(error).toBeInstanceOf(InternalError);
    expect(error.code).toBe('E_INTERNAL');
  });

  test('details default to an empty object', () => {
    expect(createError('E_CUDA', 'm').details).toEqual({});
  });
});

describe('TensorRTNodeError', () => {
  test('chains the cause', () => {
    const cause = new Error('dlopen failed');
    const error = new CudaError('no driver', { cause, details: { library: 'libcuda.so.1' } });
    expect(error.cause).toBe(cause);
    expect(error.details).toEqual({ library: 'libcuda.so.1' });
    expect(error.code).toBe('E_CUDA');
  });

  test('has no cause property when none is given', () => {
    const error = new BadInputError('wrong shape');
    expect('cause' in error).toBe(false);
    expect(error.details).toEqual({});
  });

  test('keeps a non-Error cause as given', () => {
    expect(new BadInputError('x', { cause: 42 }).cause).toBe(42);
  });

  test('has a stack that starts with the class name', () => {
    const error = new InternalError('bug');
    expect(error.stack?.split('\n')[0]).toBe('InternalError: bug');
  });
});
