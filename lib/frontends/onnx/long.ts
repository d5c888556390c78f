/** protobufjs decodes int64 fields as Long objects (or numbers when small); this reads either. */
export interface LongLike {
  toNumber(): number;
}

export function toNumber(v: number | LongLike | null | undefined): number {
  if (v === null || v === undefined) return 0;
  return typeof v === 'number' ? v : v.toNumber();
}

export function toBigInt(v: number | (LongLike & { low: number; high: number; unsigned?: boolean }) | null | undefined): bigint {
  if (v === null || v === undefined) return 0n;
  if (typeof v === 'number') return BigInt(v);
  const big = (BigInt(v.high >>> 0) << 32n) | BigInt(v.low >>> 0);
  return v.unsigned ? big : BigInt.asIntN(64, big);
}
