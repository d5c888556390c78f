'use strict';
/** Byte-level mutations: flips, interesting bytes and integers, truncation, chunk moves, splices. */
const INTERESTING_BYTES = [0x00, 0x01, 0x7f, 0x80, 0xff, 0x2f, 0x2e, 0x22, 0x7b, 0x5d];

/** Writes a little-endian interesting integer of 2 or 4 bytes at `at`. */
function writeInteresting(rng, b, at) {
  const v = rng.pick([0, 1, 0xffff, 0xffffffff, 0x7fffffff, 0x80000000, b.length, rng.int(0, b.length * 2)]);
  const width = rng.pick([2, 4]);
  for (let k = 0; k < width && at + k < b.length; k++) b[at + k] = (v >>> (8 * k)) & 0xff;
}

/** One to a few byte-level changes of `input` (a new array), near `focus` offsets when given. */
function mutateBytes(rng, input, focus = []) {
  let b = Uint8Array.from(input);
  const where = () => (focus.length > 0 && rng.chance(0.5) ? Math.min(b.length - 1, rng.pick(focus) + rng.int(0, 48)) : rng.int(0, Math.max(0, b.length - 1)));
  for (let n = rng.int(1, 4); n > 0; n--) {
    if (b.length === 0) return Uint8Array.of(rng.int(0, 255));
    switch (rng.int(0, 7)) {
      case 0: b[where()] ^= 1 << rng.int(0, 7); break;
      case 1: b[where()] = rng.pick(INTERESTING_BYTES); break;
      case 2: b[where()] = rng.int(0, 255); break;
      case 3: writeInteresting(rng, b, where()); break;
      case 4: b = b.slice(0, rng.int(0, b.length)); break;
      case 5: {
        // Delete a chunk.
        const at = where();
        b = Uint8Array.from([...b.subarray(0, at), ...b.subarray(Math.min(b.length, at + rng.int(1, 64)))]);
        break;
      }
      case 6: {
        // Duplicate a chunk in place.
        const at = where();
        const chunk = b.slice(at, at + rng.int(1, 64));
        const out = new Uint8Array(b.length + chunk.length);
        out.set(b.subarray(0, at));
        out.set(chunk, at);
        out.set(b.subarray(at), at + chunk.length);
        b = out;
        break;
      }
      default: {
        // Copy a chunk over another place.
        const from = where();
        b.copyWithin(where(), from, from + rng.int(1, 64));
      }
    }
  }
  return b;
}

module.exports = { mutateBytes };
