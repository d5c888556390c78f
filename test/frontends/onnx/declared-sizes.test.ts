/**
 * What a model declares is checked against what it holds before anything is allocated:
 * dims must be exact integers, an initializer's element count must match its data, and
 * names must be defined once. Each is E_BAD_MODEL naming the tensor, input or output.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

import { loadOnnx } from '../../../lib/frontends/onnx';
import { interpret } from '../../../lib/interpreter';
import { Tensor } from '../../../lib/ir/tensor';
import { thrownError } from '../../helpers/errors';

// eslint-disable-next-line @typescript-eslint/no-require-imports
const { onnx } = require('onnx-proto');

/** protobufjs writes int64 fields given as decimal strings exactly. */
const INT64_MAX = '9223372036854775807';

interface Spec {
  initializer?: Record<string, unknown>;
  inputDims?: unknown[];
  nodes?: Array<{ op: string; inputs: string[]; outputs: string[]; name: string }>;
  outputs?: string[];
}

/** y = x + w by default; parts replaced by `spec`. */
function model(spec: Spec): Uint8Array {
  const graph = onnx.GraphProto.create({
    name: 'g',
    node: (spec.nodes ?? [{ op: 'Add', inputs: ['x', 'w'], outputs: ['y'], name: 'add' }]).map((n) =>
      onnx.NodeProto.create({ opType: n.op, input: n.inputs, output: n.outputs, name: n.name }),
    ),
    input: [{ name: 'x', type: { tensorType: { elemType: 1, shape: { dim: (spec.inputDims ?? [4]).map((d) => ({ dimValue: d })) } } } }],
    output: (spec.outputs ?? ['y']).map((name) => ({ name })),
    initializer: [onnx.TensorProto.create({ name: 'w', dims: [4], dataType: 1, floatData: [1, 2, 3, 4], ...spec.initializer })],
  });
  return onnx.ModelProto.encode(onnx.ModelProto.create({ irVersion: 8, opsetImport: [{ domain: '', version: 17 }], graph })).finish();
}

function refusal(spec: Spec, ...parts: string[]): string {
  const e = thrownError(() => loadOnnx(model(spec)));
  expect(e.code).toBe('E_BAD_MODEL');
  for (const p of parts) expect(e.message).toContain(p);
  return e.message;
}

test('the reference model loads and computes x + w', () => {
  const [y] = interpret(loadOnnx(model({})), [Tensor.from('float32', [4], [10, 20, 30, 40])]);
  expect(y!.toArray()).toEqual([11, 22, 33, 44]);
});

describe('initializers: the element count is checked against the data before allocating', () => {
  test('dims [2^31] and no data: refused from the (empty) field, nothing allocated', () => {
    const before = process.memoryUsage().arrayBuffers;
    refusal({ initializer: { dims: [2 ** 31], floatData: [] } }, 'initializer "w"', 'float_data holds 0 values', 'needs 2147483648');
    // 8 GiB would have been allocated before the check; allow for unrelated noise.
    expect(process.memoryUsage().arrayBuffers - before).toBeLessThan(64 * 2 ** 20);
  });

  test('dims [2^31] with external data that is too short: refused before reading', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'trtn-onnx-sizes-'));
    try {
      fs.writeFileSync(path.join(dir, 'w.bin'), Buffer.alloc(16));
      const file = path.join(dir, 'model.onnx');
      const externalData = [{ key: 'location', value: 'w.bin' }];
      fs.writeFileSync(file, model({ initializer: { dims: [2 ** 31], floatData: [], dataLocation: 1, externalData } }));
      const e = thrownError(() => loadOnnx(file));
      expect(e.code).toBe('E_BAD_MODEL');
      expect(e.message).toContain('holds 16 bytes for the tensor (offset 0), but its shape and type need 8589934592');
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  test('more elements than one tensor may hold', () => {
    refusal({ initializer: { dims: [2 ** 16, 2 ** 16], floatData: [] } }, 'initializer "w"', 'more than 2147483648 elements');
  });

  test('raw data of the wrong length', () => {
    refusal({ initializer: { dims: [4], floatData: [], rawData: new Uint8Array(12) } }, 'raw data holds 12 bytes', 'needs 16');
  });

  test.each([
    ['INT64_MAX', INT64_MAX, '9223372036854776000'],
    ['2^53', 2 ** 53, '9007199254740992'],
    ['-1', -1, '-1'],
  ])('a dim of %s is refused', (_, dim, shown) => {
    refusal({ initializer: { dims: [dim, 0], floatData: [] } }, 'initializer "w"', `dim 0 = ${shown}, not a non-negative integer below 2^53`);
  });
});

