/**
 * program.profile(): per-layer times of every segment, in one shape for every backend. The
 * reference backend's entries are its layers (each that reaches an output, once, in order)
 * timed by wall clock; fallback segments' entries are their nodes; onnxruntime's come from
 * its profiler; the cuda backend's plan steps are mapped (a fake runner here); a tensorrt
 * engine is refused with a typed error before anything runs.
 */
import * as path from 'node:path';

import { deserializeEngine } from '../../lib/backends/reference';
import { layerOfNode, nodeTimes } from '../../lib/backends/onnxruntime/run/profile';
import { profileCudaEngine, stepsAsLayers } from '../../lib/backends/cuda/profile';
import type { StepProfile } from '../../lib/backends/cuda/run/runner';
import { compile } from '../../lib/compile';
import type { Engine } from '../../lib/engine/backend';
import type { ProgramProfile } from '../../lib/engine/profile';
import { Tensor } from '../../lib/ir/tensor';
import { liveLayers } from '../../lib/network';
import { checkProfilable, resolveProfileOptions, traceToModel } from '../../lib/runtime/profile';
import type { Program } from '../../lib/runtime/program';
import type { ProgramData } from '../../lib/runtime/segments';
import { rejection, thrownError } from '../helpers/errors';
import { FIXTURES } from '../helpers/fixtures';
import { Random } from '../helpers/random';

const mlp = path.join(FIXTURES, 'mlp', 'model.onnx');
const rng = new Random(5);
const input = (): Tensor => Tensor.from('float32', [4, 32], Array.from({ length: 4 * 32 }, () => rng.uniform(-1, 1)));

/** The live layers of each reference engine segment of `program`, by segment index. */
function referenceLayers(program: Program): Map<number, Array<{ name: string; kind: string }>> {
  const out = new Map<number, Array<{ name: string; kind: string }>>();
  program.data.segments.forEach((s, i) => {
    if (s.kind === 'engine') out.set(i, liveLayers(deserializeEngine(s.engine)).map((l) => ({ name: l.name, kind: l.params.kind })));
  });
  return out;
}

function expectConsistent(profile: ProgramProfile, runs: number): void {
  expect(profile.runs).toBe(runs);
  const sum = profile.entries.reduce((a, e) => a + e.ms, 0);
  expect(profile.totalMs).toBeCloseTo(sum, 9);
  expect(profile.entries.reduce((a, e) => a + e.share, 0)).toBeCloseTo(1, 9);
  for (const e of profile.entries) {
    expect(e.ms).toBeGreaterThanOrEqual(0);
    expect(e.share).toBeCloseTo(e.ms / profile.totalMs, 9);
  }
  for (const s of profile.segments) {
    expect(s.layerMs).toBeCloseTo(profile.entries.filter((e) => e.segment === s.index).reduce((a, e) => a + e.ms, 0), 9);
    expect(s.ms).toBeGreaterThan(0);
  }
  // A whole run costs at least its segments.
  expect(profile.wallMs).toBeGreaterThanOrEqual(profile.segments.reduce((a, s) => a + s.ms, 0) * 0.999);
}

