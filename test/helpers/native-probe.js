'use strict';
// Child-process side of test/helpers/built-package.ts: runs one scenario against the built
// package (dist/) in a fresh process, because the addon keeps the CUDA driver and libnvinfer
// it opened for the life of the process. Prints {ok, value} or {ok, error} as JSON on stdout.
//
//   node native-probe.js devices           devices()
//   node native-probe.js tensorrt          findTensorRTLibrary()
//   node native-probe.js load-addon [root] loadAddon() from dist/native.js, optionally {root}
//   node native-probe.js lazy-devices      require dist/index.js, then devices() twice
//   node native-probe.js workers           devices() on the main thread, in two workers at
//                                          once, then on the main thread again
const path = require('node:path');
const { Worker, isMainThread, parentPort, workerData } = require('node:worker_threads');

const dist = path.join(__dirname, '..', '..', 'dist');

function serializeError(error) {
  // Resolved lazily: a failed import must still be reportable.
  let base;
  try {
    base = require(path.join(dist, 'errors.js')).TensorRTNodeError;
  } catch {
    base = undefined;
  }
  return {
    name: error && error.name,
    code: error && error.code,
    message: error && error.message !== undefined ? error.message : String(error),
    details: error && error.details,
    isTensorRTNodeError: base !== undefined && error instanceof base,
    hasCause: error !== null && typeof error === 'object' && error.cause !== undefined,
  };
}

async function settle(fn) {
  try {
    return { ok: true, value: await fn() };
  } catch (error) {
    return { ok: false, error: serializeError(error) };
  }
}

function runWorker() {
  return new Promise((resolve, reject) => {
    const worker = new Worker(__filename, { workerData: { mode: 'devices' } });
    let message;
    worker.once('message', (m) => (message = m));
    worker.once('error', reject);
    worker.once('exit', (exitCode) => resolve({ exitCode, result: message }));
  });
}

const modes = {
  devices: () => settle(() => require(dist).devices()),
  tensorrt: () => settle(() => require(dist).findTensorRTLibrary()),
  'load-addon': (root) =>
    settle(() => {
      const { path: file, source, info } = require(path.join(dist, 'native.js')).loadAddon(root ? { root } : {});
      return { path: file, source, info };
    }),
  'lazy-devices': async () => {
    const imported = await settle(() => Object.keys(require(dist)).length);
    let first;
    let second;
    const pkg = imported.ok ? require(dist) : undefined;
    const run = async () => {
      try {
        await pkg.devices();
        return undefined;
      } catch (error) {
        return error;
      }
    };
    if (pkg) {
      first = await run();
      second = await run();
    }
    return {
      imported,
      first: first === undefined ? null : serializeError(first),
      // getAddon() remembers a load failure: the same error object is rethrown.
      sameErrorObject: first !== undefined && first === second,
    };
  },
  workers: async () => {
    const before = await modes.devices();
    const workers = await Promise.all([runWorker(), runWorker()]);
    const after = await modes.devices();
    return { before, workers, after };
  },
};

if (isMainThread) {
  const [mode, ...args] = process.argv.slice(2);
  if (!(mode in modes)) {
    process.stderr.write(`unknown mode ${mode}\n`);
    process.exit(64);
  }
  modes[mode](...args).then((out) => process.stdout.write(JSON.stringify(out)));
} else {
  modes[workerData.mode]().then((out) => parentPort.postMessage(out));
}
