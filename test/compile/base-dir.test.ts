/**
 * compile(bytes, { baseDir }): the weights of an ONNX model stored as external data are read
 * from the folder the caller names, on the compile worker as in-process; without it the
 * compile fails naming the tensor, and baseDir with a model that has no external data is a
 * mistake that is said. Expected values are x + w for the float32 numbers written here.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

import { compile } from '../../lib/compile';
import { Tensor } from '../../lib/ir/tensor';
import { rejection } from '../helpers/errors';
import { externalDataModel } from '../helpers/external-data-model';

let dir: string;
beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'trtn-base-dir-'));
  fs.writeFileSync(path.join(dir, 'w.bin'), Buffer.from(new Float32Array([0.5, -1.5, 2, 8]).buffer));
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

const x = Tensor.from('float32', [4], [1, 2, 3, 4]);

test('the bytes of a model with external weights compile with baseDir, and run', async () => {
  const program = await compile(externalDataModel('w.bin'), { backend: 'reference', baseDir: dir, minBlockSize: 1 });
  try {
    const [y] = await program.run([x]);
    expect(y!.toArray()).toEqual([1.5, 0.5, 5, 12]);
  } finally {
    await program.dispose();
  }
});

test('a relative baseDir is taken from the caller’s working directory', async () => {
  const relative = path.relative(process.cwd(), dir);
  const program = await compile(externalDataModel('w.bin'), { backend: 'reference', baseDir: relative, minBlockSize: 1 });
  try {
    expect((await program.run([x]))[0]!.toArray()).toEqual([1.5, 0.5, 5, 12]);
  } finally {
    await program.dispose();
  }
});

test('without baseDir the bytes cannot be compiled, and the error names the tensor', async () => {
  const e = await rejection(compile(externalDataModel('w.bin'), { backend: 'reference' }));
  expect(e.code).toBe('E_BAD_MODEL');
  expect(e.message).toContain('"w"');
});

test('a baseDir that is not a path is refused', async () => {
  const e = await rejection(compile(externalDataModel('w.bin'), { backend: 'reference', baseDir: 42 as unknown as string }));
  expect(e.code).toBe('E_INVALID_ARGUMENT');
  expect(e.message).toContain('baseDir must be a folder path');
});

test('baseDir with a .pt2 archive is refused: it has no external data', async () => {
  const pt2 = path.join(__dirname, '..', 'fixtures', 'mlp', 'model.pt2');
  const e = await rejection(compile(pt2, { backend: 'reference', baseDir: dir }));
  expect(e.code).toBe('E_INVALID_ARGUMENT');
  expect(e.message).toContain('.pt2 archive');
});
