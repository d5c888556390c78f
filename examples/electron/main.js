'use strict';
// Electron main process: starts the inference utility process, asks it for one prediction,
// prints it, and shuts it down on quit. No window: the point is the process layout.
//
// compile() runs its pipeline (import, lowering, partitioning, engine builds) on a compile
// worker thread, and Program.run() most programs on a worker thread, so neither blocks the
// event loop. But compile() falls back to the calling thread when converters were registered
// (the worker cannot run them) or its worker script is missing, a real TensorRT engine build
// takes seconds to minutes (which would freeze every window on the main process), and GPU
// programs run on the calling thread; a utility process keeps all of that, and any native
// crash, away from the main process.
const path = require('node:path');
const { app, utilityProcess } = require('electron');

/** Packaged: models are extraResources beside app.asar; in development, the repository's fixture. */
function modelDir() {
  return app.isPackaged ? path.join(process.resourcesPath, 'model') : path.join(__dirname, '..', '..', 'test', 'fixtures', 'mobilenet_v3_small');
}

function startInference() {
  const child = utilityProcess.fork(path.join(__dirname, 'inference.js'), [modelDir(), app.getPath('userData')], {
    serviceName: 'tensorrt-node inference',
    stdio: 'inherit',
  });
  const pending = new Map();
  let nextId = 0;
  child.on('message', (reply) => {
    const p = pending.get(reply.id);
    if (!p) return;
    pending.delete(reply.id);
    if (reply.error) p.reject(Object.assign(new Error(reply.error.message), { code: reply.error.code }));
    else p.resolve(reply.result);
  });
  child.on('exit', (code) => {
    for (const p of pending.values()) p.reject(new Error(`the inference process exited with code ${code}`));
    pending.clear();
  });
  const request = (type, payload) =>
    new Promise((resolve, reject) => {
      const id = nextId++;
      pending.set(id, { resolve, reject });
      child.postMessage({ id, type, payload });
    });
  return { child, request };
}

app.whenReady().then(async () => {
  const inference = startInference();
  try {
    const ready = await inference.request('ready');
    console.log(`inference process: ${ready.how} (${ready.backend} backend)`);
    const { top } = await inference.request('classify-sample');
    console.log(`sample image 0: class ${top.index} (score ${top.score.toExponential(3)})`);
  } catch (error) {
    console.error(error.code ? `${error.code}: ${error.message}` : error);
    process.exitCode = 1;
  }
  // Let the utility process dispose of its program before the app exits.
  await inference.request('shutdown').catch(() => undefined);
  app.quit();
});
