/**
 * NCCL's part of the native addon (native/nccl/bindings.cc): what each function takes and
 * returns. Everything that may wait (on NCCL, on peers, on the GPU) returns a Promise settled
 * from a worker thread.
 * @internal
 */
import { NativeAddonLoadError } from '../errors';
import type { NativeDeviceBuffer } from '../gpu/binding';
import { getAddon } from '../native';

export type NcclCommState = 'ready' | 'aborted' | 'destroyed';

/** One rank's communicator (native NcclComm). */
export interface NativeNcclComm {
  readonly rank: number;
  readonly size: number;
  readonly device: number;
  readonly state: NcclCommState;
  /** `count` elements of NCCL type `dtype` reduced with `op` from `send` into `recv`. */
  allReduce(send: NativeDeviceBuffer, recv: NativeDeviceBuffer, count: number, dtype: number, op: number, timeoutMs: number): Promise<void>;
  /** ncclCommAbort: never waits for peers. */
  abort(): Promise<void>;
  /** ncclCommFinalize (aborted after `timeoutMs`) and ncclCommDestroy. */
  destroy(timeoutMs: number): Promise<void>;
}

export interface NcclBinding {
  /** `version` as ncclGetVersion reports it (22803 for 2.28.3). */
  ncclInfo(): Promise<{ libraryPath: string; version: number }>;
  /** ncclGetUniqueId: 128 bytes. */
  ncclUniqueId(): Promise<Uint8Array>;
  ncclCommInitRank(device: number, nranks: number, rank: number, id: Uint8Array, timeoutMs: number): Promise<NativeNcclComm>;
  ncclCommInitAll(devices: number[]): Promise<NativeNcclComm[]>;
  ncclAllReduceGroup(
    comms: NativeNcclComm[],
    sends: NativeDeviceBuffer[],
    recvs: NativeDeviceBuffer[],
    count: number,
    dtype: number,
    op: number,
    timeoutMs: number,
  ): Promise<void>;
}

/** The addon's NCCL functions; a binary built before they existed is refused as stale. */
export function ncclBinding(): NcclBinding {
  const addon = getAddon();
  const binding = addon.binding as unknown as Partial<NcclBinding>;
  if (typeof binding.ncclCommInitRank === 'function') return binding as NcclBinding;
  const stale = `The tensorrt-node native addon at ${addon.path} has no NCCL support: the binary is stale.`;
  throw new NativeAddonLoadError(`${stale} Rebuild it with \`npm run build:native\`, or reinstall tensorrt-node.`, {
    details: { tried: [addon.path] },
  });
}
