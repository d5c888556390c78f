#!/usr/bin/env node
'use strict';
/**
 * The fuzzing driver (docs/fuzzing.md). Runs mutated and generated inputs of the readers
 * (fuzz/targets.js READERS) in a child process with a heap limit, watched for hangs (an input
 * running over --timeout-ms) and memory (RSS over --max-rss-mb); every outcome must be success
 * or a typed error with a code (and, for the differential reader, the same on both backends).
 * Anything else is saved to --findings as `<reader>-<kind>-<hash>` with a note.
 *
 *   node fuzz/run.js --duration 600            # ten minutes, all readers, a fresh seed
 *   node fuzz/run.js --count 200 --seed 1      # 200 inputs per reader, deterministic
 *   node fuzz/run.js --replay fuzz/findings/pt2-0123abcd4567 --reader pt2
 */
const { fork } = require('node:child_process');
const crypto = require('node:crypto');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const { Random, inputSeed } = require('./random');
const targets = require('./targets');

const DEFAULTS = { readers: targets.READERS.join(','), count: 0, duration: 0, seed: undefined, start: 0, timeoutMs: 5000, maxRssMb: 1024, heapMb: 512, restartEvery: 5000, findings: path.join(__dirname, 'findings'), corpus: '', log: '', json: false, replay: '', reader: '' };

function parseArgs(argv) {
  const o = { ...DEFAULTS };
  for (let i = 0; i < argv.length; i++) {
    const key = argv[i].replace(/^--/, '').replace(/-([a-z])/g, (_, c) => c.toUpperCase());
    if (!(key in DEFAULTS)) throw new Error(`unknown option ${argv[i]} (known: ${Object.keys(DEFAULTS).join(', ')})`);
    if (typeof DEFAULTS[key] === 'boolean') o[key] = true;
    else {
      const v = argv[++i];
      o[key] = typeof DEFAULTS[key] === 'number' || key === 'seed' ? Number(v) : v;
    }
  }
  if (o.seed === undefined) o.seed = Date.now() % 2 ** 31;
  if (o.count === 0 && o.duration === 0) o.count = 1000;
  return o;
}

/** RSS of process `pid` in MB (Linux /proc), or 0 when unknown. */
function rssMb(pid) {
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) / 1024 : 0;
  } catch {
    return 0;
  }
}

/** CPU time (user + system, all threads) of process `pid` in ms (Linux /proc), or 0 when unknown. */
function cpuMs(pid) {
  try {
    const fields = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').replace(/^.*\) /, '').split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100;
  } catch {
    return 0;
  }
}

/** A child process and the batch it is running. */
class Worker {
  constructor(o) {
    this.o = o;
    this.progressFile = path.join(o.corpus, `progress-${process.pid}`);
    this.child = fork(path.join(__dirname, 'child.js'), [this.progressFile], { execArgv: [`--max-old-space-size=${o.heapMb}`], stdio: ['ignore', 'ignore', 'pipe', 'ipc'] });
    this.child.stderr.on('data', () => {});
    this.served = 0;
    // Between batches the child may still die (an error escaping an input's promise after the
    // input was counted, a late allocation) or send a finding: both are kept for the next
    // batch, and a send to a dead child marks it dead instead of failing the driver.
    this.stray = [];
    this.busy = false;
    this.child.on('message', (m) => {
      if (!this.busy && m.finding) this.stray.push(m.finding);
    });
    this.child.on('exit', (code, signal) => {
      // An escaped error ends the child on purpose (child.js): its finding says why already.
      if (!this.busy && !this.closed && !this.stray.some((f) => f.kind === 'escaped')) this.stray.push({ kind: 'crash', message: `child exited between batches (code ${code}, signal ${signal})` });
      this.dead = true;
    });
    this.child.on('error', () => {
      this.dead = true;
    });
  }

  currentIndex() {
    const n = Number.parseInt(fs.readFileSync(this.progressFile, 'utf8'), 10);
    return Number.isNaN(n) ? undefined : n;
  }

