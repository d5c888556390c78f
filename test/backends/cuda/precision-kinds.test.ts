/**
 * Every float layer kind rewritten to fp16 by the precision pass, run through the cuda
 * backend's real lowerings on the CPU emulator, against the float32 network on the reference
 * backend (fp16 tolerance: rtol/atol 1e-2 on O(1) data). What a GPU build with precisions
 * ['fp16'] runs, layer kind by layer kind.
 */
import { CUDA_PASSES, runPasses } from '../../../lib/backends/cuda/passes';
import { reducePrecision } from '../../../lib/network/precision';
import { expectClose } from '../../helpers/compare';
import { layerNetwork, runNetwork } from '../reference/helpers';
import { KIND_CASES } from '../../network/precision-cases';
import { runOnEmulator } from './emulated-network';

const ATTENTION_PASSES = CUDA_PASSES.filter((p) => p.name === 'attention' || p.name === 'spell-out-attention');

test.each(KIND_CASES)('%s', async (_label, params, inputs, reduced) => {
  const { network, feeds } = layerNetwork(params, inputs);
  const { network: rewritten } = reducePrecision(network, ['fp32', 'fp16']);
  if (reduced) expect(rewritten.tensors.some((t) => t.dtype === 'float16')).toBe(true);
  const want = await runNetwork(network, feeds);
  // The build's own attention passes: an attention layer reaches the lowerings only in its strided form.
  const ready = runPasses(rewritten, { precisions: ['fp32', 'fp16'] }, ATTENTION_PASSES).network;
  const got = runOnEmulator(ready, feeds);
  for (const o of network.outputs) {
    expect(got[o.name]!.dtype).toBe(want[o.name]!.dtype);
    expectClose(got[o.name]!, want[o.name]!, { rtol: 1e-2, atol: 1e-2 }, o.name);
  }
}, 300_000);
