/**
 * External data is read only from regular files really inside the model's directory: links
 * (symbolic or hard), FIFOs, directories and escaping paths are E_BAD_MODEL errors naming the tensor and the file,
 * returned at once (never a hang, never another file's bytes). Expected values are the
 * float32 numbers written here.
 */
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

import { loadOnnx } from '../../../lib/frontends/onnx';
import { interpret } from '../../../lib/interpreter';
import { Tensor } from '../../../lib/ir/tensor';
import { thrownError } from '../../helpers/errors';
import { externalDataModel as model } from '../../helpers/external-data-model';

const WEIGHTS = new Float32Array([0.5, -1.5, 2, 8]);

let tmp: string;
let dir: string;
/** A file outside the model directory that a hostile model would like to read. */
let secret: string;

beforeAll(() => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'trtn-onnx-ext-'));
  secret = path.join(tmp, 'secret.bin');
  fs.writeFileSync(secret, Buffer.from(new Float32Array([111, 222, 333, 444]).buffer));
});
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));
beforeEach(() => {
  dir = fs.mkdtempSync(path.join(tmp, 'model-'));
});

function load(location: string, extra?: Record<string, string>) {
  const file = path.join(dir, 'model.onnx');
  fs.writeFileSync(file, model(location, extra));
  return loadOnnx(file);
}

function refusal(location: string, extra?: Record<string, string>) {
  const e = thrownError(() => load(location, extra));
  expect(e.code).toBe('E_BAD_MODEL');
  expect(e.message).toContain('initializer "w"');
  expect(e.message).toContain(`"${location}"`);
  return e;
}

const run = (graph: ReturnType<typeof loadOnnx>): number[] => interpret(graph, [Tensor.from('float32', [4], [1, 2, 3, 4])])[0]!.toArray() as number[];

test('a regular file in the directory is read (the reference case)', () => {
  fs.writeFileSync(path.join(dir, 'w.bin'), Buffer.from(WEIGHTS.buffer));
  expect(run(load('w.bin'))).toEqual([1.5, 0.5, 5, 12]);
});

test('a file name starting with two dots is inside the directory, and is read', () => {
  fs.writeFileSync(path.join(dir, '..w.bin'), Buffer.from(WEIGHTS.buffer));
  expect(run(load('..w.bin'))).toEqual([1.5, 0.5, 5, 12]);
});

test('a file in a subdirectory, and a model directory reached through a link, are fine', () => {
  fs.mkdirSync(path.join(dir, 'data'));
  fs.writeFileSync(path.join(dir, 'data', 'w.bin'), Buffer.from(WEIGHTS.buffer));
  fs.writeFileSync(path.join(dir, 'model.onnx'), model('data/w.bin'));
  const linked = path.join(tmp, `link-to-${path.basename(dir)}`);
  fs.symlinkSync(dir, linked);
  expect(run(loadOnnx(path.join(linked, 'model.onnx')))).toEqual([1.5, 0.5, 5, 12]);
});

test('a symbolic link to a file outside (p.bin -> secret) is refused, not read', () => {
  fs.symlinkSync(secret, path.join(dir, 'p.bin'));
  const e = refusal('p.bin');
  expect(e.message).toContain('symbolic link');
  expect(e.message).not.toContain('111');
});

test('a symbolic link to a file inside the directory is refused too (links are never followed)', () => {
  fs.writeFileSync(path.join(dir, 'w.bin'), Buffer.from(WEIGHTS.buffer));
  fs.symlinkSync('w.bin', path.join(dir, 'alias.bin'));
  expect(refusal('alias.bin').message).toContain('symbolic link');
});

test('a hard link to a file outside (h.bin = secret) is refused, naming the file and the fix, not read', () => {
  fs.linkSync(secret, path.join(dir, 'h.bin'));
  const e = refusal('h.bin');
  expect(e.message).toContain(`(${path.join(fs.realpathSync(dir), 'h.bin')}) has 2 hard links (names), and external data must have one`);
  expect(e.message).toContain('Copy the file into the model\'s directory (cp, not ln)');
  expect(e.details).toMatchObject({ file: path.join(fs.realpathSync(dir), 'h.bin'), location: 'h.bin', links: 2 });
  expect(e.message).not.toContain('111');
  fs.unlinkSync(path.join(dir, 'h.bin'));
});