  /** Runs inputs [from, to) of `reader`; resolves {counts, findings, stopped}: `stopped` is the index of an input that killed the child. */
  run(reader, from, to) {
    this.served += to - from;
    this.busy = true;
    this.lastReader = reader;
    return new Promise((resolve) => {
      const findings = [];
      let last = { index: undefined, at: Date.now(), cpu: cpuMs(this.child.pid) };
      const finish = (result) => {
        clearInterval(watch);
        this.child.off('message', onMessage);
        this.child.off('exit', onExit);
        this.busy = false;
        resolve({ findings, ...result });
      };
      const stop = (kind, message) => {
        const index = this.currentIndex() ?? from;
        this.child.off('exit', onExit);
        this.closed = true;
        this.child.kill('SIGKILL');
        this.dead = true;
        findings.push({ index, kind, message });
        finish({ counts: { [kind]: 1 }, stopped: index, completed: index - from });
      };
      const watch = setInterval(() => {
        const index = this.currentIndex();
        // Memory first: an input that blew the limit is an OOM even when a loaded machine let
        // it also burn the CPU budget before this tick came round.
        const rss = rssMb(this.child.pid);
        if (rss > this.o.maxRssMb) {
          stop('oom', `RSS ${Math.round(rss)} MB over the limit of ${this.o.maxRssMb} MB`);
          return;
        }
        const cpu = cpuMs(this.child.pid);
        // The machine is shared: a hang is an input that burns --timeout-ms of CPU, or
        // stalls six times as long in wall time (blocked on I/O or a promise that never settles).
        if (index !== last.index) last = { index, at: Date.now(), cpu };
        else if (cpu - last.cpu > this.o.timeoutMs || Date.now() - last.at > 6 * this.o.timeoutMs) {
          stop('hang', `input ran over ${this.o.timeoutMs} ms of CPU time (or ${6 * this.o.timeoutMs} ms of wall time)`);
        }
      }, 100);
      const onMessage = (m) => {
        if (m.finding) {
          if (m.finding.index === undefined) m.finding.index = this.currentIndex() ?? from;
          findings.push(m.finding);
        } else if (m.done !== undefined) finish({ counts: m.counts, completed: to - from });
      };
      const onExit = (code, signal) => {
        this.dead = true;
        const index = this.currentIndex() ?? from;
        findings.push({ index, kind: 'crash', message: `child exited (code ${code}, signal ${signal})` });
        finish({ counts: { crash: 1 }, stopped: index, completed: index - from });
      };
      this.child.on('message', onMessage);
      this.child.on('exit', onExit);
      fs.writeFileSync(this.progressFile, ''.padEnd(16));
      this.child.send({ reader, seed: this.o.seed, from, to, corpus: this.o.corpus });
    });
  }

  /** Findings the child sent, or its death, between batches; `index` is the last input it ran (where they came from). */
  takeStray() {
    const index = this.currentIndex();
    return this.stray.splice(0).map((f) => ({ ...f, index: f.index ?? index }));
  }

  close() {
    this.closed = true;
    if (!this.dead) this.child.kill('SIGKILL');
  }
}

/** Saves a finding's input and note (once per distinct cause); returns the file's path. */
function saveFinding(o, reader, corpus, f, seen) {
  const input = targets.makeInput(reader, corpus, new Random(inputSeed(o.seed, reader, f.index)));
  const hash = crypto.createHash('sha256').update(input).digest('hex').slice(0, 12);
  // One file per cause: where an error was thrown (its first two stack frames); at most 10
  // hangs, OOMs or crashes per reader (they have no stack to tell them apart).
  const frames = String(f.message).split('\n').filter((l) => /^\s+at /.test(l)).slice(0, 2);
  const cause = frames.length > 0 ? `${reader}:${f.kind}:${frames.join('|')}` : `${reader}:${f.kind}:${seen.size}`;
  if (seen.has(cause) || (frames.length === 0 && [...seen].filter((c) => c.startsWith(`${reader}:${f.kind}:`)).length >= 10)) return undefined;
  seen.add(cause);
  fs.mkdirSync(o.findings, { recursive: true });
  // The kind is part of the name: on a loaded machine one input can be caught as a hang once and
  // as an OOM another time (an allocation loop whose page faults burn the CPU budget first), and
  // each note must stay with its finding.
  const file = path.join(o.findings, `${reader}-${f.kind}-${hash}`);
  fs.writeFileSync(file, input);
  fs.writeFileSync(`${file}.txt`, `reader: ${reader}\nkind: ${f.kind}\nseed: ${o.seed}\nindex: ${f.index}\nreplay: node fuzz/run.js --replay ${path.relative(process.cwd(), file)} --reader ${reader}\n\n${f.message}\n`);
  return file;
}

/**
 * The findings a summary lists: every saved one, and the first ten others of each reader and
 * kind; `findingCounts` counts them all ({reader: {kind: n}}). An open finding hit thousands of
 * times would otherwise make one summary line megabytes long.
 */
function listedFindings(all) {
  const findingCounts = {};
  const findings = all.filter((f) => {
    const counts = (findingCounts[f.reader] ??= {});
    counts[f.kind] = (counts[f.kind] ?? 0) + 1;
    return f.file !== undefined || counts[f.kind] <= 10;
  });
  return { findings, findingCounts };
}

async function replay(o) {
  const bytes = new Uint8Array(fs.readFileSync(o.replay));
  let error;
  let label;
  const t0 = Date.now();
  try {
    label = await targets.readInput(o.reader, bytes);
  } catch (e) {
    error = e;
  }
  const c = targets.classify(error, label);
  process.stdout.write(`${o.reader} ${o.replay}: ${c.outcome} in ${Date.now() - t0} ms\n${c.message ?? (error ? (error.stack ?? error) : '')}\n`);
  // The compile worker thread may keep the process alive for a while: the replay is done.
  process.exit(0);
}

