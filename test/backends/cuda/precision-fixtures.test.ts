/**
 * The fixture models (PyTorch exports, test/fixtures) compiled with precisions ['fp16']
 * through the cuda backend's build path (the precision pass, then the real lowerings) and run
 * on the CPU emulator, against the outputs PyTorch computed in float32.
 *
 * Tolerance: |got - want| <= 1e-2 · max|want| + 1e-2 · |want| elementwise (the fixtures'
 * "rtol/atol 1e-2 for float16 engines", with atol relative to the output's scale). fp16 keeps
 * 11 significant bits (relative rounding 4.9e-4 per stored value); measured here the errors
 * are 5e-4 to 1e-3 of the output's scale (mlp 6.4e-5 of 0.13, encoder 2.8e-4 of 0.38,
 * squeezenet 4.1e-4 of 0.93, llama 3.2e-3 of 3.3). Each test also checks that the error is
 * above float32 rounding and the pass's report, so it cannot pass by running float32.
 */
import path from 'node:path';

import { deserializeEngine } from '../../../lib/backends/reference/engine-format';
import { compile } from '../../../lib/compile';
import { cast } from '../../../lib/kernels/unary';
import type { Network } from '../../../lib/network';
import { runPasses } from '../../../lib/backends/cuda/passes';
import { describePrecision } from '../../../lib/network/precision';
import { Tensor } from '../../../lib/ir/tensor';
import { readNumbers } from '../../../lib/kernels/access';
import { loadFixture } from '../../helpers/fixtures';
import { runOnEmulator } from './emulated-network';

const RTOL = 1e-2;
const SCALE_ATOL = 1e-2;

/** The fixture's single engine network (reference backend build) and its feeds, in the network's input dtypes. */
async function fixtureNetwork(name: string): Promise<{ network: Network; feeds: Record<string, Tensor>; expected: Record<string, Tensor> }> {
  // The bound scales with max|want|, so an all-zero or sign-flipped output fails it whatever the scale.
  const fixture = loadFixture(name, { rtol: RTOL, atol: 1e-4 });
  const file = path.join(fixture.dir, fixture.files.pt2 ?? fixture.files.onnx!);
  const { inputs, outputs } = fixture.cases[0]!;
  const program = await compile(file, { backend: 'reference', inputs: inputs.map((t) => ({ shape: [...t.shape] })) });
  const data = program.data;
  const engines = data.segments.filter((s) => s.kind === 'engine');
  expect(data.segments).toHaveLength(1);
  const network = deserializeEngine((engines[0] as { engine: Uint8Array }).engine);
  const feeds: Record<string, Tensor> = {};
  for (const input of network.inputs) {
    const k = data.inputs.findIndex((i) => i.value === input.name);
    let t = inputs[k]!;
    // A complex64 input is the [..., 2] float32 carrier the complex lowering gives it (same bytes).
    if (t.dtype === 'complex64') t = new Tensor('float32', [...t.shape, 2], t.data as Float32Array);
    const want = network.tensor(input.tensor).dtype;
    feeds[input.name] = t.dtype === want ? t : cast(t, want);
  }
  const expected: Record<string, Tensor> = {};
  for (const output of network.outputs) expected[output.name] = outputs[data.outputs.findIndex((o) => o.value === output.name)]!;
  return { network, feeds, expected };
}

/** Largest |got - want| and the bound it must stay under. */
function errors(got: Tensor, want: Tensor): { maxAbs: number; worst: number; scale: number } {
  const g = Array.from(readNumbers(got));
  const w = Array.from(readNumbers(want));
  expect(g).toHaveLength(w.length);
  const scale = Math.max(...w.map(Math.abs));
  let maxAbs = 0;
  let worst = 0; // largest |g - w| / bound
  g.forEach((x, i) => {
    const d = Math.abs(x - w[i]!);
    maxAbs = Number.isNaN(d) ? Infinity : Math.max(maxAbs, d);
    worst = Math.max(worst, Number.isNaN(d) ? Infinity : d / (SCALE_ATOL * scale + RTOL * Math.abs(w[i]!)));
  });
  return { maxAbs, worst, scale };
}

describe.each(['mlp', 'encoder', 'squeezenet1_1', 'llama_rotary_complex_input'])('%s with precisions [fp16] on the emulated cuda backend', (name) => {
  test('matches PyTorch fp32 within fp16 tolerance; inputs and outputs keep their dtypes', async () => {
    const { network, feeds, expected } = await fixtureNetwork(name);
    // Every pass the build runs (runPasses), so the emulator runs what an engine would.
    const { network: reduced, precision: report } = runPasses(network, { precisions: ['fp32', 'fp16'] });
    expect(report.dtype).toBe('float16');
    expect(report.reducedLayers).toBeGreaterThan(0);
    expect(reduced.tensors.some((t) => t.dtype === 'float16')).toBe(true);
    expect(reduced.inputs.map((i) => reduced.tensor(i.tensor).dtype)).toEqual(network.inputs.map((i) => network.tensor(i.tensor).dtype));
    const got = runOnEmulator(reduced, feeds);
    for (const output of network.outputs) {
      const t = got[output.name]!;
      expect(t.dtype).toBe(network.tensor(output.tensor).dtype);
      const e = errors(t, expected[output.name]!);
      // Visible in the test log: what fp16 costs on this model.
      process.stdout.write(`${name} ${output.name}: fp16 max abs error ${e.maxAbs.toExponential(2)} (output scale ${e.scale.toExponential(2)}), ${describePrecision(report)}\n`);
      expect(e.worst).toBeLessThanOrEqual(1);
      // fp16 really ran: its error is well above float32 rounding.
      expect(e.maxAbs).toBeGreaterThan(1e-5 * e.scale);
    }
  }, 600_000);
});
