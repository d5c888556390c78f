/**
 * ONNX Unique compiled into engine segments as a unique layer, whose count is a run-time dim of
 * the Network: compiled on the reference and onnxruntime backends and compared exactly with
 * onnxruntime-node running the same ONNX file (flattened and along an axis, sorted and in
 * order of first occurrence, several element types, and a Gather after it); and the backends that do not take the layer: tensorrt (TensorRT has
 * no such layer) and cuda (its plans are made before a run), where the node runs in a fallback
 * segment and the build refuses the layer by name.
 */
import { cudaBackend } from '../../lib/backends/cuda';
import { encodeProgram, UNIQUE_REFUSAL } from '../../lib/backends/tensorrt/program';
import { compile, dryRun } from '../../lib/compile';
import { convertWhole } from '../helpers/convert-compare';
import { loadOnnx } from '../../lib/frontends/onnx';
import type { DType } from '../../lib/ir/dtype';
import { Tensor } from '../../lib/ir/tensor';
import { dataDependentTensors, type Network } from '../../lib/network';
import type { Program } from '../../lib/runtime/program';
import { expectExact } from '../helpers/compare';
import { buildSymbolicModel, type SymModelSpec } from '../helpers/onnx-symbolic-model';
import { closeOrt, runOrtModel } from '../helpers/ort-single-op';

afterAll(() => closeOrt());

/** x [4, 3] of `dtype` → Unique's four outputs, and Y's first row (a Gather after the run-time count). */
const spec = (dtype: DType, attrs: { axis?: number; sorted?: number }): SymModelSpec => ({
  inputs: { x: { dtype, dims: [4, 3] } },
  initializers: { first: Tensor.from('int64', [], [0]) },
  nodes: [
    { op: 'Unique', inputs: ['x'], outputs: ['y', 'indices', 'inverse', 'counts'], name: 'unique', attrs },
    { op: 'Gather', inputs: ['y', 'first'], outputs: ['y0'], attrs: { axis: 0 } },
  ],
  outputs: ['y', 'indices', 'inverse', 'counts', 'y0'],
  opset: 11,
});

// Rows 0 and 2 repeat, and values repeat across rows: flattened and per-row uniqueness differ.
const VALUES = [3, 1, 2, 0, 1, 5, 3, 1, 2, -1, 1, 0];
const X: Partial<Record<DType, Tensor>> = {
  float32: Tensor.from('float32', [4, 3], VALUES.map((v) => v * 0.5)),
  float16: Tensor.from('float16', [4, 3], VALUES.map((v) => v * 0.25)),
  int32: Tensor.from('int32', [4, 3], VALUES),
  int64: Tensor.from('int64', [4, 3], VALUES),
  int8: Tensor.from('int8', [4, 3], VALUES),
  uint8: Tensor.from('uint8', [4, 3], VALUES.map((v) => v + 1)),
};

const CASES = [
  { name: 'flattened, sorted', dtype: 'float32' as DType, attrs: {} },
  { name: 'flattened, in order of first occurrence', dtype: 'float32' as DType, attrs: { sorted: 0 } },
  { name: 'rows (axis 0), sorted', dtype: 'int64' as DType, attrs: { axis: 0 } },
  { name: 'columns (axis -1), unsorted', dtype: 'int32' as DType, attrs: { axis: -1, sorted: 0 } },
  { name: 'float16, flattened', dtype: 'float16' as DType, attrs: {} },
  { name: 'int8, rows', dtype: 'int8' as DType, attrs: { axis: 0 } },
  { name: 'uint8, flattened, unsorted', dtype: 'uint8' as DType, attrs: { sorted: 0 } },
];

describe.each(['reference', 'onnxruntime'] as const)('Unique in an engine segment on the %s backend', (backend) => {
  const programs: Program[] = [];
  afterAll(() => Promise.all(programs.map((p) => p.dispose())));

  it.each(CASES)('$name: the outputs of onnxruntime-node on the same file, exactly; the node in an engine segment', async ({ dtype, attrs }) => {
    const model = buildSymbolicModel(spec(dtype, attrs));
    const program = await compile(model, { backend, minBlockSize: 1 });
    programs.push(program);
    const op = program.report.ops.find((o) => o.target === 'trt.unique')!;
    expect(op.converted).toBe(true);
    expect(program.report.segments[op.segment]!.kind).toBe('engine');
    const x = X[dtype]!;
    // onnxruntime has no int32 or uint8 Unique: the oracle runs the same model at int64 (the same numbers), and Y is compared as numbers.
    const widened = dtype === 'int32' || dtype === 'uint8';
    const expected = widened ? await runOrtModel(buildSymbolicModel(spec('int64', attrs)), [Tensor.from('int64', x.shape, x.toArray())]) : await runOrtModel(model, [x]);
    const actual = Object.values(await program.run({ x }));
    expect(actual).toHaveLength(5);
    actual.forEach((t, k) => {
      if (widened && (k === 0 || k === 4)) expect(t.toArray()).toEqual(expected[k]!.toArray());
      else expectExact(t, expected[k]!, `output ${k}`);
    });
  });
});

describe('Unique where the backend does not take a unique layer', () => {
  const model = buildSymbolicModel(spec('float32', { axis: 0 }));

  it('dryRun: an engine segment on onnxruntime; a fallback segment on cuda and tensorrt, saying why', async () => {
    const on = async (backend: 'onnxruntime' | 'cuda' | 'tensorrt') => (await dryRun(model, { backend, minBlockSize: 1 })).ops.find((o) => o.target === 'trt.unique')!;
    expect((await on('onnxruntime')).converted).toBe(true);
    expect((await on('cuda')).converted).toBe(false);
    const trt = await on('tensorrt');
    expect(trt.converted).toBe(false);
    expect(trt.reasons.join('\n')).toContain(`this backend refuses unique layers: ${UNIQUE_REFUSAL}`);
  });

  const network = (): Network => {
    const g = loadOnnx(model);
    return convertWhole(g, { dataDependentSizes: 'anywhere' });
  };

  it('the converted network: one unique layer; Y, indices and counts have a run-time count, inverse does not', () => {
    const net = network();
    const layer = net.layers.find((l) => l.params.kind === 'unique')!;
    expect(layer.params).toEqual({ kind: 'unique', axis: 0, sorted: true });
    expect(layer.outputs.map((id) => net.tensor(id).shape)).toEqual([[-1, 3], [-1], [4], [-1]]);
    const sized = dataDependentTensors(net);
    // inverse has one entry per row, and Y's first row is 3 wide: static sizes, though read from a run-time count.
    expect(net.outputs.map((o) => sized.get(o.tensor)?.name)).toEqual([layer.name, layer.name, undefined, layer.name, undefined]);
  });

  it('the tensorrt replay refuses the unique layer by name (E_UNSUPPORTED_OP)', () => {
    expect(() => encodeProgram(network(), { precisions: ['float32'] } as never)).toThrow(
      expect.objectContaining({ code: 'E_UNSUPPORTED_OP', message: expect.stringMatching(/cannot build layer "[^"]*unique[^"]*" \(unique\).*no layer that computes ONNX Unique/) }),
    );
  });

  it('the cuda backend refuses the unique layer at build, naming it', async () => {
    await expect(cudaBackend.build(network(), {} as never, { type: 'gpu', gpuId: 0 } as never)).rejects.toThrow(
      expect.objectContaining({ code: 'E_UNSUPPORTED_OP', message: expect.stringMatching(/layer "[^"]*unique[^"]*" \(unique\).*depends on tensor data/) }),
    );
  });
});
