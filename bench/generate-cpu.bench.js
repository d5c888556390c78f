'use strict';
// Greedy generation on the CPU from a KV-cache ONNX export (the Optimum layout that
// bench/gpu/generate_models.py writes): onnxruntime-node driven directly, as transformers.js
// does (each step feeds the previous step's present.* back as past_key_values.*), against
// tensorrt-node's generate() on its onnxruntime backend (compileForGeneration + createGenerator),
// with the same thread count (GEN_CPU_THREADS, default: every core). Both generate NEW_TOKENS
// (default 32) tokens after a PROMPT_LEN-token prompt (default 16) at batch 1; the tokens are
// compared, and each side's time to the first token and decode rate (tokens after the first,
// over the time after the first) are the best of GEN_CPU_REPEATS (default 3) after a warm-up.
//
// usage: node bench/generate-cpu.bench.js MODEL.onnx   (uses dist/: build first)
const os = require('node:os');
const path = require('node:path');
const { performance } = require('node:perf_hooks');

const THREADS = Number(process.env.GEN_CPU_THREADS || os.availableParallelism());
process.env.TENSORRT_NODE_ORT_INTRA_OP_THREADS = String(THREADS);
process.env.TENSORRT_NODE_ORT_INTER_OP_THREADS = '1';
const NEW_TOKENS = Number(process.env.NEW_TOKENS || 32);
const PROMPT_LEN = Number(process.env.PROMPT_LEN || 16);
const REPEATS = Number(process.env.GEN_CPU_REPEATS || 3);

const ort = require('onnxruntime-node');
const lib = require(path.join(__dirname, '..', 'dist', 'index.js'));
const { loadOnnx } = require(path.join(__dirname, '..', 'dist', 'ir-entry.js'));

const argmaxLast = (logits, vocab) => {
  const row = logits.data.subarray(logits.data.length - vocab);
  let best = 0;
  for (let i = 1; i < vocab; i++) if (row[i] > row[best]) best = i;
  return best;
};

/** Greedy decoding with onnxruntime-node alone: [tokens, ms to the first token, ms in all]. */
async function ortGreedy(session, layout, prompt) {
  const t0 = performance.now();
  let past = Object.fromEntries(layout.past.map((p) => [p.name, new ort.Tensor('float32', new Float32Array(0), [1, p.heads, 0, p.headDim])]));
  let ids = prompt;
  let done = 0;
  let first = 0;
  const tokens = [];
  while (tokens.length < NEW_TOKENS) {
    const n = ids.length;
    const feeds = {
      input_ids: new ort.Tensor('int64', BigInt64Array.from(ids, BigInt), [1, n]),
      attention_mask: new ort.Tensor('int64', new BigInt64Array(done + n).fill(1n), [1, done + n]),
      position_ids: new ort.Tensor('int64', BigInt64Array.from({ length: n }, (_, i) => BigInt(done + i)), [1, n]),
      ...past,
    };
    const out = await session.run(feeds);
    const next = argmaxLast(out.logits, layout.vocab);
    tokens.push(next);
    if (tokens.length === 1) first = performance.now() - t0;
    past = Object.fromEntries(layout.past.map((p, i) => [p.name, out[layout.present[i]]]));
    done += n;
    ids = [next];
  }
  return [tokens, first, performance.now() - t0];
}

/** tensorrt-node's generate(): [tokens, ms to the first token, ms in all]. */
async function ours(generator, prompt) {
  const t0 = performance.now();
  let first = 0;
  const tokens = [];
  for await (const step of generator.stream([prompt], { maxNewTokens: NEW_TOKENS })) {
    tokens.push(step.tokens[0]);
    if (tokens.length === 1) first = performance.now() - t0;
  }
  return [tokens, first, performance.now() - t0];
}

async function best(fn) {
  await fn();
  let result = null;
  for (let r = 0; r < REPEATS; r++) {
    const got = await fn();
    if (result === null || got[2] < result[2]) result = got;
  }
  return result;
}

async function main() {
  const file = process.argv[2];
  if (!file) throw new Error('usage: node bench/generate-cpu.bench.js MODEL.onnx');
  const graph = loadOnnx(file);
  const pastInputs = graph.inputs.filter((v) => v.name.startsWith('past_key_values.'));
  const layout = {
    vocab: graph.outputs[0].tensorType.shape.at(-1),
    past: pastInputs.map((v) => ({ name: v.name, heads: v.tensorType.shape[1], headDim: v.tensorType.shape[3] })),
    present: pastInputs.map((v) => v.name.replace('past_key_values.', 'present.')),
  };
  const r = (() => {
    let s = 7;
    return () => ((s = (Math.imul(s, 1664525) + 1013904223) >>> 0) / 2 ** 32);
  })();
  const prompt = Array.from({ length: PROMPT_LEN }, () => Math.floor(r() * layout.vocab));

  const session = await ort.InferenceSession.create(file, { intraOpNumThreads: THREADS, interOpNumThreads: 1, executionMode: 'sequential', graphOptimizationLevel: 'all' });
  const direct = await best(() => ortGreedy(session, layout, prompt));
  await session.release();

  const program = await lib.compileForGeneration(file, { backend: 'onnxruntime', maxBatch: 1, maxLength: PROMPT_LEN + NEW_TOKENS });
  const generator = lib.createGenerator(program);
  const mine = await best(() => ours(generator, prompt));
  await generator.dispose();
  await program.dispose();

  const decode = ([, first, all]) => (NEW_TOKENS - 1) / ((all - first) / 1000);
  let equal = 0;
  while (equal < NEW_TOKENS && direct[0][equal] === mine[0][equal]) equal++;
  const row = {
    model: path.basename(path.dirname(file)),
    threads: THREADS,
    cpu: os.cpus()[0]?.model,
    promptLength: PROMPT_LEN,
    newTokens: NEW_TOKENS,
    tokensEqual: equal,
    onnxruntimeNode: { firstTokenMs: direct[1], decodeTokensPerS: decode(direct) },
    tensorrtNode: { firstTokenMs: mine[1], decodeTokensPerS: decode(mine) },
  };
  console.log(JSON.stringify(row));
  console.log(`\n| ${row.model}, batch 1, ${THREADS} threads | onnxruntime-node directly | tensorrt-node generate() (onnxruntime backend) |`);
  console.log('|---|---|---|');
  console.log(`| first token, ${PROMPT_LEN}-token prompt, ms | ${row.onnxruntimeNode.firstTokenMs.toFixed(1)} | ${row.tensorrtNode.firstTokenMs.toFixed(1)} |`);
  console.log(`| decode tokens/s | ${row.onnxruntimeNode.decodeTokensPerS.toFixed(1)} | ${row.tensorrtNode.decodeTokensPerS.toFixed(1)} |`);
  console.log(`| greedy tokens equal (of ${NEW_TOKENS}) | ${equal} | |`);
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
