'use strict';
/**
 * .npy mutations at the header level: the Python dict literal rewritten with other dtypes,
 * orders, shapes (boundary and absurd sizes) and versions, with the header length right or
 * wrong; plus byte-level changes of the whole file.
 */
const { INTERESTING_NUMBERS } = require('../random');
const { mutateBytes } = require('./bytes');

const DESCRS = ['<f4', '>f4', '<f8', '<f2', '|i1', '|u1', '<i4', '>i8', '<i8', '|b1', '<c8', '<c16', '<u8', '<U4', '|O', '|V8', 'f4', '<f16', "'"];
const SHAPES = ['()', '(0,)', '(3,)', '(2, 3)', '(1, 1, 1, 1, 1, 1, 1, 1, 1)', '(-1,)', '(2**31,)', '(1e21,)', '(True,)', '(,)', '(3', "('a',)", '((2,),)', '(1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32, 33)'];

function shape(rng) {
  if (rng.chance(0.5)) return rng.pick(SHAPES);
  const dims = Array.from({ length: rng.int(0, 4) }, () => (rng.chance(0.3) ? rng.pick(INTERESTING_NUMBERS) : rng.int(0, 8)));
  return `(${dims.join(', ')}${dims.length === 1 ? ',' : ''})`;
}

/** A .npy file with `header` (padded as NumPy pads it, unless `badLength`), version `major`, then `data`. */
function npyFile(header, data, major = 1, badLength = 0) {
  const lengthBytes = major === 1 ? 2 : 4;
  const prefix = 6 + 2 + lengthBytes;
  let text = header;
  const total = Math.ceil((prefix + text.length + 1) / 64) * 64;
  text = text.padEnd(total - prefix - 1, ' ') + '\n';
  const body = Buffer.from(text, major === 3 ? 'utf8' : 'latin1');
  const head = Buffer.alloc(prefix);
  Buffer.from([0x93, 0x4e, 0x55, 0x4d, 0x50, 0x59, major, 0]).copy(head);
  if (lengthBytes === 2) head.writeUInt16LE((body.length + badLength) & 0xffff, 8);
  else head.writeUInt32LE((body.length + badLength) >>> 0, 8);
  return new Uint8Array(Buffer.concat([head, body, Buffer.from(data)]));
}

/** The header dict text and data of a well-formed seed, or undefined. */
function parseNpy(bytes) {
  const b = Buffer.from(bytes);
  if (b.length < 10 || b[0] !== 0x93) return undefined;
  const major = b[6];
  const len = major === 1 ? b.readUInt16LE(8) : b.readUInt32LE(8);
  const start = major === 1 ? 10 : 12;
  return { header: b.subarray(start, start + len).toString('latin1').trim(), data: b.subarray(start + len), major };
}

function mutateNpy(rng, bytes) {
  const parsed = parseNpy(bytes);
  if (parsed === undefined || rng.chance(0.25)) return mutateBytes(rng, bytes);
  let { header, data, major } = parsed;
  for (let n = rng.int(1, 3); n > 0; n--) {
    switch (rng.int(0, 7)) {
      case 0: header = header.replace(/'descr': '[^']*'/, `'descr': '${rng.pick(DESCRS)}'`); break;
      case 1: header = header.replace(/'fortran_order': \w+/, `'fortran_order': ${rng.pick(['True', 'False', '1', 'None', "'no'"])}`); break;
      case 2: header = header.replace(/'shape': \([^)]*\)/, `'shape': ${shape(rng)}`); break;
      case 3: header = rng.pick([header.replace(/'descr'[^,]*, /, ''), header.replace('}', "'extra': 1, }"), header.replace(/^\{/, '{"descr": 1, '), header.slice(0, rng.int(0, header.length))]); break;
      case 4: major = rng.pick([1, 2, 3, 0, 4]); break;
      case 5: data = data.subarray(0, rng.int(0, data.length)); break;
      case 6: data = Buffer.concat([data, Buffer.alloc(rng.int(1, 64))]); break;
      default: header = header.replace(/'descr': '[^']*'/, `'descr': '${rng.pick(DESCRS)}'`).replace(/'shape': \([^)]*\)/, `'shape': ${shape(rng)}`);
    }
  }
  const out = npyFile(header, data, major, rng.chance(0.1) ? rng.pick([-1, 1, 1000, -64]) : 0);
  return rng.chance(0.2) ? mutateBytes(rng, out) : out;
}

module.exports = { mutateNpy, npyFile };
