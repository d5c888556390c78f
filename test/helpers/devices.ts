/**
 * Hand-written CUDA devices and engine device records for tests: the two devices the fake
 * CUDA driver reports (test/native/fixtures/fake_cuda.c, scenario `twoDevices`), a generic
 * H200 for device-selection tests, and the record the reference backend's engines carry.
 */
import type { CudaDevice } from '../../lib/devices';
import type { BackendName } from '../../lib/engine/backend';
import { engineDeviceRecord, resolveDeviceSetting } from '../../lib/compile/device-target';
import type { EngineDevice } from '../../lib/engine/device-selection';

/** Device 0 of the fake CUDA driver (fake_cuda.c), as devices() reports it. */
export const FAKE_H200: CudaDevice = {
  ordinal: 0,
  name: 'NVIDIA H200',
  uuid: 'GPU-8f2a4c1d-e5b6-4793-a01b-2c3d4e5f6071',
  pciBusId: '0000:19:00.0',
  pci: { domain: 0, bus: 0x19, device: 0, function: 0 },
  computeCapability: { major: 9, minor: 0 },
  totalMemoryBytes: 150754820096,
  multiprocessorCount: 132,
};

/** Device 1 of the fake CUDA driver (fake_cuda.c), as devices() reports it. */
export const FAKE_A100: CudaDevice = {
  ordinal: 1,
  name: 'NVIDIA A100-SXM4-80GB',
  // Bytes >= 0x80 check that the native char -> hex conversion does not sign-extend.
  uuid: 'GPU-feedface-0001-0203-8090-a0b0c0d0e0ff',
  pciBusId: '0000:3B:00.0',
  pci: { domain: 0, bus: 0x3b, device: 0, function: 0 },
  computeCapability: { major: 8, minor: 0 },
  totalMemoryBytes: 85100068864,
  multiprocessorCount: 108,
};

/** A GPU with compute capability 9.0 at ordinal 0, for device-selection and inspect tests. */
export const TEST_H200: CudaDevice = {
  ordinal: 0,
  name: 'NVIDIA H200',
  uuid: 'GPU-00000000-0000-0000-0000-000000000000',
  pciBusId: '0000:3B:00.0',
  pci: { domain: 0, bus: 0x3b, device: 0, function: 0 },
  computeCapability: { major: 9, minor: 0 },
  totalMemoryBytes: 150e9,
  multiprocessorCount: 132,
};

/** The device record of a reference-backend engine (it needs no GPU), built by this package at `version`. */
export function referenceEngineDevice(version: string): EngineDevice {
  return engineDeviceRecord(resolveDeviceSetting(undefined), { name: 'reference', version, residency: 'host' }, []);
}

/** The device record of a GPU engine built by `backend` at `version` on TEST_H200 (device 0), as compile() records it. */
export function h200EngineDevice(backend: string, version: string): EngineDevice {
  return engineDeviceRecord(resolveDeviceSetting(undefined), { name: backend as BackendName, version, residency: 'device' }, [TEST_H200], 0);
}
