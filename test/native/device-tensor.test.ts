/**
 * lib/gpu's argument checks, which run before anything reaches the addon (so they hold on
 * machines without a GPU too), and the typed error a machine without a driver gets.
 */
import { CudaMissingError, InvalidArgumentError } from '../../lib/errors';
import { deviceOrdinal, setPoolReleaseThreshold, allocatePinnedBuffer } from '../../lib/gpu/device';
import { DeviceTensor, toDevice } from '../../lib/gpu/device-tensor';
import { formatLibraryVersion } from '../../lib/gpu/libraries';
import { residencyOf, type DeviceValue } from '../../lib/engine/residency';
import type { NativeDeviceBuffer } from '../../lib/gpu/binding';
import { requireBuild, runNode, DIST_INDEX } from '../helpers/built-package';

test('device arguments: an ordinal or anything with one', () => {
  expect(deviceOrdinal(3)).toBe(3);
  expect(deviceOrdinal({ ordinal: 1 })).toBe(1);
  expect(deviceOrdinal()).toBe(0);
  for (const bad of [-1, 1.5, NaN, '0', null, {}]) {
    expect(() => deviceOrdinal(bad as never)).toThrow(InvalidArgumentError);
  }
});

test('bad dtypes, shapes, tensors and sizes are E_INVALID_ARGUMENT before any GPU call', async () => {
  await expect(DeviceTensor.allocate('float128' as never, [2])).rejects.toThrow(/unknown dtype "float128"/);
  await expect(DeviceTensor.allocate('float32', [2, -1])).rejects.toThrow(/shape must be a list of integers >= 0, got \[2,-1\]/);
  await expect(toDevice({ dtype: 'float32' } as never)).rejects.toThrow(/toDevice expects a Tensor/);
  await expect(setPoolReleaseThreshold(0, -5)).rejects.toThrow(/byte count >= 0 or Infinity, got -5/);
  await expect(allocatePinnedBuffer(0, 1.5)).rejects.toThrow(InvalidArgumentError);
});

test('library versions as their projects write them', () => {
  expect(formatLibraryVersion('nvrtc', 13000)).toBe('13.0');
  expect(formatLibraryVersion('nvrtc', 12080)).toBe('12.8');
  expect(formatLibraryVersion('cublasLt', 130100)).toBe('13.1.0');
  expect(formatLibraryVersion('cudnn', 91400)).toBe('9.14.0');
});

const testWithoutDriver = process.platform === 'linux' ? test : test.skip;
testWithoutDriver('without a CUDA driver, toDevice is E_CUDA_MISSING (not a crash)', () => {
  requireBuild();
  const script = `
    const lib = require(${JSON.stringify(DIST_INDEX)});
    lib.toDevice(new lib.Tensor('float32', [2])).then(
      () => console.log('resolved'),
      (e) => console.log(JSON.stringify({ name: e.name, code: e.code })));`;
  const result = runNode(['-e', script], { TENSORRT_NODE_CUDA_LIBRARY: '/nonexistent/libcuda.so.1' });
  expect(JSON.parse(result.stdout)).toEqual({ name: CudaMissingError.name, code: 'E_CUDA_MISSING' });
});

/** A DeviceTensor over a stand-in allocation (no addon call is made by what these tests use). */
function standIn(device: number, disposed = false): DeviceTensor {
  const buffer: NativeDeviceBuffer = { byteLength: 24, device, disposed, address: 0x1000n, dispose: () => undefined };
  const Ctor = DeviceTensor as unknown as new (b: NativeDeviceBuffer, dtype: string, shape: number[]) => DeviceTensor;
  return new Ctor(buffer, 'float32', [2, 3]);
}

test('a DeviceTensor is a DeviceValue: programs see it as resident on its device', () => {
  const value: DeviceValue = standIn(3);
  expect(value.residency).toEqual({ kind: 'device', ordinal: 3 });
  expect(residencyOf(value)).toEqual({ kind: 'device', ordinal: 3 });
  expect(value.shape).toEqual([2, 3]);
});

test('to(device) checks the target and the source before any copy', async () => {
  await expect(standIn(0).to(-1)).rejects.toThrow(InvalidArgumentError);
  await expect(standIn(0).to(1.5)).rejects.toThrow(/a device must be a CUDA ordinal/);
  await expect(standIn(0, true).to(1)).rejects.toThrow(/to\(1\) on a disposed DeviceTensor \(float32 \[2, 3\], device 0\)/);
});
