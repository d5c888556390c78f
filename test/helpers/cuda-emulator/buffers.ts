/** Host buffers standing in for device buffers. */
import type { BufferSlice } from '../../../lib/gpu/plan';

/** The bytes of `slice` within `buffers` (checked against the buffer's end). */
export function view(buffers: Uint8Array[], slice: BufferSlice, bytes: number): Uint8Array {
  const b = buffers[slice.buffer];
  const offset = slice.offset ?? 0;
  if (!b || offset + bytes > b.length) throw new Error(`cuda emulator: ${bytes} bytes at buffer ${slice.buffer} + ${offset} are outside the buffer (${b?.length ?? 'missing'} bytes)`);
  return b.subarray(offset, offset + bytes);
}

