/** An ONNX model y = x + w whose float32 weights w[4] are external data (the tests write the file). */
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { onnx } = require('onnx-proto');

/** `location` names the data file; `extra` adds or replaces external-data entries (default: offset 0, length 16). */
export function externalDataModel(location: string, extra: Record<string, string> = { offset: '0', length: '16' }): Uint8Array {
  const externalData = [{ key: 'location', value: location }, ...Object.entries(extra).map(([key, value]) => ({ key, value }))];
  const graph = onnx.GraphProto.create({
    name: 'ext',
    node: [onnx.NodeProto.create({ opType: 'Add', input: ['x', 'w'], output: ['y'], name: 'add' })],
    input: [{ name: 'x', type: { tensorType: { elemType: 1, shape: { dim: [{ dimValue: 4 }] } } } }],
    output: [{ name: 'y' }],
    initializer: [onnx.TensorProto.create({ name: 'w', dims: [4], dataType: 1, dataLocation: 1, externalData })],
  });
  return onnx.ModelProto.encode(onnx.ModelProto.create({ irVersion: 8, opsetImport: [{ domain: '', version: 17 }], graph })).finish();
}
