/**
 * Where a tensor-parallel program's all-reduces run: through NCCL on the ranks' GPUs, or on the
 * host (lib/runtime/tensor-parallel/execute.ts's allReduce()).
 *
 * `auto` (the default) takes NCCL when every rank's tensor is on a GPU of its own — the ranks'
 * engines run on the `cuda` backend (or another that leaves outputs on the device) — and
 * libnccl loads; otherwise the host all-reduce, which is exact and needs no GPU. `nccl` insists
 * (anything in the way is an `E_NCCL` error naming it); `host` never touches NCCL.
 *
 * One thread drives every rank's device (ncclCommInitAll, grouped all-reduces): the ranks run
 * in lockstep in one worker thread already, and NCCL's single-process, multi-device mode is
 * made for exactly that. docs/tensor-parallel.md ("NCCL") says why and what it costs.
 */
import { allReduceGroup, NcclCommunicator, ncclStatus } from '../../collectives';
import type { ReduceOp } from '../../collectives/reduction';
import type { RunValue } from '../../engine/residency';
import { NcclError } from '../../errors';
import { DeviceTensor } from '../../gpu/device-tensor';
import { Tensor } from '../../ir/tensor';
import type { CollectivesPolicy } from './collectives-policy';

/** Where one rank's tensor is at a collective: the host, a DeviceTensor's device with its dtype, or another device value (a backend's own handle). */
export type RankPlace = { kind: 'host' } | { kind: 'device'; ordinal: number; dtype: string } | { kind: 'foreign'; ordinal: number };

/** What {@link chooseCollectivePath} decided; `why` says what keeps NCCL out when the path is `host`. */
export type CollectivePath = { path: 'nccl'; devices: number[] } | { path: 'host'; why: string };

/**
 * Pure: the path of one all-reduce, from the policy, where each rank's tensor is, the dtype the
 * collective works in, and whether NCCL loads (`true`, or why not).
 *
 * @throws {NcclError} `E_NCCL` when the policy is `nccl` and something is in the way.
 */
export function chooseCollectivePath(policy: CollectivesPolicy, places: readonly RankPlace[], dtype: string, nccl: true | string, node: string): CollectivePath {
  const why = ((): string | undefined => {
    if (policy === 'host') return 'the collectives policy is host';
    const onHost = places.findIndex((p) => p.kind === 'host');
    if (onHost >= 0) return `rank ${onHost}'s tensor is on the host (its segment before the collective runs on the CPU)`;
    const foreign = places.findIndex((p) => p.kind === 'foreign');
    if (foreign >= 0) return `rank ${foreign}'s tensor is a device value of its backend's own, not a DeviceTensor NCCL can take`;
    const ordinals = places.map((p) => (p as Extract<RankPlace, { kind: 'device' }>).ordinal);
    const shared = ordinals.findIndex((o, r) => ordinals.indexOf(o) !== r);
    if (shared >= 0) return `ranks ${ordinals.indexOf(ordinals[shared]!)} and ${shared} are both on device ${ordinals[shared]} (NCCL takes one rank per GPU)`;
    const other = places.findIndex((p) => p.kind === 'device' && p.dtype !== dtype);
    if (other >= 0) return `rank ${other}'s tensor is ${(places[other] as { dtype: string }).dtype}, the collective works in ${dtype}`;
    if (nccl !== true) return `NCCL is not available: ${nccl}`;
    return undefined;
  })();
  if (why === undefined) return { path: 'nccl', devices: places.map((p) => (p as Extract<RankPlace, { kind: 'device' }>).ordinal) };
  if (policy === 'nccl') {
    throw new NcclError(`all-reduce ${node} cannot run through NCCL, as the collectives policy 'nccl' requires: ${why}`, { details: { node, reason: why } });
  }
  return { path: 'host', why };
}

/** Where a run value is, as {@link chooseCollectivePath} reads it. */
export function placeOfValue(v: RunValue): RankPlace {
  if (v instanceof Tensor) return { kind: 'host' };
  if (!(v instanceof DeviceTensor)) return { kind: 'foreign', ordinal: v.residency.ordinal };
  return { kind: 'device', ordinal: v.residency.ordinal, dtype: v.dtype };
}

/**
 * The NCCL communicators of one tensor-parallel program: made on first use (one per rank's
 * device, ncclCommInitAll), kept for every later run, destroyed by dispose().
 */
export class DeviceCollectives {
  private comms: Promise<NcclCommunicator[]> | undefined;
  private devices: number[] | undefined;
  private static available: Promise<true | string> | undefined;

  /** `true` when libnccl loads here, else why not (asked once per thread). */
  static ncclAvailable(): Promise<true | string> {
    DeviceCollectives.available ??= ncclStatus().then((s) => (s.found ? true : (s.error?.message ?? 'libnccl.so.2 was not found')));
    return DeviceCollectives.available;
  }

  /**
   * All-reduces rank r's `inputs[r]` (on `devices[r]`) into a new DeviceTensor per rank; the
   * inputs are left as they are (another segment may still read them).
   */
  async allReduce(inputs: readonly DeviceTensor[], devices: readonly number[], op: ReduceOp, node: string): Promise<DeviceTensor[]> {
    if (this.devices === undefined) {
      this.devices = [...devices];
      this.comms = NcclCommunicator.createAll(this.devices);
    } else if (this.devices.some((d, r) => d !== devices[r])) {
      throw new NcclError(`all-reduce ${node}: the ranks' tensors are on devices [${devices.join(', ')}], but the communicators were made on [${this.devices.join(', ')}]`, {
        details: { node },
      });
    }
    const comms = await this.comms!;
    const outputs = await Promise.all(inputs.map((t) => DeviceTensor.allocate(t.dtype, t.shape, t.device)));
    try {
      return await allReduceGroup(comms, [...inputs], op, { outputs });
    } catch (error) {
      for (const o of outputs) o.dispose();
      throw error;
    }
  }

  /** Destroys the communicators (aborting them if a peer does not finish). Idempotent. */
  async dispose(): Promise<void> {
    const comms = this.comms;
    this.comms = undefined;
    this.devices = undefined;
    if (comms === undefined) return;
    const list = await comms.catch(() => [] as NcclCommunicator[]);
    await Promise.allSettled(list.map((c) => c.dispose(10_000)));
  }
}
