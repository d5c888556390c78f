/**
 * ONNX NonMaxSuppression compiled into engine segments as an nms layer, whose row count is a
 * run-time dim of the Network: compiled on the reference and onnxruntime backends and compared
 * exactly with onnxruntime-node running the same ONNX file (several batches and classes, equal
 * scores, nothing selected, centre-size boxes, no score threshold); the partition report; and
 * the backends that do not take the layer: cuda (its plans are made before a run) and tensorrt
 * (INMSLayer lists other rows than ONNX), where the node runs in a fallback segment and the
 * build refuses the layer by name.
 */
import { cudaBackend } from '../../lib/backends/cuda';
import { encodeProgram, NMS_REFUSAL } from '../../lib/backends/tensorrt/program';
import { compile, dryRun } from '../../lib/compile';
import { convertWhole } from '../helpers/convert-compare';
import { loadOnnx } from '../../lib/frontends/onnx';
import { Tensor } from '../../lib/ir/tensor';
import { dataDependentTensors, Network } from '../../lib/network';
import type { Program } from '../../lib/runtime/program';
import { expectExact } from '../helpers/compare';
import { buildSymbolicModel, type SymModelSpec } from '../helpers/onnx-symbolic-model';
import { closeOrt, runOrtModel } from '../helpers/ort-single-op';

afterAll(() => closeOrt());

const f32 = (shape: number[], values: number[]): Tensor => Tensor.from('float32', shape, values);

/** boxes [2, 6, 4], scores [2, 3, 6] → NonMaxSuppression [N, 3] and its box column [N] (a Gather reading the run-time count). */
const spec = (attrs: { center_point_box?: number }, scoreThreshold: number | null): SymModelSpec => ({
  inputs: { boxes: { dtype: 'float32', dims: [2, 6, 4] }, scores: { dtype: 'float32', dims: [2, 3, 6] } },
  initializers: {
    max_per_class: Tensor.from('int64', [1], [3]),
    iou: f32([1], [0.4]),
    ...(scoreThreshold === null ? {} : { score: f32([1], [scoreThreshold]) }),
    column: Tensor.from('int64', [], [2]),
  },
  nodes: [
    { op: 'NonMaxSuppression', inputs: ['boxes', 'scores', 'max_per_class', 'iou', ...(scoreThreshold === null ? [] : ['score'])], outputs: ['selected'], name: 'nms', attrs },
    { op: 'Gather', inputs: ['selected', 'column'], outputs: ['box_ids'], attrs: { axis: 1 } },
  ],
  outputs: ['selected', 'box_ids'],
  opset: 11,
});

const CORNERS = spec({}, 0.2);
const CENTRES = spec({ center_point_box: 1 }, null);

/** Overlapping boxes (corners in either order) and scores: some classes select several boxes, some suppress. */
const BOXES = f32(
  [2, 6, 4],
  [
    0, 0, 1, 1, 0.1, 0.1, 1.1, 1.1, 1, 1, 0, 0, 2, 2, 3, 3, 2.2, 2, 3.2, 3, 5, 5, 6, 7,
    0, 0, 4, 4, 1, 1, 5, 5, 0, 0, 4, 4.2, 6, 6, 7, 7, 6.5, 6, 7.5, 7, 0, 6, 1, 7,
  ],
);
const INPUTS: Record<string, { boxes: Tensor; scores: Tensor }> = {
  random: { boxes: BOXES, scores: f32([2, 3, 6], Array.from({ length: 36 }, (_, i) => ((i * 29) % 17) / 17)) },
  // Equal scores everywhere: the lower box index goes first, and suppresses the ones after it.
  ties: { boxes: BOXES, scores: f32([2, 3, 6], new Array<number>(36).fill(0.5)) },
  // Every score at or below 0.2 (the threshold drops them; without one, all are candidates).
  low: { boxes: BOXES, scores: f32([2, 3, 6], Array.from({ length: 36 }, (_, i) => (i % 2 === 0 ? 0.2 : -1 - i))) },
};

function nmsVerdict(program: Program): { converted: boolean; segment: string | undefined } {
  const op = program.report.ops.find((o) => o.target === 'trt.non_max_suppression')!;
  return { converted: op.converted, segment: program.report.segments[op.segment]?.kind };
}

