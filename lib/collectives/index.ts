/** Collectives for tensor-parallel programs on GPUs (NCCL). */
export { allReduceGroup, NcclCommunicator, DEFAULT_INIT_TIMEOUT_MS, DEFAULT_OP_TIMEOUT_MS, NCCL_UNIQUE_ID_BYTES } from './nccl';
export type { AllReduceOptions, NcclCommunicatorOptions } from './nccl';
export { REDUCE_OPS } from './reduction';
export type { ReduceOp } from './reduction';
export { formatNcclVersion, ncclStatus } from './library';
export type { NcclStatus } from './library';
