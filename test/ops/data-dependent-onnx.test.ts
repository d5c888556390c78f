/**
 * Ops whose output size depends on tensor data (NonZero, Compress, Unique,
 * NonMaxSuppression): the kernels against hand-computed values, the ONNX mappers through the
 * interpreter (the data-dependent symbol bound at run time), the converter registry's verdicts
 * (refused where the backend's engines cannot hold such a size; NonZero converted where they
 * can, the others never), and compile() + run on the reference backend. NonZero compiled into
 * engines: test/ops/nonzero-compiled.test.ts.
 */
import { compile } from '../../lib/compile';
import { registerConverter, selectConverter, unregisterConverter } from '../../lib/conversion/registry';
import { loadOnnx } from '../../lib/frontends/onnx';
import { interpret } from '../../lib/interpreter';
import { Tensor } from '../../lib/ir/tensor';
import { loadProgramBuffer, saveProgramBuffer } from '../../lib/runtime/program-file';
import { compress, nonMaxSuppression, nonzero, unique } from '../../lib/kernels/data-dependent';
import { expectTensor } from '../helpers/compare';
import { buildSymbolicModel } from '../helpers/onnx-symbolic-model';

const f32 = (shape: number[], values: number[]): Tensor => Tensor.from('float32', shape, values);

describe('data-dependent kernels', () => {
  it('nonzero lists indices column by column in row-major order', () => {
    expectTensor(nonzero(f32([2, 3], [0, 1, 0, 2, 0, 3])), 'int64', [2, 3], [0, 1, 1, 1, 0, 2]);
    expectTensor(nonzero(f32([2], [0, 0])), 'int64', [1, 0], []);
  });

  it('compress keeps the slices whose condition is true; a short condition drops the rest', () => {
    const x = f32([3, 2], [1, 2, 3, 4, 5, 6]);
    expectTensor(compress(x, Tensor.from('bool', [2], [0, 1]), 0), 'float32', [1, 2], [3, 4]);
    expectTensor(compress(x, Tensor.from('bool', [2], [1, 1]), 1), 'float32', [3, 2], [1, 2, 3, 4, 5, 6]);
    expectTensor(compress(x, Tensor.from('bool', [5], [0, 1, 0, 0, 1]), null), 'float32', [2], [2, 5]);
    expect(() => compress(x, Tensor.from('bool', [4], [0, 0, 0, 1]), 0)).toThrow(expect.objectContaining({ code: 'E_BAD_INPUT' }));
  });

  it('unique: sorted, by first occurrence, and along an axis', () => {
    const x = f32([6], [2, 1, 1, 3, 4, 3]);
    const s = unique(x, null, true);
    expectTensor(s.values, 'float32', [4], [1, 2, 3, 4]);
    expectTensor(s.indices, 'int64', [4], [1, 0, 3, 4]);
    expectTensor(s.inverse, 'int64', [6], [1, 0, 0, 2, 3, 2]);
    expectTensor(s.counts, 'int64', [4], [2, 1, 2, 1]);
    const u = unique(x, null, false);
    expectTensor(u.values, 'float32', [4], [2, 1, 3, 4]);
    expectTensor(u.inverse, 'int64', [6], [0, 1, 1, 2, 3, 2]);
    const rows = unique(f32([3, 2], [1, 0, 0, 1, 1, 0]), 0, true);
    expectTensor(rows.values, 'float32', [2, 2], [0, 1, 1, 0]);
    expectTensor(rows.counts, 'int64', [2], [1, 2]);
  });

  it('non-maximum suppression drops boxes overlapping a better one past the threshold', () => {
    // Box 1 overlaps box 0 with IoU 0.81 (above 0.5); box 2 is apart. A score equal to the
    // score threshold is dropped.
    const boxes = f32([1, 3, 4], [0, 0, 1, 1, 0, 0.1, 1, 1.1, 0, 10, 1, 11]);
    const scores = f32([1, 1, 3], [0.9, 0.95, 0.3]);
    const opts = { maxPerClass: 3, iouThreshold: 0.5, scoreThreshold: null, centerPointBox: false };
    expectTensor(nonMaxSuppression(boxes, scores, opts), 'int64', [2, 3], [0, 0, 1, 0, 0, 2]);
    expectTensor(nonMaxSuppression(boxes, scores, { ...opts, scoreThreshold: Math.fround(0.3) }), 'int64', [1, 3], [0, 0, 1]);
    expectTensor(nonMaxSuppression(boxes, scores, { ...opts, maxPerClass: 0 }), 'int64', [0, 3], []);
  });
});

