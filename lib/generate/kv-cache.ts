/**
 * One generation's KV cache: the past inputs of its next run, host Tensors on the host
 * backends and, on a program with GPU engines (runs with `outputs: 'device'`), DeviceTensors
 * that stay in device memory from step to step.
 *
 * The cache is a row of slots (dim 2 of every past tensor): `used` of them hold the positions
 * seen so far, in order; the rest, up to `capacity`, are zeros that attention_mask masks out
 * (./slot-sizes.ts says why a cache may hold more slots than it uses). A run appends its new
 * positions after the capacity (the model concatenates them to the past), and advance() makes
 * its present outputs the next past:
 * - exact sizes: the presents are the past as they are (no copy; capacity = used);
 * - bucketed sizes: the new slots are moved into the past tensors after the used ones (one
 *   strided copy per tensor), or, when they do not fit, into new zeroed tensors of the next
 *   capacity with the used slots before them; the capacity, and so every run's shapes, stay
 *   the same from one step to the next between those growths.
 * Device tensors a run has finished with are freed at once; dispose() frees what is left,
 * waiting for a run still reading them (a generation aborted mid-run).
 */
import type { DType } from '../ir/dtype';
import { dtypeInfo } from '../ir/dtype';
import { gpuBinding } from '../gpu/binding';
import { DeviceTensor } from '../gpu/device-tensor';
import { Tensor } from '../ir/tensor';
import type { KvCacheLayout } from './layout';
import type { SlotSizes } from './slot-sizes';

/** A cache tensor: on the host, or in device memory. */
export type CacheValue = Tensor | DeviceTensor;

/** Where a generation keeps its cache between runs. */
export type CachePlace = 'host' | 'device';

/** `height` rows of `widthBytes`, rows `dstPitch` / `srcPitch` bytes apart. */
interface Rect {
  readonly dst: CacheValue;
  readonly dstOffset: number;
  readonly dstPitch: number;
  readonly src: CacheValue;
  readonly srcOffset: number;
  readonly srcPitch: number;
  readonly widthBytes: number;
  readonly height: number;
}

const hostBytes = (t: Tensor): Uint8Array => new Uint8Array(t.data.buffer, t.data.byteOffset, t.data.byteLength);

/**
 * Zeroes `fills` (device tensors: host ones are made zeroed), then copies `rects`, where their
 * tensors are: on the host byte by byte, on a device all in one native call and one wait.
 */
async function fillAndCopy(fills: readonly DeviceTensor[], rects: readonly Rect[]): Promise<void> {
  if (rects.length === 0 && fills.length === 0) return;
  if (fills.length > 0 || rects[0]!.dst instanceof DeviceTensor) {
    const native = rects.map((r) => [(r.dst as DeviceTensor).buffer, r.dstOffset, r.dstPitch, (r.src as DeviceTensor).buffer, r.srcOffset, r.srcPitch, r.widthBytes, r.height] as const);
    await gpuBinding().gpuCopyRects(
      fills.filter((t) => t.byteLength > 0).map((t) => [t.buffer, 0, t.byteLength] as const),
      native,
    );
    return;
  }
  for (const r of rects) {
    const dst = hostBytes(r.dst as Tensor);
    const src = hostBytes(r.src as Tensor);
    for (let row = 0; row < r.height; row++) dst.set(src.subarray(r.srcOffset + row * r.srcPitch, r.srcOffset + row * r.srcPitch + r.widthBytes), r.dstOffset + row * r.dstPitch);
  }
}

/** A new tensor like `like` (same place, dtype, device) of shape `shape`: zeros on the host, unset on a device (fillAndCopy zeroes it). */
async function allocateLike(like: CacheValue, shape: number[]): Promise<CacheValue> {
  return like instanceof Tensor ? new Tensor(like.dtype, shape) : DeviceTensor.allocate(like.dtype, shape, like.device);
}

export class KvCache {
  /** By past input name. */
  private values = new Map<string, CacheValue>();
  /** A run that may still read the cache (set while one is in flight). */
  private reading: Promise<unknown> | undefined;
  private disposed = false;
  /** Slots (dim 2) of every past tensor. */
  private slots = 0;
  /** Slots that hold positions seen so far (the first `used` of each row). */
  private filled = 0;

  /**
   * An empty cache (no slots) for `batch` rows: host tensors in either place, since a run's
   * zero-size inputs cost nothing to hand over and device memory of zero bytes is nothing to
   * keep. `sizes`: null for exact sizes, else the capacities the cache grows through.
   */
  constructor(
    private readonly layout: KvCacheLayout,
    private readonly batch: number,
    private readonly sizes: SlotSizes | null = null,
  ) {
    const empty = (heads: number, dim: number, dtype: DType): Tensor => new Tensor(dtype, [batch, heads, 0, dim]);
    for (const layer of layout.layers) {
      this.values.set(layer.pastKey, empty(layer.heads, layer.keyDim, layout.cacheDType));
      this.values.set(layer.pastValue, empty(layer.heads, layer.valueDim, layout.cacheDType));
    }
  }

