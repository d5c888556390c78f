import path from 'node:path';
import { deserializeEngine } from '../lib/backends/reference/engine-format';
import { compile } from '../lib/compile';
import { reducePrecision } from '../lib/network/precision';
import { channelsLast } from '../lib/backends/cuda/channels-last';
import { fuseConvEpilogues } from '../lib/backends/cuda/conv-epilogue';
import { instantiate } from '../lib/backends/cuda/instantiate';
import { lowerInstance } from '../lib/backends/cuda/lower-instance';
import { layoutWeights, weightLocator } from '../lib/backends/cuda/weights';
import { loadFixture } from '../test/helpers/fixtures';

test('steps', async () => {
  for (const name of (process.env.FIX ?? 'llama_rotary_complex_input').split(',')) {
    const fixture = loadFixture(name, { rtol: 1e-2, atol: 1e-4 });
    const file = path.join(fixture.dir, fixture.files.pt2 ?? fixture.files.onnx!);
    const { inputs } = fixture.cases[0]!;
    const program = await compile(file, { backend: 'reference', inputs: inputs.map((t) => ({ shape: [...t.shape] })) });
    const seg = program.data.segments.find((s) => s.kind === 'tensorrt') as { engine: Uint8Array };
    let network = deserializeEngine(seg.engine);
    network = fuseConvEpilogues(channelsLast(reducePrecision(network, ['fp16']).network).network).network;
    const shapes = Object.fromEntries(network.inputs.map((i, k) => [i.name, inputs[k]!.dtype === 'complex64' ? [...inputs[k]!.shape, 2] : inputs[k]!.shape]));
    const instance = instantiate(network, shapes);
    const lowered = lowerInstance(network, instance, weightLocator(layoutWeights(network)));
    const lines = lowered.steps.map((s, i) => `${i} ${lowered.stepLayers[i]!.name} ${lowered.stepLayers[i]!.kind} ${s.kind} ${(s as any).kernel?.key ?? ''}`);
    require('fs').writeFileSync(`/tmp/steps-${name}.txt`, lines.join('\n'));
  }
}, 600000);
