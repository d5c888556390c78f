/**
 * Engine bytes of the cuda backend (lib/backends/cuda/engine-format.ts, build.ts): a build
 * with a fake lowering and compiler round-trips network, configuration, device and cubins;
 * every malformed byte string is a BadModelError saying what is wrong.
 */
import { buildCudaEngine, networkPlans } from '../../../lib/backends/cuda/build';
import { CUDA_ENGINE_MAGIC, CUDA_ENGINE_VERSION, cudaEngineMemory, cudaEnginePrecision, describeEngineMemory, deserializeCudaEngine, serializeCudaEngine, type CudaEngineContents } from '../../../lib/backends/cuda/engine-format';
import { Network } from '../../../lib/network';
import { Tensor } from '../../../lib/ir/tensor';
import { DEFAULT_BUILD_CONFIG, type Precision } from '../../../lib/engine/build-config';
import type { Logger } from '../../../lib/logger';
import { serializeEngine } from '../../../lib/backends/reference/engine-format';
import { BadModelError } from '../../../lib/errors';
import { CONTAINER_HEADER_BYTES, packContainer, unpackContainer, BlobTable } from '../../../lib/io/json-blobs';
import { dynamicBatchNetwork, fakeCompiler, fakeLowering, weightedNetwork } from './helpers';

const H200 = { name: 'NVIDIA H200', computeCapability: { major: 9, minor: 0 } };

async function built(precisions: Precision[] = ['fp32', 'tf32'], logger?: Logger): Promise<{ bytes: Uint8Array; compiled: string[] }> {
  const compiled: string[] = [];
  const config = { ...DEFAULT_BUILD_CONFIG, precisions, workspaceBytes: 1 << 20 };
  const bytes = await buildCudaEngine(weightedNetwork(), config, H200, { lower: fakeLowering(), compile: fakeCompiler(compiled), ...(logger ? { logger } : {}) });
  return { bytes, compiled };
}

/** The engine with its JSON edited by `edit` (blob unchanged). */
function edited(bytes: Uint8Array, edit: (json: Record<string, any>) => void): Uint8Array {
  const { json, blob } = unpackContainer(bytes, CUDA_ENGINE_MAGIC, [CUDA_ENGINE_VERSION]);
  edit(json as Record<string, any>);
  const table = new BlobTable();
  table.add('blob', blob);
  return packContainer(CUDA_ENGINE_MAGIC, CUDA_ENGINE_VERSION, json, table);
}

