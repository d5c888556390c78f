'use strict';
/**
 * The fuzzed readers: their seed corpus (built from test/fixtures), how an input is derived
 * from a seed (structure-aware mutation) or generated (the input classes of
 * ./mutators/onnx-gen.js and ./mutators/pt2-gen.js), and how it is read. Runs against dist/
 * (`npm run build:ts` first), as applications do.
 */
const crypto = require('node:crypto');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const { onnx } = require('onnx-proto');

// The build under test: dist/, or a copy of it (TRTN_FUZZ_DIST, a dist folder beside a
// package.json) so that a long run is not disturbed by a rebuild of dist/ while it goes on.
const DIST = process.env.TRTN_FUZZ_DIST ? path.resolve(process.env.TRTN_FUZZ_DIST) : path.join(__dirname, '..', 'dist');
const lib = require(DIST);
const ir = require(path.join(DIST, 'ir-entry'));
const { ZipArchive } = require(path.join(DIST, 'io', 'zip', 'reader'));
const { mutateBytes } = require('./mutators/bytes');
const { mutateJson } = require('./mutators/json');
const { npyFile, mutateNpy } = require('./mutators/npy');
const { mutateOnnx, tinySeeds } = require('./mutators/onnx');
const { entriesOf, mutateZip } = require('./mutators/zip');
const gen = require('./mutators/onnx-gen');
const { pt2Bomb } = require('./mutators/pt2-gen');

const FIXTURES = path.join(__dirname, '..', 'test', 'fixtures');
/**
 * The mutated readers (a seed corpus, mutated), then the generated input classes (each input
 * made by a generator, sometimes mutated after):
 *  - pt2bomb: loadPt2 of archives with many stride-0 weights over a few bytes, or many small
 *    deflated weights (a zip bomb spread over entries);
 *  - shapefold: loadOnnx of shape arithmetic that grows when folded;
 *  - compile: compile() on the reference backend of constants expanded to large sizes through
 *    pointwise ops and a reduction, with a small maxProgramBytes (then run) or the default;
 *  - differential: Gather/Scatter ops with indices in and out of range, compiled and run on the
 *    reference and onnxruntime backends, whose outcomes must agree;
 *  - extdata: loadOnnx of a model whose external data is reached through hard or symbolic
 *    links or from outside its folder (must be E_BAD_MODEL), and controls;
 *  - dupnames: loadOnnx of graphs with a name defined twice (must be E_BAD_MODEL).
 */
const MUTATED = ['onnx', 'pt2', 'trtp', 'npy'];
const GENERATED = ['pt2bomb', 'shapefold', 'compile', 'differential', 'extdata', 'dupnames'];
const READERS = [...MUTATED, ...GENERATED];
/** The generated readers that load a model with no options (see readInput). */
const LOADERS = ['pt2bomb', 'shapefold', 'extdata', 'dupnames'];
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
    // The spread bombs and stride-0 weights are added to the smallest model with weights.
    pt2bomb: [['mlp.pt2', fixture('mlp', 'model.pt2')]],
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
    for (const [name, bytes] of seeds[reader] ?? []) fs.writeFileSync(path.join(dir, reader, name), bytes);
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
    if (reader === 'pt2' || reader === 'trtp' || reader === 'pt2bomb') seed.entries = entriesOf(ZipArchive, bytes);
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
  if (GENERATED.includes(reader)) return generate(reader, corpus, rng);
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

/** An input of a generated class; the ONNX ones are sometimes mutated at the protobuf level after. */
function generate(reader, corpus, rng) {
  const mutated = (bytes, p) => (rng.chance(p) ? mutateOnnx(rng, bytes, OP_TYPES) : bytes);
  switch (reader) {
    case 'pt2bomb':
      return pt2Bomb(rng, corpus[0].entries);
    case 'shapefold':
      return mutated(gen.shapeFoldModel(rng), 0.1);
    case 'compile':
      return mutated(gen.expansionModel(rng), 0.1);
    case 'differential':
      return gen.indexModel(rng);
    case 'extdata':
      return gen.externalDataCase(rng);
    default:
      return mutated(gen.duplicateNamesModel(rng), 0.15);
  }
}

/**
 * What an input did wrong that is not an error the library threw: a disagreement of backends,
 * a hostile input accepted. `where` tells causes apart: the driver saves one input per
 * distinct cause, read from `at` lines as from a stack.
 */
