/**
 * One generation's KV cache: the past inputs of its next run. After each run the present
 * outputs become the past as they are (no copy here): host Tensors on the host backends, and on
 * a program with GPU engines (runs with `outputs: 'device'`) DeviceTensors that stay in device
 * memory from step to step and go back into the next run as they are. Device tensors a run has
 * finished with are freed at once; dispose() frees what is left, waiting for a run still
 * reading them (a generation aborted mid-run).
 */
import type { DType } from '../ir/dtype';
import { DeviceTensor } from '../gpu/device-tensor';
import { Tensor } from '../ir/tensor';
import type { KvCacheLayout } from './layout';

/** A cache tensor: on the host, or in device memory. */
export type CacheValue = Tensor | DeviceTensor;

/** Where a generation keeps its cache between runs. */
export type CachePlace = 'host' | 'device';

export class KvCache {
  /** By past input name. */
  private values = new Map<string, CacheValue>();
  /** A run that may still read the cache (set while one is in flight). */
  private reading: Promise<unknown> | undefined;
  private disposed = false;

  /**
   * An empty cache (past length 0) for `batch` rows: host tensors in either place, since a
   * run's zero-size inputs cost nothing to hand over and device memory of zero bytes is
   * nothing to keep.
   */
  constructor(private readonly layout: KvCacheLayout, batch: number) {
    const empty = (heads: number, dim: number, dtype: DType): Tensor => new Tensor(dtype, [batch, heads, 0, dim]);
    for (const layer of layout.layers) {
      this.values.set(layer.pastKey, empty(layer.heads, layer.keyDim, layout.cacheDType));
      this.values.set(layer.pastValue, empty(layer.heads, layer.valueDim, layout.cacheDType));
    }
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
   * The run's present outputs (by output name) become the past: the tensors themselves. The
   * previous device tensors, which the finished run read, are freed.
   */
  advance(outputs: ReadonlyMap<string, CacheValue>): void {
    const next = new Map<string, CacheValue>();
    for (const layer of this.layout.layers) {
      next.set(layer.pastKey, outputs.get(layer.presentKey)!);
      next.set(layer.pastValue, outputs.get(layer.presentValue)!);
    }
    const previous = this.values;
    this.values = next;
    this.reading = undefined;
    for (const v of previous.values()) if (v instanceof DeviceTensor && ![...next.values()].includes(v)) v.dispose();
    if (this.disposed) this.release();
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
