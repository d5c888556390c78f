#!/usr/bin/env node
/**
 * Event-loop delay while compile() runs: p50/p99/max of monitorEventLoopDelay
 * during compile() of mobilenet_v3_small, on the compile worker (default) and in-process
 * (forced by registering a user converter for a target no model has, which makes compile()
 * stay on this thread). Needs `npm run build:ts`. Usage: node bench/compile-event-loop.js [runs]
 */
'use strict';
const path = require('node:path');
const { monitorEventLoopDelay } = require('node:perf_hooks');
const { compile } = require('../dist/compile');
const { registerConverter, unregisterConverter } = require('../dist/conversion/registry');

const MODEL = path.join(__dirname, '..', 'test', 'fixtures', 'mobilenet_v3_small', 'model.onnx');
const SETTINGS = { backend: 'reference', inputs: [{ shape: [1, 3, 96, 96] }] };

async function measure() {
  const h = monitorEventLoopDelay({ resolution: 1 });
  h.enable();
  // Cross-check: the longest gap between 1 ms interval ticks, and their count.
  let last = performance.now();
  let gap = 0;
  let ticks = 0;
  const timer = setInterval(() => {
    const now = performance.now();
    gap = Math.max(gap, now - last);
    last = now;
    ticks++;
  }, 1);
  const t0 = performance.now();
  const program = await compile(MODEL, SETTINGS);
  const wall = performance.now() - t0;
  // A stall is recorded by the first sample after it: give the sampler a turn.
  await new Promise((resolve) => setTimeout(resolve, 20));
  h.disable();
  clearInterval(timer);
  await program.dispose();
  const ms = (ns) => (ns / 1e6).toFixed(1);
  return { p50: ms(h.percentile(50)), p99: ms(h.percentile(99)), max: ms(h.max), wall: wall.toFixed(0), gap: gap.toFixed(1), ticks };
}

async function main() {
  const runs = Number(process.argv[2] ?? 3);
  for (const mode of ['in-process', 'worker']) {
    const user = mode === 'in-process' ? registerConverter('bench.no_such_op', () => []) : undefined;
    try {
      await measure(); // warm-up: module loading, the worker's start
      for (let i = 0; i < runs; i++) {
        const r = await measure();
        console.log(`${mode.padEnd(10)} run ${i + 1}: event-loop delay p50 ${r.p50} ms, p99 ${r.p99} ms, max ${r.max} ms; longest tick gap ${r.gap} ms, ${r.ticks} ticks; compile ${r.wall} ms`);
      }
    } finally {
      if (user) unregisterConverter(user);
    }
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