describe('input dims', () => {
  test.each([
    ['INT64_MAX', INT64_MAX],
    ['2^53', 2 ** 53],
  ])('an input dim of %s is refused, naming the input and axis', (_, dim) => {
    refusal({ inputDims: [dim] }, 'input "x" dim 0', 'not a non-negative integer below 2^53');
  });

  test('2^53 - 1 is exact, and accepted', () => {
    const graph = loadOnnx(model({ inputDims: [2 ** 53 - 1], initializer: { dims: [1], floatData: [1] } }));
    expect(graph.inputs[0]!.tensorType.shape).toEqual([2 ** 53 - 1]);
  });
});

describe('names defined once', () => {
  test('a graph output listed twice', () => {
    refusal({ outputs: ['y', 'y'] }, 'output "y" twice');
  });

  test('a value produced by two nodes (the later one would win)', () => {
    const nodes = [
      { op: 'Add', inputs: ['x', 'w'], outputs: ['y'], name: 'first' },
      { op: 'Mul', inputs: ['x', 'w'], outputs: ['y'], name: 'second' },
    ];
    refusal({ nodes }, 'ONNX node "second" (Mul)', '"y"', 'already defined');
  });

  test('a node output shadowing the graph input', () => {
    refusal({ nodes: [{ op: 'Relu', inputs: ['x'], outputs: ['x'], name: 'shadow' }], outputs: ['x'] }, 'ONNX node "shadow" (Relu)', 'already defined');
  });

  test('an initializer defined twice', () => {
    const graph = onnx.GraphProto.create({
      name: 'g',
      node: [onnx.NodeProto.create({ opType: 'Add', input: ['x', 'w'], output: ['y'], name: 'add' })],
      input: [{ name: 'x', type: { tensorType: { elemType: 1, shape: { dim: [{ dimValue: 1 }] } } } }],
      output: [{ name: 'y' }],
      initializer: [1, 2].map((v) => onnx.TensorProto.create({ name: 'w', dims: [1], dataType: 1, floatData: [v] })),
    });
    const bytes = onnx.ModelProto.encode(onnx.ModelProto.create({ irVersion: 8, opsetImport: [{ domain: '', version: 17 }], graph })).finish();
    const e = thrownError(() => loadOnnx(bytes));
    expect(e.code).toBe('E_BAD_MODEL');
    expect(e.message).toContain('initializer "w" is defined twice');
  });

  test('a graph input declared twice (the second would be fed nothing: Sub(x, x) gave 0)', () => {
    const x = { name: 'x', type: { tensorType: { elemType: 1, shape: { dim: [{ dimValue: 1 }] } } } };
    const graph = onnx.GraphProto.create({
      name: 'g',
      node: [onnx.NodeProto.create({ opType: 'Sub', input: ['x', 'x'], output: ['y'], name: 'sub' })],
      input: [x, x],
      output: [{ name: 'y' }],
    });
    const bytes = onnx.ModelProto.encode(onnx.ModelProto.create({ irVersion: 8, opsetImport: [{ domain: '', version: 17 }], graph })).finish();
    const e = thrownError(() => loadOnnx(bytes));
    expect(e.code).toBe('E_BAD_MODEL');
    expect(e.message).toContain('input "x" is declared twice');
  });
});
