/**
 * Casts recomputed per reader (lib/backends/cuda/passes/recompute-casts.ts): which casts are copied,
 * and Llama's float32 RMSNorm over a float16 residual, rewritten and run through the cuda
 * backend's lowering on the CPU emulator, against the reference backend on the source network.
 */
import { recomputeCasts } from '../../../../lib/backends/cuda/passes/recompute-casts';
import { Network } from '../../../../lib/network';
import { ReferenceRunner } from '../../../../lib/backends/reference/runner';
import { expectClose } from '../../../helpers/compare';
import { Random } from '../../../helpers/random';
import { emulate } from '../emulated-network';

/** x (float16) → float32 → x · 1/√(mean(x²) + eps) → float16 · weight: RMSNorm as a float32-kept precision pass leaves it. */
function rmsNorm(width = 64): Network {
  const net = new Network('rmsnorm_fp32');
  const x = net.addInput('x', 'float16', [3, width]);
  const r = new Random(21);
  const x32 = net.add1({ kind: 'cast', to: 'float32' }, [x], 'to_float32');
  const square = net.add1({ kind: 'elementwise', op: 'prod' }, [x32, x32], 'square');
  const mean = net.add1({ kind: 'reduce', op: 'avg', axes: [1], keepDims: true }, [square], 'mean');
  const eps = net.add1({ kind: 'constant', weights: r.tensor([1, 1], 'float32', 1e-5, 1e-5) }, [], 'eps');
  const inv = net.add1({ kind: 'unary', op: 'recip' }, [net.add1({ kind: 'unary', op: 'sqrt' }, [net.add1({ kind: 'elementwise', op: 'sum' }, [mean, eps], 'add')], 'sqrt')], 'rsqrt');
  const scaled = net.add1({ kind: 'cast', to: 'float16' }, [net.add1({ kind: 'elementwise', op: 'prod' }, [x32, inv], 'scaled')], 'to_float16');
  const weight = net.add1({ kind: 'constant', weights: r.tensor([1, width], 'float16') }, [], 'weight');
  net.markOutput(net.add1({ kind: 'elementwise', op: 'prod' }, [scaled, weight], 'y'), 'y');
  return net;
}

describe('recomputeCasts', () => {
  test("a cast read by the RMSNorm's square and its scaling is computed in each: two launches in all", () => {
    const source = rmsNorm();
    const { network, casts } = recomputeCasts(source);
    expect(casts).toBe(1);
    expect(network.layers.filter((l) => l.params.kind === 'cast' && l.params.to === 'float32').map((l) => l.name)).toEqual(['to_float32/for_0', 'to_float32/for_1']);
    const x = new Random(22).tensor([3, 64], 'float16');
    const want = new ReferenceRunner(source).run({ x });
    const before = emulate(source, { x }, true);
    const after = emulate(network, { x }, true);
    expectClose(after.outputs.y!, want.y!, { rtol: 1e-2, atol: 1e-2 }, 'recomputed casts vs reference');
    // The same arithmetic, so the same bits as with one cast.
    expect(Buffer.from(after.outputs.y!.data.buffer).equals(Buffer.from(before.outputs.y!.data.buffer))).toBe(true);
    expect([before.launches, after.launches]).toEqual([3, 2]);
    expect(after.names).toEqual(['to_float32/for_0+square+mean', 'add+sqrt+rsqrt+to_float32/for_1+scaled+to_float16+y']);
  });

  test('kept: a cast that is a network output, read once, read by more than four layers, by a layer that cannot fuse it or by a cast', () => {
    const net = new Network('kept');
    const x = net.addInput('x', 'float16', [4, 8]);
    const out = net.add1({ kind: 'cast', to: 'float32' }, [x], 'output_cast');
    net.markOutput(out, 'a');
    net.markOutput(net.add1({ kind: 'unary', op: 'exp' }, [out], 'exp'), 'b');
    net.markOutput(net.add1({ kind: 'unary', op: 'neg' }, [out], 'neg'), 'c');
    const once = net.add1({ kind: 'cast', to: 'float32' }, [x], 'once');
    net.markOutput(net.add1({ kind: 'unary', op: 'abs' }, [once], 'abs'), 'd');
    const many = net.add1({ kind: 'cast', to: 'float32' }, [x], 'many');
    for (let k = 0; k < 5; k++) net.markOutput(net.add1({ kind: 'unary', op: 'exp' }, [many], `m${k}`), `m${k}`);
    const gemm = net.add1({ kind: 'cast', to: 'float32' }, [x], 'to_gemm');
    net.markOutput(net.add1({ kind: 'matmul', opA: 'none', opB: 'transpose' }, [gemm, gemm], 'gram'), 'g');
    net.markOutput(net.add1({ kind: 'unary', op: 'exp' }, [gemm], 'gemm_exp'), 'h');
    const twice = net.add1({ kind: 'cast', to: 'float32' }, [x], 'twice');
    net.markOutput(net.add1({ kind: 'cast', to: 'float16' }, [twice], 'back'), 'i');
    net.markOutput(net.add1({ kind: 'unary', op: 'exp' }, [twice], 'twice_exp'), 'j');
    expect(recomputeCasts(net).casts).toBe(0);
  });
});
