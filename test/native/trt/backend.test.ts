/**
 * The tensorrt backend end to end through N-API: an addon built with the TensorRT headers
 * (in a temp copy; the package's own addon is built without them) and the recording TensorRT
 * double as libnvinfer, driven in child processes (the addon keeps the libnvinfer it opened
 * for the life of the process). Covers availability, `auto` picking tensorrt or passing it
 * over with its reasons, build → engine bytes → inspect → load, and the typed errors.
 * Running an engine needs a GPU (test/gpu/tensorrt.check.js).
 */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { buildAddonWithTensorRT, describeWithTensorRT, type Call } from './harness';


interface Outcome {
  ok: boolean;
  value?: Record<string, unknown>;
  error?: { name: string; code: string; message: string; details: Record<string, unknown> };
}

let addon: string;

describeWithTensorRT(
  'the tensorrt backend through the addon, against the recording double',
  (ctx) => {
  function probe(scenario: string, env: Record<string, string> = {}): { outcome: Outcome; calls: Call[] } {
    const log = path.join(ctx.tmp, `${scenario}.jsonl`);
    fs.rmSync(log, { force: true });
    const r = spawnSync(process.execPath, [path.join(__dirname, 'backend-probe.js'), scenario], {
      encoding: 'utf8',
      env: { ...process.env, TENSORRT_NODE_BINARY: addon, TENSORRT_NODE_TENSORRT_LIBRARY: ctx.built.library, FAKE_TRT_LOG: log, ...env },
      timeout: 60_000,
    });
    const line = r.stdout.trim().split('\n').pop() ?? '';
    if (line === '') throw new Error(`probe ${scenario} printed nothing (status ${r.status}): ${r.stderr}`);
    const calls = fs.existsSync(log) ? fs.readFileSync(log, 'utf8').trim().split('\n').filter(Boolean).map((l) => JSON.parse(l) as Call) : [];
    return { outcome: JSON.parse(line) as Outcome, calls };
  }

  it('reports the backend built in and TensorRT found, and `auto` picks it', () => {
    const { outcome } = probe('status');
    expect(outcome).toMatchObject({
      ok: true,
      value: { implemented: true, status: { library: { found: true, path: ctx.built.library, version: '10.16.0' }, backendBuilt: true, available: true }, available: { ok: true }, resolved: 'tensorrt', versionBefore: 'none', versionAfter: '10.16.0' },
    });
  });

  it('builds engine bytes that inspect and load, replaying the network and configuring the builder', () => {
    const { outcome, calls } = probe('build');
    expect(outcome).toMatchObject({ ok: true, value: { signature: { inputNames: ['x'], outputNames: ['y'] }, residency: 'device' } });
    const m = (name: string): Call[] => calls.filter((c) => c.m === name);
    expect(m('VNetworkDefinition::addActivation').map((c) => c.args)).toEqual([['%x', 0]]);
    expect(m('VBuilderConfig::setBuilderOptimizationLevel').map((c) => c.args)).toEqual([[4]]);
    expect(m('VOptimizationProfile::setDimensions').map((c) => c.args[2])).toEqual([[1, 4], [2, 4], [8, 4]]);
    expect(m('VBuilder::buildSerializedNetwork')).toHaveLength(1);
    expect(m('VRuntime::deserializeCudaEngine')).toHaveLength(1);
  });

  it('caches built engines by network, settings, TensorRT version and device, and keeps the timing cache beside them', () => {
    const cache = path.join(ctx.tmp, 'engine-cache');
    const { outcome, calls } = probe('build-twice', { TENSORRT_NODE_ENGINE_CACHE: cache });
    expect(outcome).toMatchObject({ ok: true, value: { same: true } });
    expect(calls.filter((c) => c.m === 'VBuilder::buildSerializedNetwork')).toHaveLength(1);
    expect(fs.readdirSync(cache).filter((f) => f.endsWith('.trtengine'))).toHaveLength(1);
    // A new timing cache serializes, in the double, to this marker; the next build starts from it.
    expect(fs.readFileSync(path.join(cache, 'timing.cache'), 'utf8')).toBe('FAKE-TIMING-CACHE');
    const again = probe('build', { TENSORRT_NODE_ENGINE_CACHE: cache });
    expect(again.outcome.ok).toBe(true);
    expect(again.calls.filter((c) => c.m === 'VBuilder::buildSerializedNetwork')).toHaveLength(1);
    expect(again.calls.find((c) => c.m === 'VBuilderConfig::createTimingCache')!.args).toEqual([{ size: 17, fnv: expect.any(String) }, 17]);
  });

  it('a library TensorRT 10.8 is refused with its reason, and `auto` passes over tensorrt saying why', () => {
    const { outcome } = probe('auto', { FAKE_TRT_LIB_VERSION: '100800' });
    expect(outcome.ok).toBe(true);
    const value = outcome.value as { backend: string; refusals: Array<{ backend: string; reasons: string[] }> };
    expect(value.backend).not.toBe('tensorrt');
    expect(value.refusals[0]).toEqual({ backend: 'tensorrt', reasons: [expect.stringContaining('is TensorRT 10.8.0, but TensorRT 10.8 changed')] });
  });

  it('without libnvinfer, building is E_TENSORRT_MISSING saying what was searched and how to install TensorRT', () => {
    const missing = path.join(ctx.tmp, 'no-such', 'libnvinfer.so.10');
    const { outcome } = probe('build', { TENSORRT_NODE_TENSORRT_LIBRARY: missing });
    expect(outcome).toMatchObject({ ok: false, error: { name: 'TensorRTMissingError', code: 'E_TENSORRT_MISSING' } });
    expect(outcome.error!.message).toBe(
      `the tensorrt backend cannot build engines here: ${missing} not found; searched ${missing} (cannot open shared object file: No such file or directory); ` +
        'set TENSORRT_NODE_TENSORRT_LIBRARY to the path of libnvinfer.so.10, or install TensorRT 10 (apt install libnvinfer10, or the TensorRT tar from ' +
        'developer.nvidia.com/tensorrt with its lib folder on LD_LIBRARY_PATH). Until then, `auto` takes the next backend.',
    );
  });

  it('without libnvinfer, `auto` takes the next backend and says so once; `tensorrt` by name is E_TENSORRT_MISSING with the reason', () => {
    const missing = path.join(ctx.tmp, 'no-such', 'libnvinfer.so.10');
    const { outcome } = probe('choose', { TENSORRT_NODE_TENSORRT_LIBRARY: missing });
    const value = outcome.value as { backend: string; logs: Array<{ level: string; message: string }>; named: { code: string; message: string }; status: { library: { reason: string } } };
    expect(value.backend).not.toBe('tensorrt');
    const reason = value.status.library.reason;
    expect(reason).toMatch(/^\/.*libnvinfer\.so\.10 not found; searched .*; set TENSORRT_NODE_TENSORRT_LIBRARY to the path of libnvinfer\.so\.10, or install TensorRT 10 /);
    expect(value.logs.filter((l) => l.message.startsWith('backend tensorrt'))).toEqual([{ level: 'info', message: `backend tensorrt is not usable here: ${reason}` }]);
    expect(value.logs.filter((l) => l.message.startsWith('engine segments run on the'))).toEqual([
      { level: 'info', message: `engine segments run on the ${value.backend} backend (\`tensorrt-node doctor\` says why not the others)` },
    ]);
    expect(value.named).toMatchObject({ code: 'E_TENSORRT_MISSING' });
    expect(value.named.message).toContain(`backend "tensorrt" was asked for, but it is not usable here (tensorrt: ${reason})`);
  });

  it('with the library present, the same probe takes tensorrt and logs no refusal of it', () => {
    const { outcome } = probe('choose');
    expect(outcome.value).toMatchObject({ backend: 'tensorrt', logs: [], named: { backend: { name: 'tensorrt' }, refusals: [] }, status: { library: { found: true, path: ctx.built.library } } });
  });

  it('TensorRT’s log and progress reach the build context in order, on the JS thread, while the build runs', () => {
    const { outcome } = probe('events');
    const timeline = (outcome.value as { timeline: unknown[] }).timeline;
    const start = (phase: string, steps: number, parent?: string): unknown => ({ progress: { state: 'start', phase, ...(parent === undefined ? {} : { parent }), step: 0, steps } });
    const step = (phase: string, n: number, steps: number, parent?: string): unknown => ({ progress: { state: 'step', phase, ...(parent === undefined ? {} : { parent }), step: n, steps } });
    const end = (phase: string, steps: number, parent?: string): unknown => ({ progress: { state: 'end', phase, ...(parent === undefined ? {} : { parent }), step: steps, steps } });
    const progress = timeline.filter((t) => typeof t === 'object' && t !== null && 'progress' in t);
    expect(progress).toEqual([
      start('Building engine', 2),
      start('Layer fusion', 2, 'Building engine'),
      step('Layer fusion', 1, 2, 'Building engine'),
      step('Layer fusion', 2, 2, 'Building engine'),
      end('Layer fusion', 2, 'Building engine'),
      step('Building engine', 1, 2),
      start('Tactic selection', 3, 'Building engine'),
      step('Tactic selection', 1, 3, 'Building engine'),
      step('Tactic selection', 2, 3, 'Building engine'),
      step('Tactic selection', 3, 3, 'Building engine'),
      end('Tactic selection', 3, 'Building engine'),
      step('Building engine', 2, 2),
      end('Building engine', 2),
    ]);
    // kINFO → debug, kWARNING → warn, kVERBOSE filtered before it crosses threads; all before the first phase.
    const logs = timeline.filter((t) => typeof t === 'object' && t !== null && 'log' in t && String((t as unknown as { message: string }).message).startsWith('TensorRT '));
    expect(logs).toEqual([
      { log: 'debug', message: 'TensorRT info: fake build: replayed network accepted' },
      { log: 'warn', message: 'TensorRT warning: fake build: a warning line' },
    ]);
    expect(timeline.indexOf(logs[1])).toBeLessThan(timeline.indexOf(progress[0]));
    // Every event arrives before the build settles, and the event loop turned while it ran.
    expect(timeline[timeline.length - 1]).toEqual({ resolved: true });
    expect(timeline.indexOf('immediate')).toBeGreaterThanOrEqual(0);
    expect(timeline.indexOf('immediate')).toBeLessThan(timeline.length - 1);
  });

  it('aborting the signal from JS makes the next stepComplete answer false: the build stops with E_ABORTED', () => {
    const { outcome, calls } = probe('abort');
    const timeline = (outcome.value as { timeline: Array<Record<string, unknown>> }).timeline;
    const steps = timeline.filter((t) => (t.progress as { state?: string } | undefined)?.state === 'step');
    // Aborted inside the first step's callback: that step's answer is already false; TensorRT ends its phases.
    expect(steps).toEqual([{ progress: { state: 'step', phase: 'Layer fusion', parent: 'Building engine', step: 1, steps: 2 } }]);
    expect(timeline.filter((t) => (t.progress as { state?: string } | undefined)?.state === 'end').map((t) => (t.progress as { phase: string }).phase)).toEqual(['Layer fusion', 'Building engine']);
    expect(timeline[timeline.length - 1]).toEqual({
      rejected: { name: 'AbortedError', code: 'E_ABORTED', message: 'the TensorRT engine build of network "probe" was aborted', details: {} },
    });
    expect(calls.filter((c) => c.m === 'VBuilder::buildSerializedNetwork')).toHaveLength(1);
  });

  it('a progress callback that throws stops the build, and the build rejects with its error', () => {
    const { outcome } = probe('throw');
    const timeline = (outcome.value as { timeline: Array<Record<string, unknown>> }).timeline;
    expect(timeline.filter((t) => (t.progress as { state?: string } | undefined)?.state === 'step')).toHaveLength(1);
    expect(timeline[timeline.length - 1]).toEqual({ rejected: { name: 'Error', message: 'progress callback failed' } });
  });

  it('a build TensorRT refuses is E_TENSORRT with TensorRT’s message', () => {
    const { outcome } = probe('build', { FAKE_TRT_FAIL: 'VBuilder::buildSerializedNetwork' });
    expect(outcome).toMatchObject({
      ok: false,
      error: { name: 'TensorRTError', code: 'E_TENSORRT', message: 'TensorRT failed at buildSerializedNetwork(): fake failure injected in VBuilder::buildSerializedNetwork' },
    });
  });

  it('a plan TensorRT cannot deserialize is E_TENSORRT with its message and the TensorRT version that built it', () => {
    const { outcome } = probe('build', { FAKE_TRT_FAIL: 'VRuntime::deserializeCudaEngine' });
    expect(outcome).toMatchObject({ ok: false, error: { code: 'E_TENSORRT' } });
    expect(outcome.error!.message).toMatch(/^TensorRT could not deserialize the engine \(\d+ bytes\): fake failure injected in VRuntime::deserializeCudaEngine \(the engine was built with TensorRT 10\.16\.0\)$/);
  });
  },
  (ctx) => {
    addon = buildAddonWithTensorRT(ctx.include);
  },
  600_000,
);