describe('cuda engine bytes', () => {
  test('build compiles each distinct kernel once for the device architecture, and the bytes round-trip', async () => {
    const { bytes, compiled } = await built();
    expect(compiled).toEqual(['unary.float32_float32@90', 'elementwise.float32_float32_float32@90']);
    const back = deserializeCudaEngine(bytes);
    expect(back.target).toEqual(H200);
    expect(back.config).toEqual({ precisions: ['fp32', 'tf32'], workspaceBytes: 1 << 20, hardwareCompatibility: 'none', optimizationLevel: 3 });
    expect(back.kernels.map((k) => [k.key, k.entry, k.arch, new TextDecoder().decode(k.cubin)])).toEqual([
      ['unary.float32_float32', 'k_unary', 90, 'cubin unary.float32_float32 sm_90'],
      ['elementwise.float32_float32_float32', 'k_elementwise', 90, 'cubin elementwise.float32_float32_float32 sm_90'],
    ]);
    expect(back.network.layers.map((l) => l.name)).toEqual(weightedNetwork().layers.map((l) => l.name));
    const bias = back.network.layers.find((l) => l.name === 'bias')!.params as { weights: { toArray(): number[] } };
    expect(bias.weights.toArray()).toEqual([1, 2, 3, 4, 5, 6]);
    // Serializing what was read gives the same bytes.
    expect(serializeCudaEngine(back as CudaEngineContents)).toEqual(bytes);
  });

  test('precisions [fp16]: the engine holds the rewritten network (fp16 inside, float32 I/O) and what the pass did', async () => {
    const records: string[] = [];
    const { bytes, compiled } = await built(['fp32', 'fp16'], (level, message) => void records.push(`${level}: ${message}`));
    expect(compiled).toEqual(['cast.float32_float16@90', 'unary.float16_float16@90', 'elementwise.float16_float16_float16@90', 'cast.float16_float32@90']);
    const back = deserializeCudaEngine(bytes);
    const net = back.network;
    expect(net.inputs.map((i) => net.tensor(i.tensor).dtype)).toEqual(['float32']);
    expect(net.outputs.map((o) => net.tensor(o.tensor).dtype)).toEqual(['float32']);
    expect(net.tensor(net.layers.find((l) => l.name === 'exp')!.outputs[0]!).dtype).toBe('float16');
    const bias = net.layers.find((l) => l.params.kind === 'constant')!.params as { weights: { dtype: string; data: Uint16Array } };
    expect(bias.weights.dtype).toBe('float16');
    expect(Array.from(bias.weights.data)).toEqual([0x3c00, 0x4000, 0x4200, 0x4400, 0x4500, 0x4600]); // 1..6 in fp16
    expect(back.precision).toBe('fp16: 3 layers in fp16, 0 kept fp32, 2 casts, 1 weights converted');
    expect(records).toContain('info: cuda backend: network "weighted" computes in fp16: 3 layers in fp16, 0 kept fp32, 2 casts, 1 weights converted');
    expect(serializeCudaEngine(back as CudaEngineContents)).toEqual(bytes);
  });

  test('an engine written before the precision pass (no summary) still loads; a malformed summary is refused', async () => {
    const { bytes } = await built(['fp32']);
    expect(deserializeCudaEngine(bytes).precision).toBe('fp32 (fp32 only)');
    const old = edited(bytes, (j) => delete j.precision);
    expect(deserializeCudaEngine(old).precision).toBeUndefined();
    expect(() => deserializeCudaEngine(edited(bytes, (j) => (j.precision = 16)))).toThrow(/cuda engine: the precision summary is not a string \(16\)/);
    // What `inspect` shows, read without the network.
    expect(cudaEnginePrecision(bytes)).toBe('fp32 (fp32 only)');
    expect(cudaEnginePrecision((await built(['fp32', 'bf16'])).bytes)).toBe('bf16: 3 layers in bf16, 0 kept fp32, 2 casts, 1 weights converted');
    expect(cudaEnginePrecision(old)).toBe('fp32 (not recorded)');
    expect(cudaEnginePrecision(new Uint8Array(30))).toBeNull();
  });

  test('a dynamic network is lowered at min, opt and max; kernels of all three are kept once', () => {
    const seen: number[][] = [];
    const lower = fakeLowering();
    const { modules } = networkPlans(dynamicBatchNetwork(), (ctx) => {
      seen.push([...ctx.inputs[0]!.shape]);
      return lower(ctx);
    });
    expect(seen).toEqual([[1, 4], [2, 4], [8, 4]]);
    expect(modules.map((m) => m.key)).toEqual(['activation.float32_float32']);
  });

  test('a profile corner whose shapes contradict the network is left out; a network no corner fits is an error', () => {
    // a [n] + b [m]: every run gives n = m, but the max corner pairs n = 8 with m = 4 (a
    // KV-cache model's mask against past + new tokens is this case).
    const mismatched = (maxB: number): Network => {
      const net = new Network('corners');
      const a = net.addInput('a', 'float32', [-1], [{ min: [1], opt: [2], max: [8] }]);
      const b = net.addInput('b', 'float32', [-1], [{ min: [1], opt: [2], max: [maxB] }]);
      net.markOutput(net.add1({ kind: 'elementwise', op: 'sum' }, [a, b], 'add'), 'y');
      return net;
    };
    const seen: number[][] = [];
    const lower = fakeLowering();
    const plans = networkPlans(mismatched(4), (ctx) => {
      seen.push([...ctx.inputs[0]!.shape]);
      return lower(ctx);
    });
    expect(seen).toEqual([[1], [2]]);
    expect(plans.memory.shapeSets).toBe(2);
    expect(plans.unfit).toEqual([{ shapes: { a: [8], b: [4] }, reason: expect.stringMatching(/layer "add" \(elementwise\): dim 0 cannot broadcast: 8 vs 4/) }]);
    expect(networkPlans(mismatched(8), lower).unfit).toEqual([]);
    // No corner fits: the network's own error, not an empty engine.
    const never = new Network('never');
    const a = never.addInput('a', 'float32', [-1], [{ min: [2], opt: [2], max: [3] }]);
    const b = never.addInput('b', 'float32', [-1], [{ min: [5], opt: [5], max: [7] }]);
    never.markOutput(never.add1({ kind: 'elementwise', op: 'sum' }, [a, b], 'add'), 'y');
    expect(() => networkPlans(never, lower)).toThrow(/layer "add" \(elementwise\): dim 0 cannot broadcast: 2 vs 5/);
  });

  describe('malformed bytes are BadModelError naming the problem', () => {
    let good: Uint8Array;
    beforeAll(async () => {
      good = (await built()).bytes;
    });
    const refuse = (bytes: unknown, message: string | RegExp): void => {
      let error: unknown;
      try {
        deserializeCudaEngine(bytes as Uint8Array);
      } catch (e) {
        error = e;
      }
      expect(error).toBeInstanceOf(BadModelError);
      expect((error as Error).message).toMatch(typeof message === 'string' ? new RegExp(message.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')) : message);
    };

    test('not bytes', () => refuse('engine', 'cuda engine: engine bytes must be a Uint8Array, got string'));
    test('another backend\'s engine', () => refuse(serializeEngine(weightedNetwork()), 'not a cuda engine: the bytes start with "TRTNREF1", expected "TRTNCUDA"'));
    test('truncated', () => refuse(good.subarray(0, good.length - 3), 'cuda engine: truncated'));
    test('a header alone', () => refuse(good.subarray(0, CONTAINER_HEADER_BYTES - 1), 'cuda engine: truncated'));
    test('trailing bytes', () => refuse(new Uint8Array([...good, 0, 0]), 'unexpected bytes after'));
    test('another version', () => {
      const bytes = good.slice();
      new DataView(bytes.buffer).setUint32(8, 7, true);
      refuse(bytes, 'format version 7 is not supported');
    });
    test('a version-1 engine (its attentions a field of a matmul layer) is refused by version', () => {
      const bytes = good.slice();
      new DataView(bytes.buffer).setUint32(8, 1, true);
      refuse(bytes, 'format version 1 is not supported (this tensorrt-node reads version 2)');
    });
    test('another format', () => refuse(edited(good, (j) => (j.format = 'something')), 'the description is not a cuda engine (format "something")'));
    test('no build configuration', () => refuse(edited(good, (j) => delete j.config), 'the build configuration is missing'));
    test('precisions without fp32', () => refuse(edited(good, (j) => (j.config.precisions = ['fp16'])), 'invalid precisions ["fp16"]'));
    test('a bad workspace', () => refuse(edited(good, (j) => (j.config.workspaceBytes = -1)), 'invalid workspaceBytes -1'));
    test('a bad hardware compatibility', () => refuse(edited(good, (j) => (j.config.hardwareCompatibility = 'any')), 'invalid hardwareCompatibility "any"'));
    test('a bad optimization level', () => refuse(edited(good, (j) => (j.config.optimizationLevel = 9)), 'invalid optimizationLevel 9'));
    test('no device', () => refuse(edited(good, (j) => delete j.target), 'the build device is missing or has no name'));
    test('a bad compute capability', () => refuse(edited(good, (j) => (j.target.computeCapability = { major: '9', minor: 0 })), 'the build device "NVIDIA H200" has an invalid compute capability'));
    test('no kernel list', () => refuse(edited(good, (j) => (j.kernels = {})), 'the kernel list is missing'));
    test('a kernel without entry', () => refuse(edited(good, (j) => (j.kernels[0].entry = 'not an identifier')), 'kernel 0 is malformed'));
    test('a kernel without source hash', () => refuse(edited(good, (j) => (j.kernels[1].sourceHash = 'abc')), 'kernel 1 ("elementwise.float32_float32_float32") has no sha256 of its source'));
    test('a kernel with a bad architecture', () => refuse(edited(good, (j) => (j.kernels[0].arch = 1.5)), 'invalid architecture 1.5'));
    test('an empty cubin', () => refuse(edited(good, (j) => (j.kernels[0].byteLength = 0)), 'invalid cubin length 0'));
    test('a cubin outside the blob', () => refuse(edited(good, (j) => (j.kernels[0].offset = 1 << 30)), /kernel 0 \("unary.float32_float32"\)'s cubin \(bytes \d+\.\.\d+\) lie outside/));
    test('a kernel twice', () => refuse(edited(good, (j) => j.kernels.push(j.kernels[0])), 'the kernel "unary.float32_float32" for sm_90 appears twice'));
    test('an inconsistent network', () => refuse(edited(good, (j) => (j.network.tensors[1].shape = [9])), 'cuda engine: layer "exp" (unary) output 0 "exp:out" is recorded as float32[9]'));
  });
});

describe('the device memory an engine records (for inspect)', () => {
  /** x: float32[B, 100], B in 1..16 → softmax → softmax → softmax → + a constant [1, 100] → y. */
  function softmaxChain(): Network {
    const net = new Network('softmaxes');
    let t = net.addInput('x', 'float32', [-1, 100], [{ min: [1, 100], opt: [4, 100], max: [16, 100] }]);
    for (let k = 0; k < 3; k++) t = net.add1({ kind: 'softmax', axis: 1 }, [t], `softmax${k}`);
    const c = net.add1({ kind: 'constant', weights: Tensor.from('float32', [1, 100], new Array<number>(100).fill(0.5)) }, [], 'c');
    net.markOutput(net.add1({ kind: 'elementwise', op: 'sum' }, [t, c], 'add'), 'y');
    return net;
  }

  test('weights and the largest arena over the profile shapes, read back without the network', async () => {
    const records: string[] = [];
    const bytes = await buildCudaEngine(softmaxChain(), DEFAULT_BUILD_CONFIG, H200, { compile: fakeCompiler(), logger: (level, m) => void records.push(`${level}: ${m}`) });
    // Weights: the 400-byte constant in one 256-byte-aligned slot. Arena at B = 16: two softmax
    // outputs of 16 × 100 × 4 = 6,400 bytes live at once (the third reuses the first's slot).
    const memory = { weightBytes: 512, arenaBytes: 12_800, shapeSets: 3 };
    expect(deserializeCudaEngine(bytes).memory).toEqual(memory);
    expect(cudaEngineMemory(bytes)).toEqual(memory);
    expect(describeEngineMemory(memory)).toBe('weights 512 B, activations up to 12.5 KiB (3 profile shapes), plus library workspaces and I/O buffers');
    expect(records).toContain(`info: cuda backend: network "softmaxes" takes ${describeEngineMemory(memory)}`);
  });

  test('an engine without the record (built before it) reads as null; a malformed record is refused', async () => {
    const { bytes } = await built(['fp32']);
    expect(cudaEngineMemory(edited(bytes, (j) => delete j.memory))).toBeNull();
    expect(deserializeCudaEngine(edited(bytes, (j) => delete j.memory)).memory).toBeUndefined();
    expect(() => deserializeCudaEngine(edited(bytes, (j) => (j.memory = { weightBytes: -1, arenaBytes: 0, shapeSets: 1 })))).toThrow(
      /cuda engine: the memory record is not \{weightBytes, arenaBytes, shapeSets\} of byte counts/,
    );
    expect(cudaEngineMemory(new Uint8Array(30))).toBeNull();
  });
});
