/**
 * Reads the PyTorch-produced fixtures in test/fixtures/ (see its README.md): meta.json plus
 * raw little-endian tensors. These outputs are the independent reference for model tests.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';

import { dtypeInfo, type DType } from '../../lib/ir/dtype';
import { readNumbers } from '../../lib/kernels/access';
import { shapeSize, Tensor } from '../../lib/ir/tensor';
import { FP32, type Tolerance } from './compare';

export const FIXTURES = path.join(__dirname, '..', 'fixtures');

/** The fixtures exported both ways (model.onnx and model.pt2). */
export const ONNX_FIXTURES = ['mlp', 'encoder', 'mobilenet_v3_small', 'squeezenet1_1'] as const;

/** Every fixture with a model.pt2: the torch.export-only ones (complex rotary embeddings), then ONNX_FIXTURES. */
export const PT2_FIXTURES = [
  'rotary_only',
  'llama_rotary_complex_input',
  'llama_rotary_complex_input_dynamic',
  'llama_tokens_complex_buffer',
  ...ONNX_FIXTURES,
] as const;

interface TensorMeta {
  file: string;
  dtype: DType;
  shape: number[];
}

export interface FixtureCase {
  inputs: Tensor[];
  outputs: Tensor[];
}

export interface Fixture {
  name: string;
  dir: string;
  files: { pt2?: string; onnx?: string };
  /** The main case, then `second_case` when the model was run at a second size. */
  cases: FixtureCase[];
}

/** A tensor from a raw .bin file (copied into an aligned buffer). */
export function readBin(file: string, dtype: DType, shape: number[]): Tensor {
  const bytes = fs.readFileSync(file);
  const info = dtypeInfo(dtype);
  const expected = shapeSize(shape) * info.itemBytes;
  if (bytes.length !== expected) throw new Error(`${file}: ${bytes.length} bytes, ${dtype}[${shape.join(', ')}] needs ${expected}`);
  const copy = new Uint8Array(expected);
  copy.set(bytes);
  return new Tensor(dtype, shape, new info.storage(copy.buffer, 0, shapeSize(shape) * info.lanes));
}

/**
 * A fixture can only catch a wrong answer when its outputs are large against the tolerance
 * they are compared with: outputs of 1e-9 under atol 1e-5 let an all-zero or sign-flipped
 * result pass. Each float output must reach this many times `atol` somewhere.
 */
export const DISCRIMINATION = 1000;

/** Throws unless some element of `t` reaches DISCRIMINATION × `tol.atol` in absolute value. */
export function assertDiscriminates(t: Tensor, tol: Tolerance, label: string): void {
  const kind = dtypeInfo(t.dtype).kind;
  if (kind !== 'float' && kind !== 'complex') return;
  let largest = 0;
  for (const x of readNumbers(t)) if (Math.abs(x) > largest) largest = Math.abs(x);
  if (!(largest >= DISCRIMINATION * tol.atol)) {
    throw new Error(
      `${label}: largest |output| ${largest.toExponential(2)} is below ${DISCRIMINATION} × atol ${tol.atol}; ` +
        'a fixture this small cannot tell a wrong answer from the right one (regenerate it with larger outputs)',
    );
  }
}

/**
 * The fixture in `dir` (meta.json and its tensors). `tol` is the tolerance its outputs will be
 * compared with; every output of every case must be able to fail under it.
 */
export function loadFixtureFrom(dir: string, tol: Tolerance = FP32): Fixture {
  const meta = JSON.parse(fs.readFileSync(path.join(dir, 'meta.json'), 'utf8')) as {
    inputs: TensorMeta[];
    outputs: TensorMeta[];
    files: { pt2?: string; onnx?: string };
    second_case?: { inputs: TensorMeta[]; outputs: TensorMeta[] };
  };
  const read = (m: TensorMeta): Tensor => readBin(path.join(dir, m.file), m.dtype, m.shape);
  const cases: FixtureCase[] = [{ inputs: meta.inputs.map(read), outputs: meta.outputs.map(read) }];
  if (meta.second_case) cases.push({ inputs: meta.second_case.inputs.map(read), outputs: meta.second_case.outputs.map(read) });
  const name = path.basename(dir);
  cases.forEach((c, k) => c.outputs.forEach((t, i) => assertDiscriminates(t, tol, `fixture ${name} case ${k} output ${i}`)));
  return { name, dir, files: meta.files, cases };
}

/** Fixture `name` of test/fixtures/, checked against the tolerance `tol` it is used with (FP32 by default). */
export function loadFixture(name: string, tol: Tolerance = FP32): Fixture {
  return loadFixtureFrom(path.join(FIXTURES, name), tol);
}
