'use strict';
// Generation with tensorrt-node on the GPU against PyTorch (docs/generate.md): reads the models
// bench/gpu/generate_models.py exported (DIR/<name>/model.onnx and meta.json) and, per model:
//   tokens   compiled for the cuda backend in fp32, greedy NEW_TOKENS tokens for each of the
//            meta's prompts (alone, and the two as one left-padded batch), with exact and
//            bucketed sizes: how many of PyTorch's generate() tokens they match, in order;
//   times    compiled in fp16: decode tokens/s at each batch of BATCHES (16-token prompts,
//            NEW_TOKENS new tokens, the decode rate after the first token) and the time to the
//            first token of a PROMPT_LEN-token prompt, with exact and bucketed sizes, through
//            the public API (createGenerator().generate(), the cache on the device);
//   memory   device memory free before and after GENERATED tokens of one generation after a
//            warm-up one, and after a generation aborted mid-way;
//   cpu      (ORT_CPU=1) onnxruntime-node on the same file: decode tokens/s at batch 1.
// One JSON line per model on stdout, then a table.
//
// usage: node generate.bench.js DIR [name ...]
const fs = require('node:fs');
const path = require('node:path');
const lib = require(path.join(__dirname, '..', '..', 'dist', 'index.js'));

const NEW_TOKENS = Number(process.env.NEW_TOKENS || 64);
const PROMPT_LEN = Number(process.env.PROMPT_LEN || 512);
const BATCHES = (process.env.BATCHES || '1,8').split(',').map(Number);
const GENERATED = Number(process.env.GENERATED || 1000);

function seeded(seed) {
  let s = seed >>> 0;
  return () => ((s = (Math.imul(s, 1664525) + 1013904223) >>> 0) / 2 ** 32);
}

const randomPrompts = (batch, length, vocab, seed) => {
  const r = seeded(seed);
  return Array.from({ length: batch }, () => Array.from({ length }, () => Math.floor(r() * vocab)));
};

/** Tokens of `got` equal to `want`, counted from the start until the first difference. */
const agreeing = (got, want) => {
  let n = 0;
  while (n < want.length && got[n] === want[n]) n++;
  return n;
};

async function tokensCheck(file, meta) {
  const program = await lib.compileForGeneration(file, { backend: 'cuda', maxBatch: 2, maxLength: 16 + NEW_TOKENS });
  const out = {};
  try {
    for (const sizes of ['exact', 'bucketed']) {
      const generator = lib.createGenerator(program, { sizes });
      const alone = [];
      for (const p of meta.prompts) alone.push((await generator.generate(p, { maxNewTokens: NEW_TOKENS })).tokens[0]);
      const batched = (await generator.generate(meta.prompts, { maxNewTokens: NEW_TOKENS })).tokens;
      out[sizes] = {
        alone: alone.map((t, i) => agreeing(t, meta.torchTokens[i])),
        batched: batched.map((t, i) => agreeing(t, meta.torchTokens[i])),
        of: NEW_TOKENS,
      };
      await generator.dispose();
    }
  } finally {
    await program.dispose();
  }
  return out;
}

async function timeGenerate(generator, prompts, newTokens) {
  const t0 = performance.now();
  await generator.generate(prompts, { maxNewTokens: newTokens });
  return performance.now() - t0;
}

async function times(file, meta) {
  const maxBatch = Math.max(...BATCHES);
  const t0 = performance.now();
  const program = await lib.compileForGeneration(file, { backend: 'cuda', precisions: ['fp16'], maxBatch, maxLength: PROMPT_LEN + NEW_TOKENS });
  const out = { compileS: (performance.now() - t0) / 1000 };
  try {
    for (const sizes of ['exact', 'bucketed']) {
      const generator = lib.createGenerator(program, { sizes });
      for (const batch of BATCHES) {
        const prompts = randomPrompts(batch, 16, meta.vocab, 3 + batch);
        // Warm-up: plans and kernels for every shape the timed runs meet.
        await timeGenerate(generator, prompts, NEW_TOKENS);
        const best = (ms) => Math.min(...ms);
        const whole = [], first = [];
        for (let i = 0; i < 3; i++) {
          whole.push(await timeGenerate(generator, prompts, NEW_TOKENS));
          first.push(await timeGenerate(generator, prompts, 1));
        }
        out[`${sizes} b${batch}`] = { tokensPerS: (batch * (NEW_TOKENS - 1)) / ((best(whole) - best(first)) / 1000), totalMs: best(whole) };
      }
      const long = randomPrompts(1, PROMPT_LEN, meta.vocab, 99);
      await timeGenerate(generator, long, 1);
      const ttft = [];
      for (let i = 0; i < 3; i++) ttft.push(await timeGenerate(generator, long, 1));
      out[`${sizes} ttft p${PROMPT_LEN}`] = { ms: Math.min(...ttft) };
      await generator.dispose();
    }
    out.memory = await memory(program, meta);
  } finally {
    await program.dispose();
  }
  return out;
}

