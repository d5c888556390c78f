/** A growable little-endian byte writer (binary formats the addon reads). */
export class ByteWriter {
  private buffer = new Uint8Array(1024);
  private view = new DataView(this.buffer.buffer);
  length = 0;

  private reserve(n: number): void {
    if (this.length + n <= this.buffer.length) return;
    const next = new Uint8Array(Math.max(this.buffer.length * 2, this.length + n));
    next.set(this.buffer.subarray(0, this.length));
    this.buffer = next;
    this.view = new DataView(next.buffer);
  }
  private put(n: number, write: (view: DataView, at: number) => void): void {
    this.reserve(n);
    write(this.view, this.length);
    this.length += n;
  }
  u8(v: number): void {
    this.put(1, (d, at) => d.setUint8(at, v));
  }
  u32(v: number): void {
    this.put(4, (d, at) => d.setUint32(at, v, true));
  }
  i32(v: number): void {
    this.put(4, (d, at) => d.setInt32(at, v, true));
  }
  u64(v: number): void {
    this.put(8, (d, at) => d.setBigUint64(at, BigInt(v), true));
  }
  f32(v: number): void {
    this.put(4, (d, at) => d.setFloat32(at, v, true));
  }
  i64(v: number): void {
    this.put(8, (d, at) => d.setBigInt64(at, BigInt(v), true));
  }
  f64(v: number): void {
    this.put(8, (d, at) => d.setFloat64(at, v, true));
  }
  bytes(b: Uint8Array): void {
    this.reserve(b.byteLength);
    this.buffer.set(b, this.length);
    this.length += b.byteLength;
  }
  /** Zero bytes up to a multiple of `n`. */
  align(n: number): void {
    while (this.length % n !== 0) this.u8(0);
  }
  /** A copy of what was written. */
  result(): Uint8Array {
    return this.buffer.slice(0, this.length);
  }
}