describe('ONNX NonZero, Compress, Unique, NonMaxSuppression', () => {
  it('NonZero runs with its count bound at run time, per run', () => {
    const g = loadOnnx(buildSymbolicModel({ inputs: { x: { dtype: 'float32', dims: [2, 2] } }, nodes: [{ op: 'NonZero', inputs: ['x'], outputs: ['y'] }], outputs: ['y'], opset: 13 }));
    expect(g.outputs[0]!.tensorType.shape).toEqual([2, { op: 'sym', name: 'data_dependent_0' }]);
    expect(g.symbols.get('data_dependent_0')).toEqual({ min: 0, max: 4 });
    expectTensor(interpret(g, { x: f32([2, 2], [1, 0, 1, 1]) })[0]!, 'int64', [2, 3], [0, 1, 1, 0, 0, 1]);
    expectTensor(interpret(g, { x: f32([2, 2], [0, 0, 0, 0]) })[0]!, 'int64', [2, 0], []);
  });

  it('a node reading a data-dependent size is refused where the engines cannot hold one; taken where they can', () => {
    const g = loadOnnx(
      buildSymbolicModel({
        inputs: { x: { dtype: 'float32', dims: [4] } },
        nodes: [
          { op: 'NonZero', inputs: ['x'], outputs: ['i'] },
          { op: 'Cast', inputs: ['i'], outputs: ['y'], attrs: { to: 1 } },
        ],
        outputs: ['y'],
        opset: 13,
      }),
    );
    const cast = g.nodes.find((n) => n.target === 'aten._to_copy.default')!;
    const verdict = selectConverter(cast);
    expect(verdict.ok).toBe(false);
    expect(!verdict.ok && verdict.reasons[0]).toMatch(/depends on tensor data/);
    expect(selectConverter(cast, { dataDependentSizes: 'anywhere' }).ok).toBe(true);
    expect(selectConverter(g.nodes.find((n) => n.target === 'trt.nonzero')!, { dataDependentSizes: 'anywhere' }).ok).toBe(true);
  });

  it('a node making a data-dependent size needs a converter that computes it', () => {
    // A Reshape whose shape the model computes is imported at run time (trt.deferred_node): no converter takes it.
    const deferred = loadOnnx(
      buildSymbolicModel({ inputs: { x: { dtype: 'float32', dims: [4] }, v: { dtype: 'int64', dims: [2] } }, nodes: [{ op: 'Identity', inputs: ['v'], outputs: ['k'] }, { op: 'Reshape', inputs: ['x', 'k'], outputs: ['y'] }], outputs: ['y'], opset: 13 }),
    );
    const node = deferred.nodes.find((n) => n.target === 'trt.deferred_node')!;
    expect(selectConverter(node, { dataDependentSizes: 'anywhere' })).toEqual({ ok: false, reasons: ['no converter is registered for trt.deferred_node'] });
    // One that does not say it computes the size is passed over, with the reason, for the one that does.
    const g = loadOnnx(buildSymbolicModel({ inputs: { x: { dtype: 'float32', dims: [4] } }, nodes: [{ op: 'Unique', inputs: ['x'], outputs: ['u'] }], outputs: ['u'], opset: 13 }));
    const plain = registerConverter('trt.unique', () => [], { priority: 10, name: 'plain unique' });
    try {
      const verdict = selectConverter(g.nodes.find((n) => n.target === 'trt.unique')!, { dataDependentSizes: 'anywhere' });
      expect(verdict.ok && verdict.converter.name).toBe('trt.unique');
    } finally {
      unregisterConverter(plain);
    }
    const only = registerConverter('trt.deferred_node', () => []);
    try {
      expect(selectConverter(node, { dataDependentSizes: 'anywhere' })).toEqual({
        ok: false,
        reasons: [expect.stringMatching(/^trt\.deferred_node: it does not compute data_dependent_\S+, data_dependent_\S+, a size that depends on tensor data$/)],
      });
    } finally {
      unregisterConverter(only);
    }
  });

  it('compile() + run on the reference backend: NonZero and what reads its count build into the engine', async () => {
    const model = buildSymbolicModel({
      inputs: { x: { dtype: 'float32', dims: [2, 3] } },
      nodes: [
        { op: 'Relu', inputs: ['x'], outputs: ['r'] },
        { op: 'NonZero', inputs: ['r'], outputs: ['i'] },
        { op: 'Cast', inputs: ['i'], outputs: ['f'], attrs: { to: 1 } },
        { op: 'Neg', inputs: ['f'], outputs: ['y'] },
        { op: 'Add', inputs: ['r', 'r'], outputs: ['z'] },
      ],
      outputs: ['y', 'z'],
      opset: 13,
    });
    const program = await compile(model, { backend: 'reference', minBlockSize: 1 });
    try {
      expect(program.report.segments.map((s) => s.kind)).toEqual(['engine']);
      const run = async (values: number[]): Promise<Tensor[]> => Object.values(await program.run({ x: f32([2, 3], values) }));
      const [y, z] = await run([1, -1, 2, -3, 0, 4]);
      expectTensor(y!, 'float32', [2, 3], [-0, -0, -1, -0, -2, -2]);
      expectTensor(z!, 'float32', [2, 3], [2, 0, 4, 0, 0, 8]);
      const [y2] = await run([-1, -1, -1, -1, -1, 5]);
      expectTensor(y2!, 'float32', [2, 1], [-1, -2]);
    } finally {
      await program.dispose();
    }
  });

  it('a program whose output size is data-dependent: printed with its symbol, saved, loaded and run', async () => {
    const model = buildSymbolicModel({
      inputs: { x: { dtype: 'float32', dims: [2, 3] } },
      nodes: [
        { op: 'Relu', inputs: ['x'], outputs: ['r'] },
        { op: 'NonZero', inputs: ['r'], outputs: ['i'] },
        { op: 'Cast', inputs: ['i'], outputs: ['y'], attrs: { to: 1 } },
      ],
      outputs: ['y'],
      opset: 13,
    });
    const program = await compile(model, { backend: 'reference', minBlockSize: 1 });
    const loaded = await loadProgramBuffer(saveProgramBuffer(program));
    try {
      expect(String(loaded.outputs[0]!.shape)).toMatch(/^\[2, data_dependent_\d+\]$/);
      const [y] = await loaded.run([f32([2, 3], [1, -1, 2, -3, 0, 4])]);
      expectTensor(y!, 'float32', [2, 3], [0, 0, 1, 0, 2, 2]);
    } finally {
      await Promise.all([program.dispose(), loaded.dispose()]);
    }
  });

  it('Compress with a constant condition keeps a static shape; Unique gives its four outputs', () => {
    const g = loadOnnx(
      buildSymbolicModel({
        inputs: { x: { dtype: 'float32', dims: [3, 2] } },
        initializers: { c: Tensor.from('bool', [3], [1, 0, 1]) },
        nodes: [
          { op: 'Compress', inputs: ['x', 'c'], outputs: ['y'], attrs: { axis: 0 } },
          { op: 'Unique', inputs: ['x'], outputs: ['u', 'i', 'inv', 'n'], attrs: { sorted: 1 } },
        ],
        outputs: ['y', 'u', 'i', 'inv', 'n'],
        opset: 13,
      }),
    );
    expect(g.outputs[0]!.tensorType.shape).toEqual([2, 2]);
    const [y, u, , inv, n] = interpret(g, { x: f32([3, 2], [1, 2, 2, 3, 1, 5]) });
    expectTensor(y!, 'float32', [2, 2], [1, 2, 1, 5]);
    expectTensor(u!, 'float32', [4], [1, 2, 3, 5]);
    expectTensor(inv!, 'int64', [6], [0, 1, 1, 2, 0, 3]);
    expectTensor(n!, 'int64', [4], [2, 2, 1, 1]);
  });

  it('bad attributes are E_BAD_MODEL naming the node', () => {
    const model = (op: string, attrs: Record<string, number>, inputs = ['x']): Uint8Array =>
      buildSymbolicModel({ inputs: { x: { dtype: 'float32', dims: [1, 2, 4] }, s: { dtype: 'float32', dims: [1, 1, 2] } }, nodes: [{ op, inputs, outputs: ['y'], attrs, name: 'n0' }], outputs: ['y'], opset: 13 });
    expect(() => loadOnnx(model('Unique', { axis: 3 }))).toThrow(expect.objectContaining({ code: 'E_BAD_MODEL', message: expect.stringContaining('ONNX node "n0" (Unique)') }));
    expect(() => loadOnnx(model('Unique', { sorted: 2 }))).toThrow(expect.objectContaining({ code: 'E_BAD_MODEL' }));
    expect(() => loadOnnx(model('NonMaxSuppression', { center_point_box: 2 }, ['x', 's']))).toThrow(expect.objectContaining({ code: 'E_BAD_MODEL', message: expect.stringContaining('NonMaxSuppression') }));
  });
});
