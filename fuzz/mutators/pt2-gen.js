'use strict';
/**
 * Generators of hostile `.pt2` archives built on a well-formed one (the `mlp` fixture):
 *
 *  - stride-0 weights: many parameters whose tensor_meta declares large sizes with zero (or
 *    partly zero) strides over a storage of a few bytes, or none (a fake storage), separate or
 *    all on one storage; sometimes the model's own weights are turned into such views;
 *  - spread zip bombs: many small deflated weight entries of zeros (about 1000:1 each), each
 *    declared as a contiguous weight, or all weights reading one deflated storage again and
 *    again, or deflated entries no weight names.
 *
 * Each weight is added the way torch.export writes one: an entry of the weights config, a graph
 * input with its tensor_values meta and a parameter input spec, before the user inputs.
 * Loading must end in success or a typed error (E_RESOURCE_LIMIT, E_BAD_MODEL) within the
 * harness's time and memory limits.
 */
const { crc32, deflateRawSync } = require('node:zlib');

const { storedEntry, writeZip } = require('../zip-writer');

/** ScalarType codes (torch/_export/serde/schema.py) and item sizes: float32, float16, int64, uint8, bool. */
const DTYPES = [[7, 4], [6, 2], [5, 8], [1, 1], [12, 1]];
/** Bytes a stride-0 weight declares: around the 64 MiB default limit, and far past it. */
const DECLARED = [2 ** 16, 2 ** 20, 2 ** 24, 2 ** 26 - 4, 2 ** 26, 2 ** 26 + 8, 2 ** 28, 2 ** 31, 2 ** 32, 2 ** 40, 2 ** 50];
/** Inflated sizes of the deflated entries. */
const INFLATED = [4096, 65536, 2 ** 18, 2 ** 20, 2 ** 22];

/**
 * Deflated content of `size` bytes, computed once per (size, kind): zeros (about 1000:1), or
 * sparse (zeros with a varying byte every 64: ratios of tens, under the 200:1 limit, so the
 * entries are inflated and read as weights). {raw, crc}.
 */
const deflated = new Map();
function deflatedContent(size, sparse) {
  const key = `${size}:${sparse}`;
  if (!deflated.has(key)) {
    const data = Buffer.alloc(size);
    if (sparse) for (let k = 0; k < size; k += 64) data[k] = (k * 2654435761) >>> 24;
    deflated.set(key, { raw: deflateRawSync(data, { level: 9 }), crc: crc32(data) >>> 0 });
  }
  return deflated.get(key);
}

const ints = (list) => list.map((v) => ({ as_int: v }));

function tensorMeta(dtype, sizes, strides, offset = 0) {
  return { dtype, sizes: ints(sizes), requires_grad: false, device: { type: 'cpu', index: null }, strides: ints(strides), storage_offset: { as_int: offset }, layout: 7 };
}

/** The parts of the base archive a generator edits: the model JSON, the weights config and their entries. */
function parts(entries) {
  const list = entries.map((e) => ({ ...e }));
  const modelEntry = list.find((e) => /models\/[^/]*\.json$/.test(e.name));
  const configEntry = list.find((e) => /weights_config\.json$/.test(e.name));
  const root = configEntry.name.slice(0, configEntry.name.indexOf('data/weights/'));
  return { list, modelEntry, configEntry, root, model: JSON.parse(Buffer.from(modelEntry.data).toString('utf8')), config: JSON.parse(Buffer.from(configEntry.data).toString('utf8')) };
}

/** Adds parameter `name` (stored as `pathName`) with `meta` to the model: config entry, graph input, tensor_values, input spec. */
function addParameter(p, name, pathName, meta) {
  const argName = `p_${name.replace(/\W/g, '_')}`;
  p.config.config[name] = { path_name: pathName, is_param: true, use_pickle: false, tensor_meta: meta };
  const g = p.model.graph_module.graph;
  const specs = p.model.graph_module.signature.input_specs;
  // Parameters come before the user inputs, in the same order in the graph and the signature.
  const at = specs.findIndex((s) => s.user_input !== undefined);
  const pos = at < 0 ? specs.length : at;
  specs.splice(pos, 0, { parameter: { arg: { name: argName }, parameter_name: name } });
  g.inputs.splice(pos, 0, { as_tensor: { name: argName } });
  g.tensor_values[argName] = meta;
}

/**
 * Sizes of about `elements` elements over a storage of `storageElements`: one or two outer
 * dims of stride 0 and, sometimes, an inner dim of stride 1 that reads the storage.
 */
