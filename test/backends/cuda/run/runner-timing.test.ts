/**
 * The cuda runner's timing cache and timing budget (lib/backends/cuda/run/timing-cache.ts) on the
 * simulated device: the addon's binding is host memory, and GpuPlan.create does what the
 * native Prepare does with a timed GEMM step (takes a remembered choice, else times it when the
 * budget allows, else keeps the first) on the simulated process's choices. Each "process" is a
 * fresh module registry, as a restarted service is. test/gpu/timing-cache.check.js checks the
 * same on the H200 with cuBLASLt's real choices.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { CudaRunner as CudaRunnerType, CudaRunnerOptions } from '../../../../lib/backends/cuda/run/runner';
import type { LoweredStep, LoweringContext } from '../../../../lib/backends/cuda/layers';
import type { GpuPlan as GpuPlanType, PlanCreateOptions } from '../../../../lib/gpu/gpu-plan';
import type { PlanSpec } from '../../../../lib/gpu/plan';
import type { fakeLowering } from '../helpers';

jest.mock('../../../../lib/gpu/binding', () => require('../../../helpers/simulated-gpu').bindingModule);
jest.mock('../../../../lib/devices', () => ({ devices: async () => ({ driver: null, devices: [{ ordinal: 0, name: 'NVIDIA H200' }] }) }));

/** A fake lowering plus, before the exp layer's launch, a GEMM whose candidates are timed (tune 8). */
function loweringWithGemm(tune: number, fake: typeof fakeLowering): (ctx: LoweringContext) => LoweredStep[] {
  const base = fake();
  return (ctx) => {
    const steps = base(ctx);
    if (ctx.layer.name !== 'exp') return steps;
    // D is the exp output, which the launch after it overwrites: the GEMM's result is not used.
    const gemm: LoweredStep = { kind: 'gemm', a: ctx.inputs[0]!.at, b: ctx.inputs[0]!.at, d: ctx.outputs[0]!.at, m: 1, n: 2, k: 3, tune };
    return [gemm, ...steps];
  };
}

interface Process {
  CudaRunner: typeof CudaRunnerType;
  /** Builds, loads and runs the test network once in this process. */
  runOnce(options: CudaRunnerOptions, tune?: number): Promise<CudaRunnerType>;
  sim: typeof import('../../../helpers/simulated-gpu');
  /** The plan-creation options each plan was given. */
  created: PlanCreateOptions[];
}

