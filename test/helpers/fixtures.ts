/**
 * Reads the PyTorch-produced fixtures in test/fixtures/ (see its README.md): meta.json plus
 * raw little-endian tensors. These outputs are the independent reference for model tests.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';

import { dtypeInfo, type DType } from '../../lib/ir/dtype';
import { shapeSize, Tensor } from '../../lib/tensor';

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

export function loadFixture(name: string): Fixture {
  const dir = path.join(FIXTURES, name);
  const meta = JSON.parse(fs.readFileSync(path.join(dir, 'meta.json'), 'utf8')) as {
    inputs: TensorMeta[];
    outputs: TensorMeta[];
    files: { pt2?: string; onnx?: string };
    second_case?: { inputs: TensorMeta[]; outputs: TensorMeta[] };
  };
  const read = (m: TensorMeta): Tensor => readBin(path.join(dir, m.file), m.dtype, m.shape);
  const cases: FixtureCase[] = [{ inputs: meta.inputs.map(read), outputs: meta.outputs.map(read) }];
  if (meta.second_case) cases.push({ inputs: meta.second_case.inputs.map(read), outputs: meta.second_case.outputs.map(read) });
  return { name, dir, files: meta.files, cases };
}