/** Device 0's free bytes (the pool's released memory counts as used: the live tensors say what the library holds). */
async function freeBytes() {
  return { free: (await lib.deviceMemoryInfo(0)).freeBytes, live: lib.gpuAllocationStats().liveBytes };
}

async function memory(program, meta) {
  const generator = lib.createGenerator(program);
  const length = Math.min(GENERATED, PROMPT_LEN + NEW_TOKENS - 16);
  const prompt = randomPrompts(1, 16, meta.vocab, 7)[0];
  await generator.generate(prompt, { maxNewTokens: length });
  const before = await freeBytes();
  await generator.generate(prompt, { maxNewTokens: length });
  const after = await freeBytes();
  const controller = new AbortController();
  let steps = 0;
  try {
    for await (const _ of generator.stream(prompt, { maxNewTokens: length, signal: controller.signal })) if (++steps === 20) controller.abort(new Error('enough'));
  } catch (e) {
    if (e.code !== 'E_ABORTED') throw e;
  }
  const afterAbort = await freeBytes();
  await generator.dispose();
  return { tokens: length, freeBefore: before, freeAfter: after, freeAfterAbort: afterAbort };
}

async function cpu(file, meta) {
  const program = await lib.compileForGeneration(file, { backend: 'onnxruntime', maxBatch: 1, maxLength: 16 + 16 });
  try {
    const generator = lib.createGenerator(program);
    const prompt = randomPrompts(1, 16, meta.vocab, 3)[0];
    await timeGenerate(generator, prompt, 2);
    const whole = await timeGenerate(generator, prompt, 16);
    const first = await timeGenerate(generator, prompt, 1);
    await generator.dispose();
    return { 'onnxruntime-node b1': { tokensPerS: 15 / ((whole - first) / 1000) } };
  } finally {
    await program.dispose();
  }
}

async function main() {
  const dir = process.argv[2];
  const names = process.argv.slice(3);
  const models = (names.length > 0 ? names : fs.readdirSync(dir)).filter((n) => fs.existsSync(path.join(dir, n, 'meta.json')));
  const rows = [];
  for (const name of models) {
    const meta = JSON.parse(fs.readFileSync(path.join(dir, name, 'meta.json'), 'utf8'));
    const file = path.join(dir, name, 'model.onnx');
    const row = { name };
    if (meta.error) row.error = `export: ${meta.error}`;
    else {
      for (const [part, fn] of [['tokens', tokensCheck], ['ours', times], ...(process.env.ORT_CPU ? [['cpu', cpu]] : [])]) {
        try {
          row[part] = await fn(file, meta);
        } catch (e) {
          row[part] = { error: `${e.code ?? ''} ${e.message}`.slice(0, 1500) };
        }
      }
      row.torch = meta.torch;
    }
    rows.push(row);
    console.log(JSON.stringify(row));
  }
  for (const r of rows) {
    if (r.error || !r.ours || r.ours.error) continue;
    console.log(`\n${r.name}: tokens equal to PyTorch's (of ${NEW_TOKENS}): ${JSON.stringify(r.tokens)}`);
    console.log('| configuration | tensorrt-node | PyTorch dynamic | PyTorch static compiled |');
    console.log('|---|---|---|---|');
    for (const sizes of ['exact', 'bucketed']) {
      for (const b of BATCHES) {
        const t = (x) => (x?.tokensPerS ? x.tokensPerS.toFixed(0) : (x?.error ?? '-').slice(0, 40));
        console.log(`| ${sizes} b${b} tokens/s | ${t(r.ours[`${sizes} b${b}`])} | ${t(r.torch?.[`dynamic b${b}`])} | ${t(r.torch?.[`static compiled b${b}`])} |`);
      }
      const m = (x) => (x?.ms ? x.ms.toFixed(1) : '-');
      console.log(`| ${sizes} first token, ${PROMPT_LEN}-token prompt, ms | ${m(r.ours[`${sizes} ttft p${PROMPT_LEN}`])} | ${m(r.torch?.[`dynamic ttft p${PROMPT_LEN}`])} | ${m(r.torch?.[`static compiled ttft p${PROMPT_LEN}`])} |`);
    }
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
