'use strict';
// Generation on the cuda backend (docs/generate.md): the tiny KV-cache LM of test/fixtures/
// tiny_kv_lm compiled for generation, greedy 16 tokens for each prompt alone and for the two as
// one left-padded batch, with exact and with bucketed sizes, against the onnxruntime oracle's
// tokens stored with the fixture; the cache stays on the device; device allocations after the
// generations, an aborted one and the program's dispose() are where they started. Prints the time a step took
// for each size policy (the bucketed one reuses the plans of its few shapes).
const fs = require('node:fs');
const path = require('node:path');
const { gpuCheck, assert } = require('./check-util');

const DIR = path.join(__dirname, '..', 'fixtures', 'tiny_kv_lm');

gpuCheck('generate', async (lib) => {
  const fixture = JSON.parse(fs.readFileSync(path.join(DIR, 'generation.json'), 'utf8'));
  const { prompts, steps, tokens: expected } = fixture;
  const live = () => lib.gpuAllocationStats().liveBytes;
  const before = live();
  const program = await lib.compileForGeneration(path.join(DIR, 'model.onnx'), { backend: 'cuda', maxBatch: 2, maxLength: 32 });
  const summary = { backend: program.backend };
  try {
    for (const sizes of ['exact', 'bucketed']) {
      const generator = lib.createGenerator(program, { sizes });
      assert(generator.cache === 'device', `the cache lives on the device (got ${generator.cache})`);
      const alone = [];
      for (const p of prompts) alone.push((await generator.generate(p, { maxNewTokens: steps })).tokens[0]);
      const t0 = performance.now();
      const batched = (await generator.generate(prompts, { maxNewTokens: steps })).tokens;
      const ms = performance.now() - t0;
      assert(JSON.stringify(alone) === JSON.stringify(expected), `${sizes}: each prompt alone gives the oracle's tokens (got ${JSON.stringify(alone)}, expected ${JSON.stringify(expected)})`);
      assert(JSON.stringify(batched) === JSON.stringify(expected), `${sizes}: the batch gives the oracle's tokens (got ${JSON.stringify(batched)})`);
      // An aborted generation frees its cache.
      const controller = new AbortController();
      let seen = 0;
      let aborted = null;
      try {
        for await (const _ of generator.stream(prompts, { maxNewTokens: steps, signal: controller.signal })) if (++seen === 5) controller.abort(new Error('enough'));
      } catch (error) {
        aborted = error.code;
      }
      assert(aborted === 'E_ABORTED', `${sizes}: the aborted generation rejects with E_ABORTED (got ${aborted})`);
      await generator.dispose();
      summary[sizes] = { tokens: 'equal', batchMs: Number(ms.toFixed(2)), msPerStep: Number((ms / steps).toFixed(3)) };
    }
  } finally {
    await program.dispose();
  }
  // The caches, the aborted generation's included, and the program's plans are all freed.
  assert(live() === before, `device allocations are back where they started (${before} bytes, now ${live()})`);
  return summary;
});