class Finding extends Error {
  constructor(kind, message, where) {
    super(message);
    this.kind = kind;
    this.where = where;
  }
}

/** The program's outputs as a list (run() gives a list, or a record by output name). */
const outputList = (out) => (Array.isArray(out) ? out : Object.values(out));

/** The tensors to feed from a model's `fuzz` metadata ({name: [dtype, shape, values]}). */
function feedOf(feed) {
  return Object.fromEntries(Object.entries(feed).map(([n, [dtype, shape, values]]) => [n, lib.Tensor.from(dtype, shape, values)]));
}

/** Compiles `bytes` on `backend` and runs it on `feed`: {status: 'ok', outputs} or {status: 'error', stage, error}. */
async function compileAndRun(bytes, backend, feed) {
  let program;
  try {
    program = await lib.compile(bytes, { backend, minBlockSize: 1 });
  } catch (error) {
    return { status: 'error', stage: 'compile', error };
  }
  try {
    const outputs = outputList(await program.run(feedOf(feed)));
    return { status: 'ok', outputs: outputs.map((t) => ({ dtype: t.dtype, shape: [...t.shape], values: Array.from(t.toArray(), Number) })) };
  } catch (error) {
    return { status: 'error', stage: 'run', error };
  } finally {
    await program.dispose();
  }
}

const codeOf = (o) => (o.status === 'ok' ? 'ok' : o.error instanceof lib.TensorRTNodeError && lib.ERROR_CODES.includes(o.error.code) ? o.error.code : 'untyped');
const describe = (o) => (o.status === 'ok' ? `ok ${JSON.stringify(o.outputs)}` : `${codeOf(o)} at ${o.stage}: ${String(o.error && o.error.message).split('\n')[0].slice(0, 300)}`);

/** Null when two answers agree (dtypes, shapes, values within 1e-6 relative), else why not. */
function compareAnswers(a, b) {
  if (a.length !== b.length) return `${a.length} outputs vs ${b.length}`;
  for (let k = 0; k < a.length; k++) {
    const [x, y] = [a[k], b[k]];
    if (x.dtype !== y.dtype) return `output ${k}: dtype ${x.dtype} vs ${y.dtype}`;
    if (x.shape.join() !== y.shape.join()) return `output ${k}: shape [${x.shape}] vs [${y.shape}]`;
    for (let i = 0; i < x.values.length; i++) {
      const [u, v] = [x.values[i], y.values[i]];
      if (u === v || (Number.isNaN(u) && Number.isNaN(v))) continue;
      if (!(Math.abs(u - v) <= 1e-6 * Math.max(Math.abs(u), Math.abs(v)))) return `output ${k} element ${i}: ${u} vs ${v}`;
    }
  }
  return null;
}

/**
 * The differential reader: the model compiled and run on the reference and onnxruntime
 * backends with the feed of its metadata. Both answer alike, or both fail with the same code
 * (at compile or at run: where a backend checks indices differs, the code must not); anything
 * else is a `disagreement` finding. An untyped error on either side is an `untyped` finding.
 * Resolves with the outcome's label (`agree:ok`, `agree:<code>`).
 */
async function differential(bytes) {
  const meta = gen.modelMeta(bytes);
  if (meta === undefined || meta.feed === undefined) {
    // Not a generated model (a replayed file of another reader): read it.
    ir.loadOnnx(bytes);
    return 'ok';
  }
  const ref = await compileAndRun(bytes, 'reference', meta.feed);
  const ort = await compileAndRun(bytes, 'onnxruntime', meta.feed);
  for (const o of [ref, ort]) if (o.status === 'error' && codeOf(o) === 'untyped') throw o.error;
  const [a, b] = [codeOf(ref), codeOf(ort)];
  const where = `differential ${meta.op} (${meta.mode} indices): reference ${a}${ref.stage ? ` at ${ref.stage}` : ''}, onnxruntime ${b}${ort.stage ? ` at ${ort.stage}` : ''}`;
  if (a !== b) throw new Finding('disagreement', `the backends disagree on ${meta.op} with ${meta.mode} indices:\n  reference: ${describe(ref)}\n  onnxruntime: ${describe(ort)}`, where);
  if (a === 'ok') {
    const why = compareAnswers(ref.outputs, ort.outputs);
    if (why !== null) throw new Finding('disagreement', `the backends give different values for ${meta.op} with ${meta.mode} indices: ${why}\n  reference: ${describe(ref)}\n  onnxruntime: ${describe(ort)}`, `differential ${meta.op} (${meta.mode} indices): values`);
  }
  return `agree:${a}`;
}

