// Compile, run, save and reload a model from TypeScript as an ES module: the same steps as
// ../compile-run-save (CommonJS), here with the torch.export archive of a small MLP whose
// batch dim is dynamic, so one compiled program serves every batch size in its range.
//
//   npx tsc -p examples/typescript-esm && node examples/typescript-esm/dist/main.mjs [FIXTURE_DIR]
//
// FIXTURE_DIR holds model.pt2, meta.json and raw float32 tensors (test/fixtures/mlp by default).
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { compile, formatShape, loadProgram, Tensor, TensorRTNodeError, type Program } from 'tensorrt-node';

interface TensorEntry {
  file: string;
  dtype: string;
  shape: number[];
}
interface FixtureMeta {
  name: string;
  inputs: TensorEntry[];
  outputs: TensorEntry[];
  files: { pt2: string; onnx: string };
}

const fixtureDir = path.resolve(process.argv[2] ?? path.join(import.meta.dirname, '..', '..', '..', 'test', 'fixtures', 'mlp'));

function readTensor(entry: TensorEntry): Tensor {
  if (entry.dtype !== 'float32') throw new Error(`this example reads float32 tensors only, not ${entry.dtype}`);
  const bytes = fs.readFileSync(path.join(fixtureDir, entry.file));
  return new Tensor('float32', entry.shape, new Float32Array(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength)));
}

/** Fixture tolerance for float32 (test/fixtures/README.md): rtol 1e-4, atol 1e-5. */
function close(actual: Tensor, expected: Tensor): boolean {
  const a = actual.data as Float32Array;
  const e = expected.data as Float32Array;
  return a.length === e.length && e.every((x, i) => Math.abs(a[i]! - x) <= 1e-5 + 1e-4 * Math.abs(x));
}

/** Row `i` of a batched tensor, as a batch of one. */
function row(t: Tensor, i: number): Tensor {
  const per = t.data.length / t.shape[0]!;
  return new Tensor(t.dtype, [1, ...t.shape.slice(1)], (t.data as Float32Array).slice(i * per, (i + 1) * per));
}

async function check(program: Program, input: Tensor, expected: Tensor): Promise<boolean> {
  const [all] = await program.run([input]);
  // One program, several batch sizes: the whole batch, then each row alone, concurrently.
  const singles = await Promise.all(Array.from({ length: input.shape[0]! }, (_, i) => program.run([row(input, i)])));
  return close(all!, expected) && singles.every(([out], i) => close(out!, row(expected, i)));
}

if (!fs.existsSync(path.join(fixtureDir, 'meta.json'))) {
  console.error(`usage: node main.mjs FIXTURE_DIR (no meta.json in ${fixtureDir})`);
  process.exit(2);
}
const meta = JSON.parse(fs.readFileSync(path.join(fixtureDir, 'meta.json'), 'utf8')) as FixtureMeta;
const input = readTensor(meta.inputs[0]!);
const expected = readTensor(meta.outputs[0]!);
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tensorrt-node-example-'));
try {
  // No shapes given: the batch range comes from the archive's range_constraints.
  const program = await compile(path.join(fixtureDir, meta.files.pt2));
  const inputSpec = program.inputs.map((io) => `${io.name}: ${io.dtype}${formatShape(io.shape)}`).join(', ');
  console.log(`compiled (${program.backend} backend): ${inputSpec}`);
  const fresh = await check(program, input, expected);
  const file = path.join(dir, `${meta.name}.trtp`);
  await program.save(file);
  await program.dispose();

  const loaded = await loadProgram(file);
  const reloaded = await check(loaded, input, expected);
  await loaded.dispose();
  console.log(`compiled: ${fresh ? 'matches' : 'DOES NOT match'} PyTorch; reloaded from ${path.basename(file)}: ${reloaded ? 'matches' : 'DOES NOT match'} PyTorch`);
  if (!fresh || !reloaded) process.exitCode = 1;
} catch (error) {
  if (!(error instanceof TensorRTNodeError)) throw error;
  console.error(`${error.code}: ${error.message}`);
  process.exitCode = 1;
} finally {
  fs.rmSync(dir, { recursive: true, force: true });
}