describe.each(['reference', 'onnxruntime'] as const)('NonMaxSuppression in an engine segment on the %s backend', (backend) => {
  const models = { corners: buildSymbolicModel(CORNERS), centres: buildSymbolicModel(CENTRES) };
  const programs: Partial<Record<keyof typeof models, Program>> = {};
  beforeAll(async () => {
    for (const [name, model] of Object.entries(models)) programs[name as keyof typeof models] = await compile(model, { backend, minBlockSize: 1 });
  });
  afterAll(() => Promise.all(Object.values(programs).map((p) => p.dispose())));

  it('the partition report puts NonMaxSuppression and the Gather after it in one engine segment', () => {
    for (const program of Object.values(programs)) {
      expect(nmsVerdict(program)).toEqual({ converted: true, segment: 'engine' });
      expect(program.report.segments.map((s) => s.kind)).toEqual(['engine']);
      expect(String(program.outputs[0]!.shape)).toMatch(/^\[data_dependent_\d+, 3\]$/);
    }
  });

  it.each((['corners', 'centres'] as const).flatMap((m) => Object.keys(INPUTS).map((i) => [m, i] as const)))('%s boxes, %s scores: the rows of onnxruntime-node on the same file', async (m, i) => {
    const { boxes, scores } = INPUTS[i]!;
    const expected = await runOrtModel(models[m], [boxes, scores]);
    const actual = Object.values(await programs[m]!.run({ boxes, scores }));
    expect(actual).toHaveLength(2);
    actual.forEach((t, k) => expectExact(t, expected[k]!, `${m}/${i} output ${k}`));
  });

  it('hand-computed: class by class, descending score, equal scores by box index; nothing below the threshold', async () => {
    const { boxes, scores } = INPUTS.ties!;
    const [selected] = Object.values(await programs.corners!.run({ boxes, scores }));
    // Batch 0: box 0 is kept and suppresses 1 (IoU 0.81 / 1.19 = 0.68) and 2 (the same corners flipped: IoU 1); 3 is kept
    // and suppresses 4 (IoU 0.8 / 1.2 = 0.67); 5 is kept. Batch 1: 0 is kept; 1 too (IoU 9 / 23 = 0.39 ≤ 0.4); 2 is
    // suppressed (IoU 16 / 16.8 = 0.95); 3 is kept, the third of 3 per class. The same rows for each of the 3 classes.
    const perClass = (batch: number, ids: number[]): number[] => [0, 1, 2].flatMap((c) => ids.flatMap((id) => [batch, c, id]));
    expectExact(selected!, Tensor.from('int64', [18, 3], [...perClass(0, [0, 3, 5]), ...perClass(1, [0, 1, 3])]));
    const [none, ids] = Object.values(await programs.corners!.run(INPUTS.low!));
    expectExact(none!, Tensor.from('int64', [0, 3], []));
    expectExact(ids!, Tensor.from('int64', [0], []));
  });
});

describe('NonMaxSuppression where the backend does not take an nms layer', () => {
  const model = buildSymbolicModel(CORNERS);

  it('dryRun: an engine segment on onnxruntime; a fallback segment on cuda and tensorrt, saying why', async () => {
    const on = async (backend: 'onnxruntime' | 'cuda' | 'tensorrt') => (await dryRun(model, { backend, minBlockSize: 1 })).ops.find((o) => o.target === 'trt.non_max_suppression')!;
    expect((await on('onnxruntime')).converted).toBe(true);
    expect((await on('cuda')).converted).toBe(false);
    const trt = await on('tensorrt');
    expect(trt.converted).toBe(false);
    expect(trt.reasons.join('\n')).toContain(`this backend refuses nms layers: ${NMS_REFUSAL}`);
  });

  it('the same answer from a fallback segment (the interpreter) as from onnxruntime-node', async () => {
    const program = await compile(model, { backend: 'reference', minBlockSize: 1, torchExecutedOps: ['trt.non_max_suppression'] });
    try {
      expect(nmsVerdict(program).converted).toBe(false);
      const { boxes, scores } = INPUTS.random!;
      const expected = await runOrtModel(model, [boxes, scores]);
      Object.values(await program.run({ boxes, scores })).forEach((t, k) => expectExact(t, expected[k]!));
    } finally {
      await program.dispose();
    }
  });

  const network = (): Network => {
    const g = loadOnnx(model);
    return convertWhole(g, { dataDependentSizes: 'anywhere' });
  };

  it('the converted network: one nms layer whose rows, and the gather after it, have a run-time count', () => {
    const net = network();
    const nms = net.layers.find((l) => l.params.kind === 'nms')!;
    expect(nms.params).toEqual({ kind: 'nms', maxOutputBoxesPerClass: 3, iouThreshold: expect.closeTo(0.4, 6), scoreThreshold: expect.closeTo(0.2, 6), centerPointBox: false });
    expect(net.tensor(nms.outputs[0]!).shape).toEqual([-1, 3]);
    const sized = dataDependentTensors(net);
    expect(net.outputs.map((o) => sized.get(o.tensor)?.name)).toEqual([nms.name, nms.name]);
  });

  it('the tensorrt replay refuses the nms layer by name (E_UNSUPPORTED_OP) rather than give other rows', () => {
    expect(() => encodeProgram(network(), { precisions: ['float32'] } as never)).toThrow(
      expect.objectContaining({ code: 'E_UNSUPPORTED_OP', message: expect.stringMatching(/cannot build layer "nms[^"]*" \(nms\).*orders the selected boxes/) }),
    );
  });

  it('the cuda backend refuses the nms layer at build, naming it', async () => {
    await expect(cudaBackend.build(network(), {} as never, { type: 'gpu', gpuId: 0 } as never)).rejects.toThrow(
      expect.objectContaining({ code: 'E_UNSUPPORTED_OP', message: expect.stringMatching(/layer "nms[^"]*" \(nms\).*depends on tensor data/) }),
    );
  });
});