/**
 * The compile reader: compile() on the reference backend with the model's maxProgramBytes
 * (metadata; null: the default) and input ranges; a program compiled under a small budget is
 * run too (ones as x), since its plan says it fits. Resolves `compiled` or `ran`.
 */
async function compileExpansion(bytes) {
  const meta = gen.modelMeta(bytes) ?? {};
  const settings = { backend: 'reference', minBlockSize: 1 };
  if (typeof meta.maxProgramBytes === 'number') settings.maxProgramBytes = meta.maxProgramBytes;
  if (meta.inputs !== undefined) settings.inputs = meta.inputs;
  const program = await lib.compile(bytes, settings);
  try {
    if (settings.maxProgramBytes === undefined) return 'compiled';
    const inputs = program.inputs.map((io) => {
      const shape = io.shape.map((d) => (typeof d === 'number' ? d : 2));
      return new lib.Tensor(io.dtype, shape);
    });
    await program.run(inputs);
    return 'ran';
  } finally {
    await program.dispose();
  }
}

/** Writes the files and links of an external-data layout under `root`; returns the model path to load. */
function materialize(root, c, model) {
  const dir = path.join(root, 'model');
  const outside = path.join(root, 'outside');
  fs.mkdirSync(dir);
  fs.mkdirSync(outside);
  const f32 = (values) => Buffer.from(new Float32Array(values).buffer);
  const secret = path.join(outside, 'secret.bin');
  fs.writeFileSync(secret, f32(gen.SECRET));
  const weight = () => fs.writeFileSync(path.join(dir, 'w.bin'), f32(gen.WEIGHT));
  let load = path.join(dir, 'model.onnx');
  switch (c.layout) {
    case 'hardlink-outside': fs.linkSync(secret, path.join(dir, 'w.bin')); break;
    case 'hardlink-inside': fs.writeFileSync(path.join(dir, 'real.bin'), f32(gen.WEIGHT)); fs.linkSync(path.join(dir, 'real.bin'), path.join(dir, 'w.bin')); break;
    case 'symlink-outside-relative': fs.symlinkSync('../outside/secret.bin', path.join(dir, 'w.bin')); break;
    case 'symlink-outside-absolute': fs.symlinkSync(secret, path.join(dir, 'w.bin')); break;
    case 'symlink-inside': fs.writeFileSync(path.join(dir, 'real.bin'), f32(gen.WEIGHT)); fs.symlinkSync('real.bin', path.join(dir, 'w.bin')); break;
    case 'symlink-chain-outside': fs.symlinkSync('../outside/secret.bin', path.join(dir, 'l2')); fs.symlinkSync('l2', path.join(dir, 'w.bin')); break;
    case 'symlink-dangling': fs.symlinkSync('nothing.bin', path.join(dir, 'w.bin')); break;
    case 'symlink-dir-outside': fs.writeFileSync(path.join(outside, 'w.bin'), f32(gen.SECRET)); fs.symlinkSync('../outside', path.join(dir, 'sub')); break;
    case 'symlink-dir-inside': fs.mkdirSync(path.join(dir, 'real')); fs.writeFileSync(path.join(dir, 'real', 'w.bin'), f32(gen.WEIGHT)); fs.symlinkSync('real', path.join(dir, 'sub')); break;
    case 'hardlink-outside-via-dir-symlink': fs.mkdirSync(path.join(dir, 'real')); fs.linkSync(secret, path.join(dir, 'real', 'w.bin')); fs.symlinkSync('real', path.join(dir, 'sub')); break;
    case 'location-dotdot-inside':
    case 'location-directory': fs.mkdirSync(path.join(dir, 'sub')); weight(); break;
    case 'model-dir-symlinked': weight(); fs.symlinkSync('model', path.join(root, 'alias')); load = path.join(root, 'alias', 'model.onnx'); break;
    case 'model-dir-symlinked-hardlink': fs.linkSync(secret, path.join(dir, 'w.bin')); fs.symlinkSync('model', path.join(root, 'alias')); load = path.join(root, 'alias', 'model.onnx'); break;
    default: weight(); // plain, location-escape, location-absolute
  }
  fs.writeFileSync(path.join(dir, 'model.onnx'), model);
  return load;
}

