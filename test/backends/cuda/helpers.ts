/**
 * Networks and fakes for the cuda backend's GPU-less tests: a fake lowering (one launch per
 * layer, whose kernel source depends only on the layer kind and dtypes, as the lowering
 * contract demands) and a fake compiler (the "cubin" names what it was compiled from).
 */
import type { KernelArg } from '../../../lib/gpu/plan';
import type { LoweredStep, LoweringContext } from '../../../lib/backends/cuda/layers';
import { Network, type NetTensor } from '../../../lib/network';
import { Tensor } from '../../../lib/ir/tensor';
import type { PlanModule } from '../../../lib/backends/cuda/plan/assemble';

/** x: float32[2, 3] → exp → "y". */
export function staticNetwork(): Network {
  const net = new Network('static');
  const x = net.addInput('x', 'float32', [2, 3]);
  net.markOutput(net.add1({ kind: 'unary', op: 'exp' }, [x], 'exp'), 'y');
  return net;
}

/** x: float32[B, 4], B in [1, 8] → relu → "y". */
export function dynamicBatchNetwork(): Network {
  const net = new Network('dynamic');
  const x = net.addInput('x', 'float32', [-1, 4], [{ min: [1, 4], opt: [2, 4], max: [8, 4] }]);
  net.markOutput(net.add1({ kind: 'activation', type: 'relu' }, [x], 'relu'), 'y');
  return net;
}

/**
 * x: float32[B, 4] → shape s (host: inferLayer knows it) → reduce prod keepDims p (host: the
 * reference executor computes it) → shuffle(x, p) "flat" float32[4B] (device, reads p as its
 * dims); cast(s → float32) "dims" (device, reads s as data: s is uploaded); a dead layer.
 */
export function shapeTensorNetwork(): { network: Network; s: NetTensor; p: NetTensor; flat: NetTensor; dims: NetTensor } {
  const net = new Network('shapes');
  const x = net.addInput('x', 'float32', [-1, 4], [{ min: [1, 4], opt: [3, 4], max: [8, 4] }]);
  const s = net.add1({ kind: 'shape' }, [x], 'shape');
  const p = net.add1({ kind: 'reduce', op: 'prod', axes: [0], keepDims: true }, [s], 'numel');
  const flat = net.add1({ kind: 'shuffle', zeroIsPlaceholder: false }, [x, p], 'flatten');
  const dims = net.add1({ kind: 'cast', to: 'float32' }, [s], 'dims');
  net.add1({ kind: 'unary', op: 'abs' }, [x], 'unused');
  net.markOutput(flat, 'flat');
  net.markOutput(dims, 'dims');
  return { network: net, s, p, flat, dims };
}

/** x: float32[2, 3] → exp → (1·) → reshape [6] → + bias (a constant) → "y"; the constant is a weight. */
export function weightedNetwork(): Network {
  const net = new Network('weighted');
  const x = net.addInput('x', 'float32', [2, 3]);
  const e = net.add1({ kind: 'unary', op: 'exp' }, [x], 'exp');
  const r = net.add1({ kind: 'shuffle', reshape: [6], zeroIsPlaceholder: false }, [e], 'reshape');
  const b = net.add1({ kind: 'constant', weights: Tensor.from('float32', [6], [1, 2, 3, 4, 5, 6]) }, [], 'bias');
  net.markOutput(net.add1({ kind: 'elementwise', op: 'sum' }, [r, b], 'add'), 'y');
  return net;
}

/** What the fake lowering saw, one entry per call. */
export interface LoweringCall {
  layer: string;
  inputs: LoweringContext['inputs'];
  outputs: LoweringContext['outputs'];
  values: LoweringContext['values'];
}

/**
 * A lowering that launches one kernel per layer (key `kind.dtypes`), passes every operand as
 * a pointer and the element count as a scalar, takes `scratchBytes(layer)` of scratch, and a
 * constant layer copies its weight; a shuffle without transposes is a copy.
 */
export function fakeLowering(calls: LoweringCall[] = [], scratchBytes: (name: string) => number = () => 0): (ctx: LoweringContext) => LoweredStep[] {
  return (ctx) => {
    calls.push({ layer: ctx.layer.name, inputs: ctx.inputs, outputs: ctx.outputs, values: ctx.values });
    const out = ctx.outputs[0]!;
    const count = out.shape.reduce((a, d) => a * d, 1);
    const bytes = count * 4;
    const p = ctx.layer.params;
    if (p.kind === 'constant') return [{ kind: 'copy', dst: out.at, src: ctx.weight(p.weights), bytes }];
    if (p.kind === 'shuffle' && p.firstTranspose === undefined && p.secondTranspose === undefined) {
      return [{ kind: 'copy', dst: out.at, src: ctx.inputs[0]!.at, bytes }];
    }
    const args: KernelArg[] = [...ctx.inputs, ...ctx.outputs].flatMap((t) => (t === null ? [] : [{ pointer: t.at }]));
    const scratch = scratchBytes(ctx.layer.name);
    if (scratch > 0) args.push({ pointer: ctx.scratch(scratch) });
    args.push({ scalar: 'u64', value: count });
    const dtypes = [...ctx.inputs, ...ctx.outputs].map((t) => t?.dtype ?? 'none').join('_');
    const key = `${p.kind}.${dtypes}`;
    const entry = `k_${p.kind}`;
    return [{ kind: 'launch', kernel: { key, entry, source: `extern "C" __global__ void ${entry}() {} // ${key}` }, grid: [Math.max(1, Math.ceil(count / 256))], block: [256], args }];
  };
}

/** A compiler whose "cubin" is the text `cubin <key> sm_<arch>`; records what it compiled. */
export function fakeCompiler(compiled: string[] = []): (m: PlanModule, arch: number) => Promise<Uint8Array> {
  return async (m, arch) => {
    compiled.push(`${m.key}@${arch}`);
    return new TextEncoder().encode(`cubin ${m.key} sm_${arch}`);
  };
}