/** A fresh module registry (a new process): the runner module, the simulated device, a fake GpuPlan.create. */
function newProcess(): Process {
  let p!: Process;
  jest.isolateModules(() => {
    const { CudaRunner } = require('../../../../lib/backends/cuda/run/runner') as typeof import('../../../../lib/backends/cuda/run/runner');
    const { GpuPlan } = require('../../../../lib/gpu/gpu-plan') as typeof import('../../../../lib/gpu/gpu-plan');
    const sim = require('../../../helpers/simulated-gpu') as typeof import('../../../helpers/simulated-gpu');
    const { encodePlan } = require('../../../../lib/gpu/plan') as typeof import('../../../../lib/gpu/plan');
    const created: PlanCreateOptions[] = [];
    jest.spyOn(GpuPlan, 'create').mockImplementation(async (spec: PlanSpec, _buffers, _modules, device = 0, options: PlanCreateOptions = {}) => {
      encodePlan(spec);
      created.push(options);
      const choices = sim.simulatedChoices(Number(device));
      for (const step of spec.steps) {
        if (step.kind !== 'gemm' || (step.tune ?? 0) < 2) continue;
        const problem = `m=${step.m} n=${step.n} k=${step.k}`;
        if (choices.has(problem)) sim.simulatedGpu.tuning.reused++;
        else if (options.tuningBudgetMs === 0) sim.simulatedGpu.tuning.overBudget++;
        else {
          choices.set(problem, new Uint8Array(64).fill(7));
          sim.simulatedGpu.tuning.timed++;
        }
      }
      // Timing is what this file checks: execute() hands back the plan's own output buffers.
      const execute = async (_inputs: unknown, outputs: Array<[unknown, unknown]>) => ({ outputs: outputs.map(([ours, given]) => given ?? ours), status: 0 });
      return { run: async () => undefined, capture: async () => undefined, replay: async () => undefined, execute, dispose: () => undefined, steps: spec.steps.length } as unknown as GpuPlanType;
    });
    // Everything of the network's in this registry: weights are found by tensor identity.
    const { buildCudaEngine } = require('../../../../lib/backends/cuda/build') as typeof import('../../../../lib/backends/cuda/build');
    const { deserializeCudaEngine } = require('../../../../lib/backends/cuda/engine-format') as typeof import('../../../../lib/backends/cuda/engine-format');
    const { DEFAULT_BUILD_CONFIG } = require('../../../../lib/engine/build-config') as typeof import('../../../../lib/engine/build-config');
    const helpers = require('../helpers') as typeof import('../helpers');
    const { Tensor } = require('../../../../lib/ir/tensor') as typeof import('../../../../lib/ir/tensor');
    const runOnce = async (options: CudaRunnerOptions, tune = 8): Promise<CudaRunnerType> => {
      const lower = loweringWithGemm(tune, helpers.fakeLowering);
      const target = { name: 'NVIDIA H200', computeCapability: { major: 9, minor: 0 } };
      const engine = deserializeCudaEngine(await buildCudaEngine(helpers.weightedNetwork(), DEFAULT_BUILD_CONFIG, target, { lower, compile: helpers.fakeCompiler() }));
      const runner = await CudaRunner.load(engine, 0, { compile: helpers.fakeCompiler(), lower, ...options });
      await runner.run({ x: Tensor.from('float32', [2, 3], [1, 2, 3, 4, 5, 6]) });
      return runner;
    };
    p = { CudaRunner, runOnce, sim, created };
  });
  return p;
}

const runOnce = (p: Process, options: CudaRunnerOptions, tune?: number): Promise<CudaRunnerType> => p.runOnce(options, tune);

let dir: string;
const saved = { ...process.env };
beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'trtn-runner-timing-'));
  for (const k of ['TENSORRT_NODE_TIMING_CACHE', 'TENSORRT_NODE_ENGINE_CACHE', 'TENSORRT_NODE_TUNING_BUDGET_MS']) delete process.env[k];
});
afterEach(() => {
  fs.rmSync(dir, { recursive: true, force: true });
  process.env = { ...saved };
  jest.restoreAllMocks();
});