/** `model` with `<root>` in its external-data locations replaced by `root` (absolute locations). */
function rootedModel(model, root) {
  try {
    const m = onnx.ModelProto.decode(model);
    for (const t of m.graph?.initializer ?? []) for (const e of t.externalData ?? []) if (typeof e.value === 'string') e.value = e.value.replace('<root>', root);
    return onnx.ModelProto.encode(m).finish();
  } catch {
    return model;
  }
}

/**
 * The extdata reader: the case's files and links made in a fresh folder, the model loaded from
 * its path (so external data is read), the folder removed. A layout that reaches the data through
 * a link or from outside the model's folder and still loads is an `accepted` finding.
 */
function externalData(bytes) {
  let c;
  try {
    c = JSON.parse(Buffer.from(bytes).toString('utf8'));
  } catch {
    c = undefined;
  }
  if (c === undefined || c === null || typeof c.model !== 'string' || !Object.hasOwn(gen.LAYOUTS, c.layout)) {
    ir.loadOnnx(bytes);
    return;
  }
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'trtn-fuzz-ext-'));
  try {
    const load = materialize(root, c, rootedModel(Buffer.from(c.model, 'base64'), root));
    ir.loadOnnx(load);
    if (gen.LAYOUTS[c.layout].refused) throw new Finding('accepted', `loadOnnx read external data laid out as ${c.layout} (location ${JSON.stringify(c.location)})`, `extdata ${c.layout}`);
  } finally {
    fs.rmSync(root, { recursive: true, force: true });
  }
}

/** The dupnames reader: loadOnnx; a model defining a name twice that loads is an `accepted` finding. */
function duplicateNames(bytes) {
  let problem;
  try {
    problem = gen.duplicateNameProblem(onnx.ModelProto.decode(bytes));
  } catch {
    problem = undefined;
  }
  ir.loadOnnx(bytes);
  if (problem !== undefined) throw new Finding('accepted', `loadOnnx accepted a model where ${problem}`, `dupnames ${problem.replace(/"[^"]*"/g, 'N')}`);
}

/**
 * Reads `bytes` with `reader`; resolves on success (with a label of the outcome for some
 * readers, 'ok' otherwise), rejects with whatever the library threw or a {@link Finding}.
 * The generated readers that only load (loadOnnx, loadPt2) call them with valid arguments (a
 * buffer or a path, no options), so E_INVALID_ARGUMENT there blames the caller for what is the
 * model's fault: a `wrong-code` finding (E_BAD_MODEL or E_UNSUPPORTED_OP is the code of a
 * model's content). compile() is left out: it asks the caller for the shapes of dynamic inputs
 * with E_INVALID_ARGUMENT, as documented.
 */
async function readInput(reader, bytes) {
  if (!LOADERS.includes(reader)) return read(reader, bytes);
  try {
    return await read(reader, bytes);
  } catch (error) {
    if (error instanceof lib.TensorRTNodeError && error.code === 'E_INVALID_ARGUMENT') {
      throw new Finding('wrong-code', `${reader}: the model's content refused as an invalid argument of the caller (E_INVALID_ARGUMENT): ${error.stack}`);
    }
    throw error;
  }
}

async function read(reader, bytes) {
  switch (reader) {
    case 'pt2bomb':
      ir.loadPt2(bytes);
      return;
    case 'shapefold':
      ir.loadOnnx(bytes);
      return;
    case 'compile':
      return compileExpansion(bytes);
    case 'differential':
      return differential(bytes);
    case 'extdata':
      return externalData(bytes);
    case 'dupnames':
      return duplicateNames(bytes);
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

/**
 * The outcome's name: 'ok' (or the reader's label of a success), a typed error's code, or a
 * finding's kind ('untyped', 'internal', 'disagreement', 'accepted').
 */
function classify(error, label) {
  if (error === undefined) return { outcome: typeof label === 'string' ? label : 'ok' };
  if (error instanceof Finding) return { outcome: error.kind, finding: error.kind, message: error.where === undefined ? error.message : `${error.message}\n    at ${error.where}` };
  if (error instanceof lib.TensorRTNodeError && lib.ERROR_CODES.includes(error.code)) {
    return error.code === 'E_INTERNAL' ? { outcome: 'E_INTERNAL', finding: 'internal', message: error.stack } : { outcome: error.code };
  }
  return { outcome: 'untyped', finding: 'untyped', message: (error && error.stack) || String(error) };
}

module.exports = { READERS, MUTATED, GENERATED, SELFTEST, buildCorpus, loadCorpus, makeInput, readInput, classify, mutateJson };
