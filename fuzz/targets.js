'use strict';
/**
 * The four fuzzed readers: their seed corpus (built from test/fixtures), how an input is
 * derived from a seed (structure-aware mutation), and how it is read. Runs against dist/
 * (`npm run build:ts` first), as applications do.
 */
const crypto = require('node:crypto');
const fs = require('node:fs');
const path = require('node:path');

const lib = require('../dist');
const ir = require('../dist/ir-entry');
const { ZipArchive } = require('../dist/io/zip/reader');
const { mutateBytes } = require('./mutators/bytes');
const { mutateJson } = require('./mutators/json');
const { npyFile, mutateNpy } = require('./mutators/npy');
const { mutateOnnx, tinySeeds } = require('./mutators/onnx');
const { entriesOf, mutateZip } = require('./mutators/zip');

const FIXTURES = path.join(__dirname, '..', 'test', 'fixtures');
const READERS = ['onnx', 'pt2', 'trtp', 'npy'];
/**
 * A reader that misbehaves on purpose (hangs, allocates without end, exits, throws untyped),
 * chosen only by name (`--readers selftest`): the harness's own tests check it catches each.
 */
const SELFTEST = 'selftest';
const fixture = (name, file) => new Uint8Array(fs.readFileSync(path.join(FIXTURES, name, file)));

/** Builds the seed corpus of every reader into `dir` (`dir/<reader>/<name>`); the programs are compiled here. */
async function buildCorpus(dir) {
  const seeds = {
    onnx: [['mlp.onnx', fixture('mlp', 'model.onnx')], ['encoder.onnx', fixture('encoder', 'model.onnx')], ...tinySeeds().map(([n, b]) => [`${n}.onnx`, b])],
    pt2: ['rotary_only', 'mlp', 'encoder', 'llama_tokens_complex_buffer', 'llama_rotary_complex_input_dynamic'].map((n) => [`${n}.pt2`, fixture(n, 'model.pt2')]),
    npy: [],
    trtp: [],
  };
  const T = lib.Tensor;
  const tensors = [
    T.from('float32', [2, 3], [1, 2, 3, 4, 5, 6]), T.from('int64', [4], [1, -2, 3, 2 ** 40]), T.from('bool', [3], [1, 0, 1]),
    T.from('float16', [2, 2], [0.5, 1, 2, 4]), T.from('uint8', [], [7]), T.from('int32', [0, 3], []), T.from('complex64', [2], [1, 2, 3, 4]),
  ];
  tensors.forEach((t, i) => seeds.npy.push([`t${i}-${t.dtype}.npy`, lib.writeNpy(t)]));
  seeds.npy.push(['v2-fortran.npy', npyFile("{'descr': '<f4', 'fortran_order': True, 'shape': (2, 3), }", Buffer.alloc(24), 2)]);
  seeds.npy.push(['v3-bigendian.npy', npyFile("{'descr': '>i8', 'fortran_order': False, 'shape': (2,), }", Buffer.alloc(16), 3)]);
  for (const [name, model, inputs] of [
    ['mlp-onnx.trtp', fixture('mlp', 'model.onnx'), { input0: { shape: [2, 32] } }],
    ['mlp-pt2-dynamic.trtp', fixture('mlp', 'model.pt2'), undefined],
    ['rotary-pt2.trtp', fixture('rotary_only', 'model.pt2'), undefined],
  ]) {
    const program = await lib.compile(model, inputs === undefined ? {} : { inputs });
    seeds.trtp.push([name, program.saveBuffer()]);
    await program.dispose();
  }
  for (const reader of READERS) {
    fs.mkdirSync(path.join(dir, reader), { recursive: true });
    for (const [name, bytes] of seeds[reader]) fs.writeFileSync(path.join(dir, reader, name), bytes);
  }
}

/** Reads the corpus of `reader` from `dir`, with what mutations need precomputed. */
function loadCorpus(dir, reader) {
  if (reader === SELFTEST) return [{ name: SELFTEST, bytes: Uint8Array.of(0) }];
  // Smallest first: makeInput favours the first few, which read fastest.
  const files = fs.readdirSync(path.join(dir, reader)).sort((a, b) => fs.statSync(path.join(dir, reader, a)).size - fs.statSync(path.join(dir, reader, b)).size || (a < b ? -1 : 1));
  return files.map((name) => {
    const bytes = new Uint8Array(fs.readFileSync(path.join(dir, reader, name)));
    const seed = { name, bytes };
    if (reader === 'pt2' || reader === 'trtp') seed.entries = entriesOf(ZipArchive, bytes);
    return seed;
  });
}

