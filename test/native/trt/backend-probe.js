'use strict';
// Child process of test/native/trt/backend.test.ts: drives the tensorrt backend of dist/ with
// the addon TENSORRT_NODE_BINARY names (built with TensorRT) and the libnvinfer
// TENSORRT_NODE_TENSORRT_LIBRARY names (the recording double). Prints one JSON result.
//   node backend-probe.js SCENARIO
const path = require('node:path');

const dist = path.join(__dirname, '..', '..', '..', 'dist');
const { Network } = require(path.join(dist, 'network'));
const { getBackend, resolveBackend, DEFAULT_BUILD_CONFIG } = require(path.join(dist, 'backends'));
const { tensorrtStatus } = require(path.join(dist, 'tensorrt'));

const CPU = { type: 'cpu', gpuId: null, dlaCore: null, allowGpuFallback: false, computeCapability: null, deviceName: null, hardwareCompatibility: 'none', backend: 'tensorrt', backendVersion: 'x' };

function network() {
  const net = new Network('probe');
  const x = net.addInput('x', 'float32', [-1, 4], [{ min: [1, 4], opt: [2, 4], max: [8, 4] }]);
  net.markOutput(net.add1({ kind: 'activation', type: 'relu' }, [x], 'relu'), 'y');
  return net;
}

const error = (e) => ({ name: e && e.name, code: e && e.code, message: e && e.message, details: e && e.details });

async function main(scenario) {
  const backend = getBackend('tensorrt');
  if (scenario === 'status') {
    const before = backend.version;
    const available = await backend.available();
    return { implemented: backend.implemented, status: await tensorrtStatus(), available, resolved: (await resolveBackend('auto')).backend.name, versionBefore: before, versionAfter: backend.version };
  }
  if (scenario === 'build') {
    const logs = [];
    const engine = await backend.build(network(), { ...DEFAULT_BUILD_CONFIG, precisions: ['fp32', 'tf32'], optimizationLevel: 4 }, CPU);
    const signature = backend.inspect(engine);
    const loaded = await backend.load(engine, null);
    const result = { bytes: engine.byteLength, signature, residency: loaded.residency, logs };
    loaded.dispose();
    return result;
  }
  if (scenario === 'events' || scenario === 'abort' || scenario === 'throw') {
    // One timeline of what reaches JS: log records, build phases, a setImmediate queued before
    // the build, and the build's settlement. With a signal every TensorRT step waits for this
    // thread's answer, so this thread runs while the build is in flight.
    const timeline = [];
    const controller = new AbortController();
    const context = {
      log: (level, message) => timeline.push({ log: level, message }),
      progress: (event) => {
        timeline.push({ progress: event });
        if (event.state === 'step' && scenario === 'abort') controller.abort();
        if (event.state === 'step' && scenario === 'throw') throw new Error('progress callback failed');
      },
      signal: controller.signal,
    };
    setImmediate(() => timeline.push('immediate'));
    try {
      const engine = await backend.build(network(), DEFAULT_BUILD_CONFIG, CPU, context);
      timeline.push({ resolved: engine.byteLength > 0 });
    } catch (e) {
      timeline.push({ rejected: error(e) });
    }
    return { timeline };
  }
  if (scenario === 'build-twice') {
    // With TENSORRT_NODE_ENGINE_CACHE set: the second build of the same network comes from the cache.
    const a = await backend.build(network(), DEFAULT_BUILD_CONFIG, CPU);
    const b = await backend.build(network(), DEFAULT_BUILD_CONFIG, CPU);
    return { same: Buffer.from(a).equals(Buffer.from(b)), bytes: a.byteLength };
  }
  if (scenario === 'choose') {
    // What compile() logs when it resolves `auto` (lib/compile/pipeline.ts), and a named tensorrt.
    const { chooseBackend } = require(path.join(dist, 'compile', 'pipeline'));
    const logs = [];
    const chosen = await chooseBackend({ backend: 'auto', build: DEFAULT_BUILD_CONFIG }, (level, message) => logs.push({ level, message }));
    const named = await chooseBackend({ backend: 'tensorrt', build: DEFAULT_BUILD_CONFIG }, () => undefined).catch(error);
    return { backend: chosen.backend.name, logs, named, status: await tensorrtStatus() };
  }
  if (scenario === 'auto') {
    const r = await resolveBackend('auto');
    return { backend: r.backend.name, refusals: r.refusals };
  }
  throw new Error(`unknown scenario ${scenario}`);
}

main(process.argv[2]).then(
  (value) => process.stdout.write(JSON.stringify({ ok: true, value }) + '\n'),
  (e) => process.stdout.write(JSON.stringify({ ok: false, error: error(e) }) + '\n'),
);
