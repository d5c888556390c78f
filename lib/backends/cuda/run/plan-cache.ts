/**
 * A bounded least-recently-used cache of instantiated plans, by input shapes. An evicted
 * entry is disposed at once: the engine's run queue (runner.ts) guarantees that no run is
 * using it then. Pure apart from calling `dispose`.
 */
export class PlanCache<V extends { dispose(): void }> {
  private readonly entries = new Map<string, V>();

  constructor(readonly capacity: number) {
    if (!Number.isSafeInteger(capacity) || capacity < 1) throw new RangeError(`a plan cache holds at least one plan, got ${capacity}`);
  }

  get size(): number {
    return this.entries.size;
  }

  /** The entry for `key`, now the most recently used; undefined if absent. */
  get(key: string): V | undefined {
    const v = this.entries.get(key);
    if (v !== undefined) {
      this.entries.delete(key);
      this.entries.set(key, v);
    }
    return v;
  }

  /** Adds `value` as the most recently used, disposing the least recently used beyond capacity. */
  set(key: string, value: V): void {
    this.entries.get(key)?.dispose();
    this.entries.delete(key);
    this.entries.set(key, value);
    while (this.entries.size > this.capacity) {
      const [oldest, v] = this.entries.entries().next().value as [string, V];
      this.entries.delete(oldest);
      v.dispose();
    }
  }

  keys(): string[] {
    return [...this.entries.keys()];
  }

  /** Disposes every entry. */
  clear(): void {
    for (const v of this.entries.values()) v.dispose();
    this.entries.clear();
  }
}

/** The cache key of a set of input shapes (in network input order). */
export const shapeKey = (names: readonly string[], shapes: Readonly<Record<string, readonly number[]>>): string =>
  names.map((n) => `${shapes[n]!.join('x')}`).join(';');