describe('the cuda runner and its timing cache', () => {
  test('a timed choice is written to the file, scoped by device and cuBLASLt version, and a new process takes it instead of timing', async () => {
    const file = path.join(dir, 'cuda-timing.json');
    const first = newProcess();
    (await runOnce(first, { timingCache: file })).dispose();
    expect(first.sim.simulatedGpu.tuning).toMatchObject({ timed: 1, reused: 0 });
    const written = JSON.parse(fs.readFileSync(file, 'utf8'));
    expect(written).toEqual({
      format: 'tensorrt-node cuda timing cache',
      version: 1,
      scopes: [{ device: 'NVIDIA H200', computeCapability: '9.0', cublasLt: 130100, gemms: { 'm=1 n=2 k=3': Buffer.alloc(64, 7).toString('base64') } }],
    });

    const second = newProcess();
    const before = fs.statSync(file).mtimeMs;
    (await runOnce(second, { timingCache: file })).dispose();
    expect(second.sim.simulatedGpu.tuning).toMatchObject({ timed: 0, reused: 1 });
    expect(fs.statSync(file).mtimeMs).toBe(before); // nothing new: not written again

    // Another cuBLASLt: the file's scope does not apply, the problem is timed and a second scope added.
    const third = newProcess();
    third.sim.simulatedGpu.cublasLtVersion = 130200;
    (await runOnce(third, { timingCache: file })).dispose();
    expect(third.sim.simulatedGpu.tuning).toMatchObject({ timed: 1, reused: 0 });
    expect(JSON.parse(fs.readFileSync(file, 'utf8')).scopes.map((s: { cublasLt: number }) => s.cublasLt)).toEqual([130100, 130200]);
  });

  test('TENSORRT_NODE_TIMING_CACHE names the file, else the engine cache directory holds it, else there is none', async () => {
    process.env.TENSORRT_NODE_ENGINE_CACHE = path.join(dir, 'engines');
    (await runOnce(newProcess(), {})).dispose();
    expect(fs.readdirSync(path.join(dir, 'engines'))).toEqual(['cuda-timing.json']);
    process.env.TENSORRT_NODE_TIMING_CACHE = path.join(dir, 'named.json');
    (await runOnce(newProcess(), {})).dispose();
    expect(fs.existsSync(path.join(dir, 'named.json'))).toBe(true);
    delete process.env.TENSORRT_NODE_ENGINE_CACHE;
    delete process.env.TENSORRT_NODE_TIMING_CACHE;
    const none = newProcess();
    (await runOnce(none, {})).dispose();
    expect(none.sim.simulatedGpu.tuning.timed).toBe(1);
    expect(fs.readdirSync(dir).sort()).toEqual(['engines', 'named.json']);
  });

  test('a plan without timed GEMMs neither reads nor writes the file', async () => {
    const file = path.join(dir, 'cuda-timing.json');
    fs.writeFileSync(file, 'not json: it would be refused if it were read');
    const p = newProcess();
    (await runOnce(p, { timingCache: file }, 1)).dispose();
    expect(fs.readFileSync(file, 'utf8')).toBe('not json: it would be refused if it were read');
  });

  test('a malformed file rejects the run with E_INVALID_ARGUMENT naming it, and is left as it was; mended, the next run uses it', async () => {
    const file = path.join(dir, 'cuda-timing.json');
    fs.writeFileSync(file, '{"format": "tensorrt-node cuda timing cache", "version": 7, "scopes": []}');
    const p = newProcess();
    await expect(runOnce(p, { timingCache: file })).rejects.toMatchObject({
      code: 'E_INVALID_ARGUMENT',
      message: expect.stringContaining(`timing cache ${file}: it is version 7; this tensorrt-node reads version 1`),
    });
    expect(fs.readFileSync(file, 'utf8')).toContain('"version": 7');
    fs.rmSync(file);
    (await runOnce(p, { timingCache: file })).dispose();
    expect(JSON.parse(fs.readFileSync(file, 'utf8')).scopes).toHaveLength(1);
  });

  test('the timing budget reaches every plan: the option, else TENSORRT_NODE_TUNING_BUDGET_MS; a spent budget is said at info', async () => {
    const p = newProcess();
    const logs: string[] = [];
    (await runOnce(p, { timingCache: null, tuningBudgetMs: 0, logger: (level, m) => logs.push(`${level}: ${m}`) })).dispose();
    expect(p.created.map((o) => o.tuningBudgetMs)).toEqual([0]);
    expect(p.sim.simulatedGpu.tuning).toMatchObject({ timed: 0, overBudget: 1 });
    expect(logs).toContain('info: cuda engine: the GEMM timing budget of "weighted" was spent: 1 GEMMs keep cuBLASLt\'s first choice');

    process.env.TENSORRT_NODE_TUNING_BUDGET_MS = '250';
    const q = newProcess();
    (await runOnce(q, { timingCache: null })).dispose();
    expect(q.created.map((o) => o.tuningBudgetMs)).toEqual([250]);
    process.env.TENSORRT_NODE_TUNING_BUDGET_MS = 'soon';
    await expect(runOnce(newProcess(), { timingCache: null })).rejects.toThrow(/TENSORRT_NODE_TUNING_BUDGET_MS must be a non-negative integer \(milliseconds\), got "soon"/);
  });
});