function strideZeroLayout(rng, elements, storageElements) {
  const inner = storageElements > 1 && rng.chance(0.5) ? rng.int(2, storageElements) : 1;
  const outer = Math.max(1, Math.floor(elements / inner));
  let outerDims = [outer];
  if (outer >= 4 && rng.chance(0.5)) {
    const a = 2 ** rng.int(1, Math.min(20, Math.floor(Math.log2(outer))));
    outerDims = [a, Math.max(1, Math.floor(outer / a))];
  }
  const sizes = inner > 1 ? [...outerDims, inner] : outerDims;
  return { sizes, strides: sizes.map((_, i) => (inner > 1 && i === sizes.length - 1 ? 1 : 0)) };
}

/** Many stride-0 weights over a few bytes each (or one shared storage, or fake storages). */
function strideZeroArchive(rng, p) {
  const count = rng.pick([2, 4, 8, 16, 17, 32, 64, 200]);
  const shared = rng.chance(0.3);
  const fake = rng.chance(0.15);
  const [dtype, item] = rng.pick(DTYPES);
  const storageBytes = fake ? 0 : item * rng.int(1, 4);
  const data = new Uint8Array(storageBytes).map((_, k) => k + 1);
  const files = [];
  for (let k = 0; k < count; k++) {
    const pathName = shared ? 'fz_shared' : `fz_${k}`;
    if (!shared || k === 0) files.push({ name: `${p.root}data/weights/${pathName}`, data });
    // A quarter of the weights are small enough to load, so that many of them add up.
    const declared = rng.chance(0.25) ? rng.pick([2 ** 12, 2 ** 16, 2 ** 20, 2 ** 22]) : rng.pick(DECLARED);
    const { sizes, strides } = strideZeroLayout(rng, Math.max(1, Math.floor(declared / item)), storageBytes / item);
    addParameter(p, `fz.${k}`, pathName, tensorMeta(dtype, sizes, fake ? sizes.map(() => 0) : strides));
  }
  if (rng.chance(0.3)) {
    // The model's own weights become expanded views of their first element: the graph still uses them.
    for (const [name, meta] of Object.entries(p.config.config)) {
      if (name.startsWith('fz.')) continue;
      meta.tensor_meta.strides = ints(meta.tensor_meta.sizes.map(() => 0));
    }
  }
  return files.map((f) => storedEntry(f.name, f.data, 0));
}

/** Many small deflated weights (zeros, or sparse): a bomb spread over entries (or one entry read many times). */
function spreadBombArchive(rng, p) {
  const sparse = rng.chance(0.3);
  // Sparse content compresses less: fewer and smaller entries keep the input small (at most 32 MiB inflated).
  const count = sparse ? rng.pick([16, 100, 500]) : rng.pick([16, 100, 500, 1000, 2000, 4000]);
  const size = sparse ? rng.pick([4096, 65536]) : rng.pick(INFLATED);
  const { raw, crc } = deflatedContent(size, sparse);
  const records = [];
  const how = rng.pick(['weights', 'weights', 'one-storage', 'unnamed']);
  for (let k = 0; k < (how === 'one-storage' ? 1 : count); k++) {
    const pathName = how === 'one-storage' ? 'fz_bomb' : `fz_${k}`;
    records.push({ name: `${p.root}data/weights/${pathName}`, method: 8, crc, size, compressedSize: raw.length, raw });
  }
  if (how !== 'unnamed') {
    for (let k = 0; k < count; k++) {
      const pathName = how === 'one-storage' ? 'fz_bomb' : `fz_${k}`;
      addParameter(p, `fz.${k}`, pathName, tensorMeta(7, [size / 4], [1]));
    }
  }
  return records;
}

/** A hostile archive derived from the entries of a well-formed `.pt2` (`entries`: {name, data}). */
function pt2Bomb(rng, entries) {
  const p = parts(entries);
  const added = rng.chance(0.5) ? strideZeroArchive(rng, p) : spreadBombArchive(rng, p);
  p.modelEntry.data = new Uint8Array(Buffer.from(JSON.stringify(p.model)));
  p.configEntry.data = new Uint8Array(Buffer.from(JSON.stringify(p.config)));
  const base = p.list.map((e) => storedEntry(e.name, e.data, 0));
  // The new weights go before or after the archive's own entries (the reader must not care).
  return writeZip(rng.chance(0.5) ? [...base, ...added] : [...added, ...base]);
}

module.exports = { pt2Bomb };