async function main() {
  const o = parseArgs(process.argv.slice(2));
  if (o.replay) return replay(o);
  const readers = o.readers.split(',');
  for (const r of readers) if (!targets.READERS.includes(r) && r !== targets.SELFTEST) throw new Error(`unknown reader ${r}`);
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'trtn-fuzz-'));
  if (!o.corpus) {
    o.corpus = tmp;
    await targets.buildCorpus(o.corpus);
  }
  const corpora = new Map(readers.map((r) => [r, targets.loadCorpus(o.corpus, r)]));
  const stats = Object.fromEntries(readers.map((r) => [r, { inputs: 0, ms: 0, outcomes: {}, next: o.start, batch: 50 }]));
  const findings = [];
  const seen = new Set();
  const started = Date.now();
  let worker;
  const deadline = o.duration > 0 ? started + o.duration * 1000 : Infinity;
  // Ctrl-C (or SIGTERM) ends the run after the current batch, with its summary and log line.
  let stopping = false;
  for (const signal of ['SIGINT', 'SIGTERM']) process.once(signal, () => (stopping = true));
  const pending = () => (stopping ? [] : readers).filter((r) => (o.count > 0 ? stats[r].next < o.start + o.count : true));
  const record = (reader, f) => {
    const file = saveFinding(o, reader, corpora.get(reader), f, seen);
    findings.push({ reader, index: f.index, kind: f.kind, file, message: String(f.message).split('\n')[0] });
  };
  // What a child did between batches counts for the reader of its last batch (an outcome more, not an input).
  const collectStray = (w) => {
    if (w === undefined || w.lastReader === undefined) return;
    for (const f of w.takeStray()) {
      const outcomes = stats[w.lastReader].outcomes;
      outcomes[f.kind] = (outcomes[f.kind] ?? 0) + 1;
      record(w.lastReader, f);
    }
  };
  try {
    while (pending().length > 0 && Date.now() < deadline) {
      for (const reader of pending()) {
        if (Date.now() >= deadline || stopping) break;
        const s = stats[reader];
        const end = o.count > 0 ? Math.min(o.start + o.count, s.next + s.batch) : s.next + s.batch;
        collectStray(worker);
        if (worker === undefined || worker.dead || worker.served >= o.restartEvery) {
          worker?.close();
          worker = new Worker({ ...o, corpus: o.corpus });
        }
        const t0 = Date.now();
        const result = await worker.run(reader, s.next, end);
        const hang = result.findings.find((f) => f.kind === 'hang');
        if (hang !== undefined) {
          // A hang must happen again, alone in a fresh child, to count.
          const again = new Worker({ ...o, corpus: o.corpus });
          const confirm = await again.run(reader, hang.index, hang.index + 1);
          again.close();
          if (!confirm.findings.some((f) => f.kind === 'hang')) {
            result.findings = result.findings.filter((f) => f !== hang);
            result.counts = { ...confirm.counts, unconfirmedHang: 1 };
          }
        }
        const ms = Date.now() - t0;
        s.ms += ms;
        s.inputs += result.completed + (result.stopped === undefined ? 0 : 1);
        for (const [k, v] of Object.entries(result.counts)) s.outcomes[k] = (s.outcomes[k] ?? 0) + v;
        for (const f of result.findings) record(reader, f);
        s.next = result.stopped === undefined ? end : result.stopped + 1;
        // About two seconds per batch, so the readers share the time.
        if (o.duration > 0 && result.stopped === undefined) s.batch = Math.max(10, Math.min(20000, Math.round((result.completed / Math.max(ms, 1)) * 2000)));
      }
    }
    collectStray(worker);
  } finally {
    worker?.close();
    fs.rmSync(tmp, { recursive: true, force: true });
  }
  const summary = {
    seed: o.seed,
    start: o.start,
    seconds: Math.round((Date.now() - started) / 1000),
    total: readers.reduce((n, r) => n + stats[r].inputs, 0),
    readers: Object.fromEntries(readers.map((r) => [r, { inputs: stats[r].inputs, next: stats[r].next, perSecond: Math.round((stats[r].inputs / Math.max(1, stats[r].ms)) * 1000), outcomes: stats[r].outcomes }])),
    ...listedFindings(findings),
  };
  if (o.log) fs.appendFileSync(o.log, `${JSON.stringify({ date: new Date().toISOString(), ...summary })}\n`);
  if (o.json) process.stdout.write(`${JSON.stringify(summary)}\n`);
  else {
    process.stdout.write(`seed ${summary.seed}, ${summary.total} inputs in ${summary.seconds} s\n`);
    for (const [r, s] of Object.entries(summary.readers)) process.stdout.write(`  ${r}: ${s.inputs} inputs (${s.perSecond}/s) ${JSON.stringify(s.outcomes)}\n`);
    process.stdout.write(`findings: ${findings.length} ${JSON.stringify(summary.findingCounts)}\n`);
    for (const f of summary.findings) process.stdout.write(`  ${f.reader} #${f.index} ${f.kind}: ${f.message}${f.file ? ` -> ${f.file}` : ''}\n`);
  }
  process.exitCode = findings.length > 0 ? 1 : 0;
}

main().catch((error) => {
  process.stderr.write(`${error.stack ?? error}\n`);
  process.exitCode = 2;
});
