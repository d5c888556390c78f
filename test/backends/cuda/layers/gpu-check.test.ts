/**
 * The GPU check (test/gpu/cuda-lowering.check.js) runs where no CI machine can; here its
 * plan assembly (modules per source, kernel indices, buffers for inputs, outputs, scratch and
 * weights, the comparison) runs on a stand-in GPU runtime backed by the CPU kernel emulator,
 * so a broken check is found before the GPU machine runs it.
 */
import * as lowering from '../../../../lib/backends/cuda/layers';
import * as reference from '../../../../lib/network/evaluate';
import type { LoweredStep } from '../../../../lib/backends/cuda/layers';
import type { PlanSpec } from '../../../../lib/gpu/plan';
import { dtypeInfo, type DType } from '../../../../lib/ir/dtype';
import { readNumbers } from '../../../../lib/kernels/access';
import { LAYER_KINDS } from '../../../../lib/network';
import { shapeSize, Tensor } from '../../../../lib/ir/tensor';
import { runSteps } from '../../../helpers/cuda-emulator';

class FakeDeviceTensor {
  constructor(
    readonly dtype: DType,
    readonly shape: readonly number[],
    readonly bytes: Uint8Array,
  ) {}
  static async allocate(dtype: DType, shape: readonly number[]): Promise<FakeDeviceTensor> {
    return new FakeDeviceTensor(dtype, shape, new Uint8Array(shapeSize(shape) * dtypeInfo(dtype).itemBytes).fill(0x5a));
  }
  async toHost(): Promise<Tensor> {
    const info = dtypeInfo(this.dtype);
    const copy = this.bytes.slice();
    return new Tensor(this.dtype, this.shape, new info.storage(copy.buffer, 0, copy.byteLength / (info.itemBytes / info.lanes)));
  }
  dispose(): void {}
}

interface FakeModule {
  source: string;
  key: string;
  kernels: string[];
  dispose(): void;
}

const fakeGpu = {
  Tensor,
  DeviceTensor: FakeDeviceTensor,
  toDevice: async (t: Tensor) => new FakeDeviceTensor(t.dtype, t.shape, new Uint8Array(t.data.buffer, t.data.byteOffset, t.data.byteLength).slice()),
  compileModule: async (source: string, kernels: string[], _device: number, options: { name: string }): Promise<FakeModule> => ({
    source,
    key: options.name,
    kernels,
    dispose() {},
  }),
  GpuPlan: {
    async create(spec: PlanSpec, buffers: FakeDeviceTensor[], modules: FakeModule[]) {
      const steps: LoweredStep[] = spec.steps.map((s) => {
        if (s.kind !== 'launch') return s;
        const m = modules[s.module]!;
        const { module: _m, kernel, ...rest } = s;
        return { ...rest, kernel: { key: m.key, entry: m.kernels[kernel]!, source: m.source } };
      });
      return {
        run: async () => runSteps(steps, buffers.map((b) => b.bytes)),
        dispose() {},
      };
    },
  },
};

// eslint-disable-next-line @typescript-eslint/no-require-imports
const check = require('../../../gpu/cuda-lowering.check.js') as {
  runCheck(lib: unknown, internals: unknown, only?: string): Promise<{ cases: number; kernels: number }>;
  timeRows(lib: unknown, internals: unknown, timed?: unknown[], repeats?: number): Promise<Array<{ timed: string; ok: boolean; launched: string[] }>>;
};

const internals = { ...lowering, ...reference, LAYER_KINDS, readNumbers };

describe('the cuda-lowering GPU check on an emulated GPU', () => {
  let log: jest.SpyInstance;
  beforeEach(() => {
    log = jest.spyOn(console, 'log').mockImplementation(() => {});
  });
  afterEach(() => log.mockRestore());

  test.each(['matmul/bcastBoth', 'slice/fill-value', 'topk/max.nan', 'convolution/2d.bfloat16', 'fill/int64.inputs', 'shape/rank0', 'gather/nd.b1', 'reduce/rows.max.specials', 'normalization/rows.group'])('%s passes', async (only) => {
    const result = await check.runCheck(fakeGpu, internals, only);
    expect(result.cases).toBeGreaterThan(0);
  });

  test('the timed row layers run, checked, at small sizes', async () => {
    const small = [
      ['layernorm', 'normalization', { axes: [1], epsilon: 1e-5, nbGroups: 1 }, [[3, 96], [1, 96], [1, 96]]],
      ['softmax', 'softmax', { axis: 1 }, [[2, 70]]],
    ];
    const report = await check.timeRows(fakeGpu, internals, small, 1);
    expect(report.map((r) => [r.timed, r.ok])).toEqual([
      ['layernorm', true],
      ['softmax', true],
    ]);
    expect(report[0]!.launched[0]).toMatch(/^normalization\.float32\.float32\.float32\.s1\.b1\.warp4v2 grid \[1\] block \[96\]$/);
  });

  test('a wrong timed result fails and prints the launches', async () => {
    const offByOne = (t: Tensor): Tensor => new Tensor(t.dtype, t.shape, (t.data as Float32Array).map((v) => v + 1));
    const wrong = { ...internals, executeLayer: (...args: Parameters<typeof reference.executeLayer>) => reference.executeLayer(...args).map(offByOne) };
    await expect(check.timeRows(fakeGpu, wrong, [['softmax', 'softmax', { axis: 1 }, [[2, 70]]]], 1)).rejects.toThrow(/1 failure/);
    expect(log.mock.calls.flat().join('\n')).toMatch(/timed\/softmax.*softmax\.float32\.warp4v2 grid \[1\] block \[64\]/);
  });

  test('a wrong result fails the check and names the case', async () => {
    // The expectation off by one in every element (the sample is int32).
    const offByOne = (t: Tensor): Tensor => new Tensor(t.dtype, t.shape, (t.data as Int32Array).map((v) => v + 1));
    const wrong = { ...internals, executeLayer: (...args: Parameters<typeof reference.executeLayer>) => reference.executeLayer(...args).map(offByOne) };
    await expect(check.runCheck(fakeGpu, wrong, 'cumulative/int32.in.fwd')).rejects.toThrow(/1 failure/);
    expect(log.mock.calls.flat().join('\n')).toMatch(/cumulative\/int32\.in\.fwd/);
  });
});
