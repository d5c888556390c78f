'use strict';
// Compile a model, run it, save the compiled program to a .trtp file, load it back and run
// it again; both results are checked against the outputs PyTorch computed for the same input.
//
//   node examples/compile-run-save/main.js [FIXTURE_DIR]
//
// FIXTURE_DIR holds model.onnx, meta.json and the raw input/output tensors (the layout of the
// repository's test/fixtures/*); it defaults to test/fixtures/mobilenet_v3_small.
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { compile, loadProgram, Tensor } = require('tensorrt-node');

const fixtureDir = path.resolve(process.argv[2] ?? path.join(__dirname, '..', '..', 'test', 'fixtures', 'mobilenet_v3_small'));

/** A raw little-endian float32 tensor file described in the fixture's meta.json. */
function readTensor(entry) {
  if (entry.dtype !== 'float32') throw new Error(`this example reads float32 tensors only, not ${entry.dtype}`);
  const bytes = fs.readFileSync(path.join(fixtureDir, entry.file));
  const data = new Float32Array(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength));
  return new Tensor('float32', entry.shape, data);
}

/**
 * Fixture tolerance for float32 (test/fixtures/README.md: rtol 1e-4, atol 1e-5), with atol
 * scaled by the largest expected magnitude: the MobileNet fixture's outputs are ~1e-9 (random
 * weights), so an absolute 1e-5 alone would accept anything.
 */
function close(actual, expected) {
  const scale = expected.data.reduce((m, x) => Math.max(m, Math.abs(x)), 0);
  return actual.data.length === expected.data.length && expected.data.every((e, i) => Math.abs(actual.data[i] - e) <= 1e-5 * scale + 1e-4 * Math.abs(e));
}

function maxAbsDiff(a, b) {
  let max = 0;
  for (let i = 0; i < a.data.length; i++) max = Math.max(max, Math.abs(a.data[i] - b.data[i]));
  return max;
}

async function main() {
  if (!fs.existsSync(path.join(fixtureDir, 'meta.json'))) {
    console.error(`usage: node ${path.basename(__filename)} FIXTURE_DIR (no meta.json in ${fixtureDir})`);
    process.exitCode = 2;
    return;
  }
  const meta = JSON.parse(fs.readFileSync(path.join(fixtureDir, 'meta.json'), 'utf8'));
  const input = readTensor(meta.inputs[0]);
  const expected = readTensor(meta.outputs[0]);

  // The ONNX file has a dynamic batch dim: give the shape to compile for.
  const program = await compile(path.join(fixtureDir, meta.files.onnx), {
    inputs: [{ shape: input.shape }],
  });
  const converted = program.report.ops.filter((op) => op.converted).length;
  // The engine segments are built by the first usable backend (tensorrt, cuda, onnxruntime), else the CPU reference backend.
  console.log(`compiled: ${converted}/${program.report.ops.length} ops converted, in engine segments built by the ${program.backend} backend`);
  console.log(`signature: ${program}`);

  const [output] = await program.run([input]);
  const diff = maxAbsDiff(output, expected);
  const scale = Math.max(...expected.data.map(Math.abs));
  console.log(`run: output [${output.shape.join(", ")}], max |diff| vs PyTorch = ${diff.toExponential(2)} (largest output ${scale.toExponential(2)})`);

  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tensorrt-node-example-'));
  const file = path.join(dir, `${meta.name}.trtp`);
  try {
    await program.save(file);
    await program.dispose();
    console.log(`saved ${path.basename(file)} (${fs.statSync(file).size} bytes)`);

    const loaded = await loadProgram(file);
    const [again] = await loaded.run([input]);
    await loaded.dispose();
    const reloadDiff = maxAbsDiff(again, output);
    console.log(`reloaded: max |diff| vs the first run = ${reloadDiff}`);

    const ok = close(output, expected) && reloadDiff === 0;
    console.log(ok ? 'OK: matches PyTorch, before and after save/load' : 'MISMATCH');
    if (!ok) process.exitCode = 1;
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((error) => {
  // Library errors carry a stable code (E_BAD_MODEL, E_BAD_INPUT, ...).
  console.error(error.code ? `${error.code}: ${error.message}` : error);
  process.exitCode = 1;
});
