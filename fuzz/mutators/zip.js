'use strict';
/**
 * Zip-level mutations of an archive's entries: contents changed (JSON-aware), entries
 * reordered, duplicated, renamed, dropped, resized or recompressed, then written again with
 * valid CRCs and sizes, so that the mutation reaches the reader behind the container;
 * sometimes a header byte is damaged afterwards, to reach the container checks.
 */
const { crc32 } = require('node:zlib');

const { storedEntry, writeZip } = require('../zip-writer');
const { mutateBytes } = require('./bytes');
const { mutateJson } = require('./json');

const NAME_TWISTS = [(n) => n, (n) => `../${n}`, (n) => `/${n}`, (n) => n.replace(/^[^/]*\//, ''), (n) => `${n}/`, (n) => `x/${n}`, (n) => n.toUpperCase()];

/** The (name, bytes) entries of a well-formed archive, read with the library's reader. */
function entriesOf(ZipArchive, bytes) {
  const zip = ZipArchive.open(bytes);
  return zip.entries.map((e) => ({ name: e.name, data: zip.read(e.name) }));
}

/** Mutates the content of one entry: JSON-level when it is JSON, byte-level otherwise. */
function mutateContent(rng, data) {
  if (data.length > 0 && (data[0] === 0x7b || data[0] === 0x5b) && rng.chance(0.8)) {
    const text = mutateJson(rng, Buffer.from(data).toString('utf8'));
    if (text !== undefined) return new Uint8Array(Buffer.from(text, 'utf8'));
  }
  return mutateBytes(rng, data);
}

/**
 * A mutated archive from `entries` ({name, data}). `pick` chooses which entry's content to
 * change (readers weight the interesting ones); `fix` may rewrite entries after the
 * mutation (the .trtp manifest's hashes), so that integrity checks do not stop everything.
 */
function mutateZip(rng, entries, { pick = (list) => rng.int(0, list.length - 1), fix } = {}) {
  let list = entries.map((e) => ({ ...e }));
  for (let n = rng.int(1, 3); n > 0; n--) {
    if (list.length === 0) break;
    const i = rng.chance(0.6) ? pick(list) : rng.int(0, list.length - 1);
    const r = rng.int(0, 13);
    if (r <= 7) list[i].data = mutateContent(rng, list[i].data);
    else if (r === 8) list.push({ ...list[i], name: rng.chance(0.5) ? list[i].name : rng.pick(NAME_TWISTS)(list[i].name) });
    else if (r === 9) list[i].name = rng.pick(NAME_TWISTS)(list[i].name);
    else if (r === 10) list.splice(i, 1);
    else if (r === 11) list[i].data = list[i].data.slice(0, rng.int(0, list[i].data.length));
    else if (r === 12) list = list.map((e) => ({ ...e, method: rng.chance(0.5) ? 8 : 0 }));
    else {
      const j = rng.int(0, list.length - 1);
      [list[i], list[j]] = [list[j], list[i]];
    }
  }
  if (fix !== undefined && rng.chance(0.8)) list = fix(list);
  const records = list.map((e) => storedEntry(e.name, e.data, e.method ?? 0));
  // Occasionally a header lies (CRC or sizes), or the container's bytes are damaged.
  if (records.length > 0 && rng.chance(0.1)) {
    const e = rng.pick(records);
    const field = rng.pick(['crc', 'size', 'compressedSize']);
    e[field] = field === 'crc' ? (crc32(Buffer.from([rng.int(0, 255)])) >>> 0) : rng.pick([0, 1, e[field] + 1, e[field] * 2, 0xfffffffe]);
  }
  const bytes = writeZip(records);
  if (rng.chance(0.15)) {
    // Damage near a header signature ("PK").
    const focus = [];
    for (let k = 0; k + 1 < bytes.length && focus.length < 256; k++) if (bytes[k] === 0x50 && bytes[k + 1] === 0x4b) focus.push(k);
    return mutateBytes(rng, bytes, focus);
  }
  return bytes;
}

module.exports = { entriesOf, mutateZip };
