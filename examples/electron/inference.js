'use strict';
// The utility process (Electron's utilityProcess.fork): owns the compiled program. It keeps a
// compiled copy in userData, keyed by the model file, and recompiles when that copy cannot be
// used here (another GPU, another TensorRT, a library update: E_NO_COMPATIBLE_DEVICE,
// E_TENSORRT_MISSING, E_BAD_PROGRAM).
const fs = require('node:fs');
const path = require('node:path');
const { compile, loadProgram, Tensor } = require('tensorrt-node');

const [modelDir, userData] = process.argv.slice(2);
const cacheFile = path.join(userData, 'mobilenet_v3_small.trtp');
const RECOMPILE = new Set(['E_NO_COMPATIBLE_DEVICE', 'E_TENSORRT_MISSING', 'E_BAD_PROGRAM']);

async function open() {
  if (fs.existsSync(cacheFile)) {
    try {
      return { program: await loadProgram(cacheFile), how: `loaded ${cacheFile}` };
    } catch (error) {
      if (!RECOMPILE.has(error.code)) throw error;
    }
  }
  const meta = JSON.parse(fs.readFileSync(path.join(modelDir, 'meta.json'), 'utf8'));
  const program = await compile(path.join(modelDir, 'model.onnx'), { inputs: [{ shape: meta.inputs[0].shape }] });
  fs.mkdirSync(userData, { recursive: true });
  await program.save(cacheFile);
  return { program, how: `compiled and saved ${cacheFile}` };
}

const opened = open();

async function handle({ type }) {
  const { program, how } = await opened;
  switch (type) {
    case 'ready':
      return { how, backend: program.backend };
    case 'classify-sample': {
      const meta = JSON.parse(fs.readFileSync(path.join(modelDir, 'meta.json'), 'utf8'));
      const bytes = fs.readFileSync(path.join(modelDir, meta.inputs[0].file));
      const input = new Tensor('float32', meta.inputs[0].shape, new Float32Array(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength)));
      const [scores] = await program.run([input]);
      const row = Array.from(scores.data.subarray(0, scores.shape[1]));
      const index = row.indexOf(Math.max(...row));
      return { top: { index, score: row[index] } };
    }
    case 'shutdown':
      await program.dispose();
      setImmediate(() => process.exit(0));
      return {};
    default:
      throw Object.assign(new Error(`unknown request ${type}`), { code: 'E_UNKNOWN_REQUEST' });
  }
}

process.parentPort.on('message', ({ data }) => {
  handle(data).then(
    (result) => process.parentPort.postMessage({ id: data.id, result }),
    (error) => process.parentPort.postMessage({ id: data.id, error: { code: error.code, message: error.message } }),
  );
});
