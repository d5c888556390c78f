/**
 * tensorrt-node: compile model graphs into NVIDIA TensorRT engines and run them from Node.js.
 */
export * from './errors';
export { devices, probeDevices, formatCudaVersion, formatGpuUuid, parsePciBusId } from './devices';
export type { CudaDevice, CudaDriver, ComputeCapability, DeviceProbe, DeviceReport, PciAddress } from './devices';
export { findTensorRTLibrary, isTensorRTAvailable, tensorrtStatus, formatTensorRTVersion } from './tensorrt';
export type { TensorRTLibrary, TensorRTStatus } from './tensorrt';
export { doctor, formatDoctorReport } from './doctor';
export type { DoctorReport } from './doctor';
export type { AddonSource } from './native';
export { VERSION } from './version';