test('a hard link inside the directory is refused too; a copy of the file is read', () => {
  fs.writeFileSync(path.join(dir, 'w.bin'), Buffer.from(WEIGHTS.buffer));
  fs.linkSync(path.join(dir, 'w.bin'), path.join(dir, 'alias.bin'));
  expect(refusal('w.bin').message).toContain('has 2 hard links');
  expect(refusal('alias.bin').message).toContain('has 2 hard links');
  fs.unlinkSync(path.join(dir, 'alias.bin'));
  fs.copyFileSync(path.join(dir, 'w.bin'), path.join(dir, 'copy.bin'));
  expect(run(load('w.bin'))).toEqual([1.5, 0.5, 5, 12]);
  expect(run(load('copy.bin'))).toEqual([1.5, 0.5, 5, 12]);
});

test('a linked directory leading outside is refused', () => {
  fs.symlinkSync(tmp, path.join(dir, 'up'));
  const e = refusal('up/secret.bin');
  expect(e.message).toContain("outside the model's directory");
});

test('a FIFO is refused at once instead of blocking the load', () => {
  execFileSync('mkfifo', [path.join(dir, 'pipe.bin')]);
  expect(refusal('pipe.bin').message).toContain('not a regular file (a FIFO)');
});

test('a directory is refused with a typed error (not a raw EISDIR)', () => {
  fs.mkdirSync(path.join(dir, 'weights'));
  expect(refusal('weights').message).toContain('not a regular file (a directory)');
});

test.each([
  ['../secret.bin', "points outside the model's directory"],
  ['data/../../secret.bin', "points outside the model's directory"],
  ['.', "does not name a file in the model's directory"],
])('the location %s is refused', (location, reason) => {
  expect(refusal(location).message).toContain(reason);
});

test('an absolute location is refused', () => {
  expect(refusal(secret).message).toContain('absolute path');
});

test('a missing file names the file', () => {
  expect(refusal('missing.bin').message).toContain('cannot be opened');
});

describe('the range', () => {
  beforeEach(() => fs.writeFileSync(path.join(dir, 'w.bin'), Buffer.concat([Buffer.alloc(12, 0xff), Buffer.from(WEIGHTS.buffer)])));

  test('offset without length reads to the end of the file', () => {
    expect(run(load('w.bin', { offset: '12' }))).toEqual([1.5, 0.5, 5, 12]);
  });

  test.each(['1e1', '-4', '0x0c', ' 12', '', '99999999999999999999'])('an offset of "%s" is not a decimal integer', (offset) => {
    expect(refusal('w.bin', { offset, length: '16' }).message).toContain(`the offset "${offset}"`);
  });

  test('a range past the end names the sizes', () => {
    expect(refusal('w.bin', { offset: '16', length: '16' }).message).toContain('is 28 bytes long, but the data range is offset 16, length 16');
  });

  test('a length that does not fit the shape is refused before reading', () => {
    expect(refusal('w.bin', { offset: '12', length: '8' }).message).toContain('holds 8 bytes for the tensor (offset 12), but its shape and type need 16');
  });
});

describe('the model file itself', () => {
  test('a FIFO given as the model is refused at once', () => {
    const fifo = path.join(dir, 'model.onnx');
    execFileSync('mkfifo', [fifo]);
    const e = thrownError(() => loadOnnx(fifo));
    expect(e.code).toBe('E_BAD_MODEL');
    expect(e.message).toBe(`cannot read ONNX model ${fifo}: the file is not a regular file (a FIFO)`);
  });

  test('a directory given as the model', () => {
    const e = thrownError(() => loadOnnx(dir));
    expect(e.code).toBe('E_BAD_MODEL');
    expect(e.message).toContain('is not a regular file (a directory)');
  });

  test('a link to the model is followed (the caller chose the path)', () => {
    fs.writeFileSync(path.join(dir, 'w.bin'), Buffer.from(WEIGHTS.buffer));
    fs.writeFileSync(path.join(dir, 'model.onnx'), model('w.bin'));
    const link = path.join(tmp, `model-link-${path.basename(dir)}.onnx`);
    fs.symlinkSync(path.join(dir, 'model.onnx'), link);
    // External data is relative to the link's directory (tmp), where w.bin is not.
    expect(thrownError(() => loadOnnx(link)).message).toContain('"w.bin"');
    expect(run(loadOnnx(link, { baseDir: dir }))).toEqual([1.5, 0.5, 5, 12]);
  });
});