describe('the reference backend', () => {
  test('an entry per layer, in order, with shares that add up to 1 and the model node each came from', async () => {
    const program = await compile(mlp, { backend: 'reference', inputs: [{ shape: [4, 32] }] });
    try {
      const profile = await program.profile([input()], { runs: 3 });
      expectConsistent(profile, 3);
      const layers = referenceLayers(program).get(0)!;
      expect(layers.length).toBeGreaterThan(10);
      expect(profile.entries.map((e) => ({ name: e.name, kind: e.kind }))).toEqual(layers);
      expect(profile.segments).toEqual([expect.objectContaining({ index: 0, kind: 'engine', backend: 'reference', timing: 'host-wall-clock' })]);
      for (const e of profile.entries) expect(e).toMatchObject({ segment: 0, segmentKind: 'engine', backend: 'reference', timing: 'host-wall-clock' });
      // Every layer but the weight constants is named after the node it was converted from.
      const traced = profile.entries.filter((e) => e.kind !== 'constant');
      expect(traced.length).toBeGreaterThan(0);
      for (const e of traced) {
        const op = program.report.ops.find((o) => o.node === e.from?.node);
        expect(op).toBeDefined();
        expect(e.from!.target).toBe(op!.target);
        expect(e.name === op!.node || e.name.startsWith(`${op!.node}/`)).toBe(true);
      }
      expect(traced.map((e) => e.from!.target)).toContain('aten.linear.default');
    } finally {
      await program.dispose();
    }
  });

  test('a program of engine and fallback segments: every segment profiled, its entries carry it', async () => {
    const program = await compile(mlp, { backend: 'reference', inputs: [{ shape: [4, 32] }], torchExecutedOps: ['aten.erf.default'], minBlockSize: 1 });
    try {
      expect(program.data.segments.map((s) => s.kind)).toEqual(['engine', 'fallback', 'engine']);
      const profile = await program.profile({ input0: input() }, { runs: 2, warmup: 0 });
      expectConsistent(profile, 2);
      expect(profile.segments.map((s) => [s.kind, s.backend])).toEqual([
        ['engine', 'reference'],
        ['fallback', 'interpreter'],
        ['engine', 'reference'],
      ]);
      const layers = referenceLayers(program);
      for (const i of [0, 2]) expect(profile.entries.filter((e) => e.segment === i).map((e) => e.name)).toEqual(layers.get(i)!.map((l) => l.name));
      const fallback = profile.entries.filter((e) => e.segment === 1);
      expect(fallback).toEqual([expect.objectContaining({ kind: 'aten.erf.default', segmentKind: 'fallback', backend: 'interpreter', from: { node: fallback[0]!.name, target: 'aten.erf.default' } })]);
    } finally {
      await program.dispose();
    }
  });

  test('bad options and inputs are refused as run() refuses them', async () => {
    const program = await compile(mlp, { backend: 'reference', inputs: [{ shape: [4, 32] }] });
    try {
      expect((await rejection(program.profile([input()], { runs: 0 }))).message).toContain('runs must be an integer >= 1');
      expect((await rejection(program.profile([input()], { repeats: 3 } as never))).message).toContain('unknown option "repeats"');
      expect((await rejection(program.profile([Tensor.from('float32', [4, 31], new Array(124).fill(0))]))).code).toBe('E_BAD_INPUT');
    } finally {
      await program.dispose();
    }
    expect((await rejection(program.profile([input()]))).code).toBe('E_INVALID_ARGUMENT');
  });
});

test('resolveProfileOptions fills the defaults', () => {
  expect(resolveProfileOptions(undefined)).toEqual({ runs: 10, warmup: 1 });
  expect(resolveProfileOptions({ runs: 3 })).toEqual({ runs: 3, warmup: 1 });
  expect(() => resolveProfileOptions({ warmup: -1 })).toThrow('warmup must be an integer >= 0');
});

test('the onnxruntime backend: its profiler per node, traced back to the layers and the model', async () => {
  const program = await compile(mlp, { backend: 'onnxruntime', inputs: [{ shape: [4, 32] }] });
  try {
    const profile = await program.profile([input()], { runs: 3 });
    expectConsistent(profile, 3);
    expect(profile.segments).toEqual([expect.objectContaining({ backend: 'onnxruntime', timing: 'onnxruntime-profiler' })]);
    expect(profile.entries.length).toBeGreaterThan(2);
    // onnxruntime's op types; its fusions rename nodes, the rest keep their layer's name.
    expect(profile.entries.map((e) => e.kind)).toEqual(expect.arrayContaining(['Softmax']));
    expect(profile.entries.find((e) => e.kind === 'Softmax')!.from?.target).toBe('aten._softmax.default');
    // The program runs as before (on this thread, where warmStart() put it).
    const x = input();
    const [y] = await program.run([x]);
    expect(y!.shape).toEqual([4, 10]);
  } finally {
    await program.dispose();
  }
});