/** The .trtp manifest's blob hashes and sizes recomputed after a mutation, so loading gets past them. */
function fixManifest(list) {
  const m = list.find((e) => e.name === 'manifest.json');
  if (m === undefined) return list;
  let manifest;
  try {
    manifest = JSON.parse(Buffer.from(m.data).toString('utf8'));
  } catch {
    return list;
  }
  if (manifest === null || typeof manifest !== 'object' || manifest.blobs === null || typeof manifest.blobs !== 'object') return list;
  for (const e of list) {
    const blob = manifest.blobs[e.name];
    if (blob !== null && typeof blob === 'object' && Object.hasOwn(manifest.blobs, e.name)) {
      blob.sha256 = crypto.createHash('sha256').update(e.data).digest('hex');
      blob.bytes = e.data.length;
    }
  }
  return list.map((e) => (e === m ? { ...e, data: new Uint8Array(Buffer.from(JSON.stringify(manifest))) } : e));
}

const OP_TYPES = [...new Set([...ir.mappedOnnxOps(), 'Loop', 'If', 'Scan', 'NoSuchOp', ''])];
/** Entries worth mutating most: the JSON that drives the importers. */
const weighted = (rng, pattern) => (list) => {
  const hits = list.map((e, i) => [e, i]).filter(([e]) => pattern.test(e.name));
  return hits.length > 0 && rng.chance(0.7) ? rng.pick(hits)[1] : rng.int(0, list.length - 1);
};

/** The input that `rng` derives from the corpus of `reader`. */
function makeInput(reader, corpus, rng) {
  if (reader === SELFTEST) return Uint8Array.of(rng.pick([0, 0, 0, 0, 0, 0, 1, 2, 3, 4]));
  // Small seeds are picked more often: they are read faster.
  const seed = rng.chance(0.6) ? corpus[rng.int(0, Math.min(corpus.length - 1, 2))] : rng.pick(corpus);
  const r = rng.next();
  if (r < 0.12) return mutateBytes(rng, seed.bytes);
  if (r < 0.15) {
    // Splice: the head of one seed, the tail of another.
    const other = rng.pick(corpus).bytes;
    const a = seed.bytes.subarray(0, rng.int(0, seed.bytes.length));
    const b = other.subarray(rng.int(0, other.length));
    return new Uint8Array(Buffer.concat([a, b]));
  }
  switch (reader) {
    case 'onnx':
      return mutateOnnx(rng, seed.bytes, OP_TYPES);
    case 'pt2':
      return mutateZip(rng, seed.entries, { pick: weighted(rng, /models\/.*\.json$|config\.json$/) });
    case 'trtp':
      return mutateZip(rng, seed.entries, { pick: weighted(rng, /manifest\.json$|^graphs\//), fix: fixManifest });
    default:
      return mutateNpy(rng, seed.bytes);
  }
}

/** Reads `bytes` with `reader`; resolves on success, rejects with whatever the library threw. */
async function readInput(reader, bytes) {
  switch (reader) {
    case 'onnx':
      ir.loadOnnx(bytes);
      return;
    case 'pt2':
      ir.loadPt2(bytes);
      return;
    case 'trtp': {
      const program = await lib.loadProgramBuffer(bytes);
      await program.dispose();
      return;
    }
    case SELFTEST:
      return misbehave(bytes[0]);
    default:
      lib.readNpy(bytes);
  }
}

/** The self-test reader: 0 reads fine, 1 hangs, 2 allocates until killed, 3 exits, 4 throws an untyped error. */
function misbehave(what) {
  if (what === 1) for (;;);
  if (what === 2) {
    const held = [];
    for (;;) held.push(Buffer.alloc(64 * 1024 * 1024, 1));
  }
  if (what === 3) process.exit(7);
  if (what === 4) throw new TypeError('an untyped error, on purpose');
}

/** The outcome's name: 'ok', a typed error's code, or a finding's kind ('untyped', 'internal'). */
function classify(error) {
  if (error === undefined) return { outcome: 'ok' };
  if (error instanceof lib.TensorRTNodeError && lib.ERROR_CODES.includes(error.code)) {
    return error.code === 'E_INTERNAL' ? { outcome: 'E_INTERNAL', finding: 'internal', message: error.stack } : { outcome: error.code };
  }
  return { outcome: 'untyped', finding: 'untyped', message: (error && error.stack) || String(error) };
}

module.exports = { READERS, SELFTEST, buildCorpus, loadCorpus, makeInput, readInput, classify, mutateJson };
