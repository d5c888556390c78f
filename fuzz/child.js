'use strict';
/**
 * A fuzzing child process: reads inputs [from, to) of one reader, in order, and reports
 * counts of outcomes and any finding to its parent. Before each input it writes the input's
 * index to the progress file, so that the parent knows which input a hang, a crash or an
 * out-of-memory kill belongs to.
 */
const fs = require('node:fs');

const { Random, inputSeed } = require('./random');
const { loadCorpus, makeInput, readInput, classify } = require('./targets');

const [progressFile] = process.argv.slice(2);
const progress = fs.openSync(progressFile, 'w');
const corpora = new Map();

// An error escaping an input's promise is a finding too (typed or not, it escaped).
for (const event of ['uncaughtException', 'unhandledRejection']) {
  process.on(event, (error) => {
    process.send({ finding: { kind: 'escaped', message: (error && error.stack) || String(error) } }, () => process.exit(3));
  });
}

process.on('message', async ({ reader, seed, from, to, corpus }) => {
  if (!corpora.has(reader)) corpora.set(reader, loadCorpus(corpus, reader));
  const seeds = corpora.get(reader);
  const counts = {};
  for (let i = from; i < to; i++) {
    fs.writeSync(progress, `${i}`.padEnd(16), 0);
    const input = makeInput(reader, seeds, new Random(inputSeed(seed, reader, i)));
    let error;
    let label;
    try {
      label = await readInput(reader, input);
    } catch (e) {
      error = e;
    }
    const { outcome, finding, message } = classify(error, label);
    counts[outcome] = (counts[outcome] ?? 0) + 1;
    if (finding !== undefined) process.send({ finding: { index: i, kind: finding, message } });
  }
  process.send({ done: to, counts });
});