  /** Slots of each past tensor the next run reads (its past length). */
  get capacity(): number {
    return this.slots;
  }

  /** Slots that hold positions seen so far; the rest are masked out. */
  get used(): number {
    return this.filled;
  }

  /** The cache's tensors, by past input name, for the next run. */
  inputs(): Record<string, CacheValue> {
    return Object.fromEntries(this.values);
  }

  /** Marks `run` as reading the current tensors: dispose() waits for it. */
  readBy(run: Promise<unknown>): void {
    this.reading = run.then(
      () => undefined,
      () => undefined,
    );
  }

  /**
   * The run's present outputs (by output name; each `capacity + added` slots, the run's
   * `added` new positions last) become the past. Every tensor the finished run read or made
   * that the cache does not keep is freed, also when a copy fails.
   */
  async advance(outputs: ReadonlyMap<string, CacheValue>, added: number): Promise<void> {
    const previous = this.values;
    const presents = new Map<string, CacheValue>();
    for (const layer of this.layout.layers) {
      presents.set(layer.pastKey, outputs.get(layer.presentKey)!);
      presents.set(layer.pastValue, outputs.get(layer.presentValue)!);
    }
    this.reading = undefined;
    let next = presents;
    try {
      if (this.sizes !== null) next = await this.moveSlots(presents, added);
    } finally {
      const kept = new Set(next.values());
      this.values = next;
      for (const v of [...previous.values(), ...presents.values()]) if (v instanceof DeviceTensor && !kept.has(v)) v.dispose();
      if (this.disposed) this.release();
    }
    if (this.sizes === null) {
      this.slots += added;
      this.filled = this.slots;
    }
  }

  /**
   * Bucketed sizes: the present's new slots after the used ones of the past tensors when
   * they fit, else in new tensors of the next capacity (the used slots copied first).
   */
  private async moveSlots(presents: ReadonlyMap<string, CacheValue>, added: number): Promise<Map<string, CacheValue>> {
    const needed = this.filled + added;
    const grow = needed > this.slots;
    const capacity = grow ? this.sizes!.capacity(needed) : this.slots;
    const next = new Map<string, CacheValue>();
    const rects: Rect[] = [];
    const fills: DeviceTensor[] = [];
    try {
      for (const [name, present] of presents) {
        const [batch, heads, , dim] = present.shape as [number, number, number, number];
        const slotBytes = dim * dtypeInfo(present.dtype).itemBytes;
        const srcPitch = (this.slots + added) * slotBytes;
        const dst = grow ? await allocateLike(present, [batch, heads, capacity, dim]) : this.values.get(name)!;
        next.set(name, dst);
        if (grow && dst instanceof DeviceTensor) fills.push(dst);
        const dstPitch = capacity * slotBytes;
        const rect = (from: number, to: number, slots: number): Rect => ({ dst, dstOffset: to * slotBytes, dstPitch, src: present, srcOffset: from * slotBytes, srcPitch, widthBytes: slots * slotBytes, height: batch * heads });
        if (grow && this.filled === this.slots) rects.push(rect(0, 0, needed));
        else {
          if (grow && this.filled > 0) rects.push(rect(0, 0, this.filled));
          rects.push(rect(this.slots, this.filled, added));
        }
      }
      // New device tensors are zeroed first (their unused slots must be zeros, not garbage), in the same call.
      await fillAndCopy(fills, rects.filter((r) => r.widthBytes > 0 && r.height > 0));
    } catch (error) {
      if (grow) for (const v of next.values()) if (v instanceof DeviceTensor) v.dispose();
      throw error;
    }
    this.slots = capacity;
    this.filled = needed;
    return next;
  }

  /** Device bytes the cache holds now (0 on the host). */
  get deviceBytes(): number {
    let n = 0;
    for (const v of this.values.values()) if (v instanceof DeviceTensor && !v.disposed) n += v.byteLength;
    return n;
  }

  /** Frees the cache's device tensors, after any run still reading them. Idempotent. */
  async dispose(): Promise<void> {
    this.disposed = true;
    if (this.reading !== undefined) await this.reading;
    this.release();
  }

  private release(): void {
    for (const v of this.values.values()) if (v instanceof DeviceTensor) v.dispose();
    this.values.clear();
  }
}