test("onnxruntime's trace: a node's first event (the untimed run) is dropped; names lead back to layers", () => {
  const event = (name: string, dur: number, op = 'Gemm') => ({ cat: 'Node', name: `${name}_kernel_time`, dur, args: { op_name: op } });
  const events = [{ cat: 'Session', name: 'model_run', dur: 999 }, event('a#1/MatMulAddFusion', 100), event('b', 7, 'Relu'), event('a#1/MatMulAddFusion', 20), event('b', 3, 'Relu'), event('a#1/MatMulAddFusion', 40), event('b', 5, 'Relu')];
  expect(nodeTimes(events, 2)).toEqual([
    { name: 'a#1/MatMulAddFusion', kind: 'Gemm', layer: 'a/MatMulAddFusion', ms: 0.03 },
    { name: 'b', kind: 'Relu', layer: 'b', ms: 0.004 },
  ]);
  expect(layerOfNode('fused x/y#2')).toBe('x/y');
});

test('the cuda backend: CudaRunner.profile() steps become layers with their step kind', async () => {
  const steps: StepProfile[] = [
    { step: 0, layer: 'conv/conv', kind: 'convolution', stepKind: 'conv', ms: 0.5, flops: 10 },
    { step: 1, layer: 'relu', kind: 'activation', stepKind: 'launch', ms: 0.25 },
  ];
  const asked: unknown[] = [];
  const fake = { profile: async (_inputs: unknown, options: unknown) => (asked.push(options), steps) } as unknown as Engine;
  const profile = await profileCudaEngine(fake, {}, { runs: 7 });
  expect(asked).toEqual([{ repeats: 7, mode: 'launch' }]);
  expect(profile).toEqual(stepsAsLayers(steps));
  expect(profile).toEqual({
    timing: 'cuda-step',
    layers: [
      { name: 'conv/conv', kind: 'convolution', detail: 'conv', ms: 0.5 },
      { name: 'relu', kind: 'activation', detail: 'launch', ms: 0.25 },
    ],
  });
  expect((await rejection(profileCudaEngine({} as Engine, {}, { runs: 1 }))).code).toBe('E_INVALID_ARGUMENT');
});

test('traceToModel: the longest node name that is the layer or a /-prefix of it, within the layer’s segment', () => {
  const entry = (name: string, segment: number) => ({ name, kind: 'k', segment, segmentKind: 'engine' as const, backend: 'reference', timing: 'host-wall-clock' as const, ms: 1, share: 0.5 });
  const report = {
    ops: [
      { node: '/a', target: 'aten.relu.default', converted: true, reasons: [], segment: 0 },
      { node: '/a/b', target: 'aten.add.Tensor', converted: true, reasons: [], segment: 0 },
      { node: '/a/b', target: 'aten.mul.Tensor', converted: true, reasons: [], segment: 1 },
    ],
    segments: [
      { index: 0, kind: 'engine' as const, ops: 2, inputs: [], outputs: [] },
      { index: 1, kind: 'engine' as const, ops: 1, inputs: [], outputs: [] },
    ],
  };
  const entries = [entry('/a/b/bias', 0), entry('/a/c', 0), entry('/a/b', 1), entry('w', 0), entry('x/to_float16+/a/b/conv+/a', 0)];
  const traced = traceToModel({ runs: 1, entries, segments: [], totalMs: 5, wallMs: 5 }, report);
  expect(traced.entries.map((e) => e.from)).toEqual([
    { node: '/a/b', target: 'aten.add.Tensor' },
    { node: '/a', target: 'aten.relu.default' },
    { node: '/a/b', target: 'aten.mul.Tensor' },
    undefined,
    // A step the cuda backend fused from several layers: the first of them that traces.
    { node: '/a/b', target: 'aten.add.Tensor' },
  ]);
});

test('a tensorrt engine is refused before anything runs, naming the segment and what is missing', () => {
  const data = { inputs: [], outputs: [], constants: {}, segments: [{ kind: 'engine', backend: 'tensorrt', engine: new Uint8Array(), inputs: [], outputs: [] }] } as unknown as ProgramData;
  const error = thrownError(() => checkProfilable(data));
  expect(error.code).toBe('E_UNSUPPORTED_OP');
  expect(error.message).toContain("segment 0 is a tensorrt engine: the native addon does not bind TensorRT's IProfiler");
  expect(error.details).toMatchObject({ backend: 'tensorrt', segment: 0 });
});
