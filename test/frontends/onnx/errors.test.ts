/**
 * Bad ONNX input is a typed error naming the file, node, op, opset or input: never a crash.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

import { TensorRTNodeError } from '../../../lib/errors';
import { loadOnnx } from '../../../lib/frontends/onnx';
import { interpret } from '../../../lib/interpreter';
import { Tensor } from '../../../lib/ir/tensor';
import { FIXTURES } from '../../helpers/fixtures';
import { buildSingleOpModel } from '../../helpers/ort-single-op';

// eslint-disable-next-line @typescript-eslint/no-require-imports
const { onnx } = require('onnx-proto');

const mlpPath = path.join(FIXTURES, 'mlp', 'model.onnx');
const mlp = fs.readFileSync(mlpPath);

function caught(fn: () => unknown): TensorRTNodeError {
  try {
    fn();
  } catch (error) {
    if (error instanceof TensorRTNodeError) return error;
    throw new Error(`expected a TensorRTNodeError, got ${String(error)}`);
  }
  throw new Error('expected an error, got none');
}

let tmp: string;
beforeAll(() => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'trtn-onnx-errors-'));
});
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

describe('malformed files', () => {
  test('a truncated file names the file', () => {
    const file = path.join(tmp, 'truncated.onnx');
    fs.writeFileSync(file, mlp.subarray(0, Math.floor(mlp.length / 2)));
    const e = caught(() => loadOnnx(file));
    expect(e.code).toBe('E_BAD_MODEL');
    expect(e.message).toContain(file);
  });

  test('garbage bytes', () => {
    const e = caught(() => loadOnnx(Uint8Array.from({ length: 4096 }, (_, i) => (i * 7919) % 251)));
    expect(e.code).toBe('E_BAD_MODEL');
  });

  test('a file that does not exist', () => {
    const e = caught(() => loadOnnx(path.join(tmp, 'nope.onnx')));
    expect(e.code).toBe('E_BAD_MODEL');
    expect(e.message).toContain('nope.onnx');
  });

  test('not a path or buffer', () => {
    expect(caught(() => loadOnnx(42 as never)).code).toBe('E_INVALID_ARGUMENT');
  });
});

describe('opsets and ops', () => {
  const relu = (opset: number): Uint8Array => buildSingleOpModel({ opType: 'Relu', inputs: [Tensor.from('float32', [2], [1, -1])], opset });

  const add = (opset: number): Uint8Array =>
    buildSingleOpModel({ opType: 'Add', inputs: [Tensor.from('float32', [2], [1, -1]), Tensor.from('float32', [2], [2, 3])], opset });

  test.each([1, 6])('opset %i is refused for an op whose form changed since (Add: broadcast attributes), naming the opset and the range', (opset) => {
    const e = caught(() => loadOnnx(add(opset)));
    expect(e.code).toBe('E_UNSUPPORTED_OP');
    expect(e.message).toContain(`opset ${opset}`);
    expect(e.message).toContain('7 to 28');
  });

  test('opset 6 imports a model of ops whose meaning has not changed since', () => {
    expect(interpret(loadOnnx(relu(6)), [Tensor.from('float32', [2], [1, -1])])[0]!.toArray()).toEqual([1, 0]);
  });

  test.each([29])('opset %i is refused, naming the opset and the supported range', (opset) => {
    const e = caught(() => loadOnnx(relu(opset)));
    expect(e.code).toBe('E_UNSUPPORTED_OP');
    expect(e.message).toContain(`opset ${opset}`);
    expect(e.message).toContain('7 to 28');
  });

  test.each([22, 28])('opset %i imports', (opset) => {
    expect(interpret(loadOnnx(relu(opset)), [Tensor.from('float32', [2], [1, -1])])[0]!.toArray()).toEqual([1, 0]);
  });

  test('an attribute or input no mapper reads is refused by name (its meaning would be dropped); Cast\'s float8-only saturate is read', () => {
    const e = caught(() => loadOnnx(buildSingleOpModel({ opType: 'Relu', inputs: [Tensor.from('float32', [2], [1, -1])], attributes: { round_mode: 'up' } })));
    expect(e.code).toBe('E_UNSUPPORTED_OP');
    expect(e.message).toMatch(/ONNX node ".*" \(Relu\): attribute "round_mode" of Relu \(opset \d+\) is not supported: importing the node without it would change what it computes/);
    const extra = caught(() => loadOnnx(buildSingleOpModel({ opType: 'Relu', inputs: [Tensor.from('float32', [2], [1, -1]), Tensor.from('float32', [1], [0])] })));
    expect(extra.code).toBe('E_UNSUPPORTED_OP');
    expect(extra.message).toMatch(/\(Relu\): input 1 \(".*"\) of Relu \(opset \d+\) is not supported: importing the node without it would change what it computes/);
    const cast = buildSingleOpModel({ opType: 'Cast', inputs: [Tensor.from('float32', [2], [1.5, -1])], attributes: { to: 7, saturate: 1 }, opset: 21 });
    expect(interpret(loadOnnx(cast), [Tensor.from('float32', [2], [1.5, -1])])[0]!.toArray().map(Number)).toEqual([1, -1]);
  });

  test('an unknown op names the node and the op', () => {
    const e = caught(() => loadOnnx(buildSingleOpModel({ opType: 'FrobnicateTensor', inputs: [Tensor.from('float32', [1], [1])] })));
    expect(e.code).toBe('E_UNSUPPORTED_OP');
    expect(e.message).toContain('FrobnicateTensor');
    expect(e.message).toMatch(/ONNX node ".*" \(FrobnicateTensor\)/);
  });

  test('an op from another domain names the domain', () => {
    const graph = onnx.GraphProto.create({
      name: 'ms',
      node: [onnx.NodeProto.create({ opType: 'FusedGemm', domain: 'com.microsoft', input: ['x'], output: ['y'], name: 'fused' })],
      input: [{ name: 'x', type: { tensorType: { elemType: 1, shape: { dim: [{ dimValue: 1 }] } } } }],
      output: [{ name: 'y' }],
    });
    const model = onnx.ModelProto.create({
      irVersion: 8,
      opsetImport: [
        { domain: '', version: 17 },
        { domain: 'com.microsoft', version: 1 },
      ],
      graph,
    });
    const e = caught(() => loadOnnx(onnx.ModelProto.encode(model).finish()));
    expect(e.code).toBe('E_UNSUPPORTED_OP');
    expect(e.message).toContain('com.microsoft');
    expect(e.message).toContain('"fused"');
  });

  test('a model without the default domain is a bad model', () => {
    const e = caught(() =>
      loadOnnx(buildSingleOpModel({ opType: 'FusedGemm', domain: 'com.microsoft', inputs: [Tensor.from('float32', [1], [1])] })),
    );
    expect(e.code).toBe('E_BAD_MODEL');
    expect(e.message).toContain('default ONNX domain');
  });
});

describe('external data', () => {
  function modelWithExternalWeight(location: string, offset: number, length: number): Uint8Array {
    const weight = onnx.TensorProto.create({
      name: 'w',
      dims: [4],
      dataType: 1,
      dataLocation: 1,
      externalData: [
        { key: 'location', value: location },
        { key: 'offset', value: String(offset) },
        { key: 'length', value: String(length) },
      ],
    });
    const graph = onnx.GraphProto.create({
      name: 'ext',
      node: [onnx.NodeProto.create({ opType: 'Add', input: ['x', 'w'], output: ['y'], name: 'add' })],
      input: [{ name: 'x', type: { tensorType: { elemType: 1, shape: { dim: [{ dimValue: 4 }] } } } }],
      output: [{ name: 'y' }],
      initializer: [weight],
    });
    return onnx.ModelProto.encode(onnx.ModelProto.create({ irVersion: 8, opsetImport: [{ domain: '', version: 17 }], graph })).finish();
  }

  test('weights are read from the external file at their offset', () => {
    const dir = fs.mkdtempSync(path.join(tmp, 'ext-'));
    const w = new Float32Array([0.5, -1.5, 2, 8]);
    const blob = Buffer.concat([Buffer.alloc(12, 0xff), Buffer.from(w.buffer)]);
    fs.writeFileSync(path.join(dir, 'weights.bin'), blob);
    fs.writeFileSync(path.join(dir, 'model.onnx'), modelWithExternalWeight('weights.bin', 12, 16));
    const [y] = interpret(loadOnnx(path.join(dir, 'model.onnx')), [Tensor.from('float32', [4], [1, 2, 3, 4])]);
    expect(Array.from(y!.data as Float32Array)).toEqual([1.5, 0.5, 5, 12]);
  });

  test('a missing external file names the file and the tensor', () => {
    const dir = fs.mkdtempSync(path.join(tmp, 'ext-'));
    fs.writeFileSync(path.join(dir, 'model.onnx'), modelWithExternalWeight('missing.bin', 0, 16));
    const e = caught(() => loadOnnx(path.join(dir, 'model.onnx')));
    expect(e.code).toBe('E_BAD_MODEL');
    expect(e.message).toContain('missing.bin');
    expect(e.message).toContain('initializer "w"');
  });

  test('a range past the end of the external file', () => {
    const dir = fs.mkdtempSync(path.join(tmp, 'ext-'));
    fs.writeFileSync(path.join(dir, 'weights.bin'), Buffer.alloc(8));
    fs.writeFileSync(path.join(dir, 'model.onnx'), modelWithExternalWeight('weights.bin', 0, 16));
    const e = caught(() => loadOnnx(path.join(dir, 'model.onnx')));
    expect(e.code).toBe('E_BAD_MODEL');
    expect(e.message).toContain('outside');
  });

  test('a location escaping the model directory is refused', () => {
    const dir = fs.mkdtempSync(path.join(tmp, 'ext-'));
    fs.writeFileSync(path.join(dir, 'model.onnx'), modelWithExternalWeight('../../etc/passwd', 0, 16));
    expect(caught(() => loadOnnx(path.join(dir, 'model.onnx'))).message).toContain('outside the model');
  });

  test('external data from a buffer asks for the path', () => {
    const e = caught(() => loadOnnx(modelWithExternalWeight('weights.bin', 0, 16)));
    expect(e.code).toBe('E_BAD_MODEL');
    expect(e.message).toContain('load it from its path');
  });
});

describe('run-time inputs', () => {
  const graph = loadOnnx(mlpPath);
  const good = Tensor.from('float32', [2, 32], new Array(64).fill(0.1));

  test('wrong count', () => {
    const e = caught(() => interpret(graph, [good, good]));
    expect(e.code).toBe('E_BAD_INPUT');
    expect(e.message).toContain('input0');
  });

  test('wrong dtype names the input', () => {
    const e = caught(() => interpret(graph, [Tensor.from('float64', [2, 32], new Array(64).fill(0))]));
    expect(e.code).toBe('E_BAD_INPUT');
    expect(e.message).toContain('"input0" must be float32, got float64');
  });

  test('wrong static dim names the input and dim', () => {
    const e = caught(() => interpret(graph, [Tensor.from('float32', [2, 31], new Array(62).fill(0))]));
    expect(e.code).toBe('E_BAD_INPUT');
    expect(e.message).toContain('dim 1 must be 32');
  });

  test('wrong rank', () => {
    const e = caught(() => interpret(graph, [Tensor.from('float32', [64], new Array(64).fill(0))]));
    expect(e.code).toBe('E_BAD_INPUT');
    expect(e.message).toContain('rank 2');
  });

  test('unknown input name', () => {
    const e = caught(() => interpret(graph, { x: good }));
    expect(e.code).toBe('E_BAD_INPUT');
    expect(e.message).toContain('missing input0');
  });
});
