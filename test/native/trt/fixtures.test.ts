/**
 * Every converter fixture's networks (the model compiled for the reference backend, whose
 * engines are the serialized networks) replay into TensorRT against the recording double
 * without an unexpected call: only the methods the replay is meant to use are called, every
 * layer is added and named after its IR layer, every network output is marked.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { deserializeEngine } from '../../../lib/backends/reference';
import { encodeProgram, replayedNetwork } from '../../../lib/backends/tensorrt/program';
import { compile } from '../../../lib/compile';
import type { Network } from '../../../lib/network';
import { FIXTURES, PT2_FIXTURES } from '../../helpers/fixtures';
import { describeWithTensorRT, runDriver, tempFile } from './harness';


/** The TensorRT methods a replay and build may call (V-call names: what TensorRT's inline methods forward to). */
const EXPECTED = new Set([
  'createInferBuilder_INTERNAL',
  'VBuilder::createBuilderConfig', 'VBuilder::createNetworkV2', 'VBuilder::createOptimizationProfile', 'VBuilder::buildSerializedNetwork',
  'VBuilderConfig::setBuilderOptimizationLevel', 'VBuilderConfig::setMemoryPoolLimit', 'VBuilderConfig::clearFlag', 'VBuilderConfig::setFlag',
  'VBuilderConfig::setHardwareCompatibilityLevel', 'VBuilderConfig::createTimingCache', 'VBuilderConfig::setTimingCache',
  'VBuilderConfig::setProgressMonitor', 'VBuilderConfig::addOptimizationProfile', 'VOptimizationProfile::setDimensions',
  'VTimingCache::serialize', 'VHostMemory::data', 'VHostMemory::size',
  'VNetworkDefinition::addInput', 'VNetworkDefinition::markOutput', 'VLayer::setName', 'VLayer::getOutput', 'VLayer::setInput', 'VTensor::setName',
  'VAttention::setName', 'VAttention::getOutput', 'VAttention::setMask', 'VAttention::setDecomposable',
  '~',
]);
const ADDS = /^VNetworkDefinition::add\w+$|^V\w+Layer::set\w+$/;

/** Networks of each fixture: the reference engines of its compiled program. */
async function fixtureNetworks(name: string): Promise<Network[]> {
  const dir = path.join(FIXTURES, name);
  const model = fs.existsSync(path.join(dir, 'model.onnx')) ? path.join(dir, 'model.onnx') : path.join(dir, 'model.pt2');
  // Inputs with a dynamic batch get a range around the fixture's own shape, so that the
  // networks carry optimization profiles; the ONNX input names are input0, input1, ...
  const meta = JSON.parse(fs.readFileSync(path.join(dir, 'meta.json'), 'utf8')) as { inputs: Array<{ shape: number[] }> };
  const inputs: Record<string, { min: number[]; max: number[] }> = {};
  meta.inputs.forEach((i, k) => {
    if (i.shape.length > 0) inputs[`input${k}`] = { min: [1, ...i.shape.slice(1)], max: [Math.max(4, i.shape[0]!), ...i.shape.slice(1)] };
  });
  const dynamicBatch = ['mlp', 'encoder', 'mobilenet_v3_small'].includes(name);
  const program = await compile(model, dynamicBatch ? { backend: 'reference', inputs } : { backend: 'reference' });
  const segments = (program as unknown as { data: { segments: Array<{ kind: string; engine?: Uint8Array }> } }).data.segments;
  program.dispose?.();
  return segments.filter((s) => s.kind === 'engine').map((s) => deserializeEngine(s.engine!));
}

describeWithTensorRT('converter fixtures replay into TensorRT', (ctx) => {
  it.each([...PT2_FIXTURES])('%s', async (name) => {
    const networks = await fixtureNetworks(name);
    expect(networks.length).toBeGreaterThan(0);
    // The dynamic-batch compiles must reach the replay with their optimization profiles.
    if (['mlp', 'encoder', 'mobilenet_v3_small'].includes(name)) expect(networks.some((n) => n.inputs.some((i) => i.profiles.length > 0))).toBe(true);
    for (const source of networks) {
      // What the replay holds (encodeProgram replays it): attentions IAttention takes whole, the rest spelled out.
      const net = replayedNetwork(source);
      const program = tempFile(ctx.tmp, `${name}.program`, encodeProgram(source, { precisions: ['fp32'], workspaceBytes: undefined, hardwareCompatibility: 'none', optimizationLevel: 3 }));
      const { result, calls } = runDriver(ctx.built, ['build', program, path.join(ctx.tmp, 'plan'), path.join(ctx.tmp, 'cache')]);
      expect(result).toMatchObject({ ok: true });
      const unexpected = [...new Set(calls.map((c) => c.m).filter((m) => !EXPECTED.has(m) && !ADDS.test(m)))];
      expect(unexpected).toEqual([]);
      const named = new Set(calls.filter((c) => c.m === 'VLayer::setName' || c.m === 'VAttention::setName').map((c) => c.args[0]));
      expect(net.layers.filter((l) => !named.has(l.name)).map((l) => l.name)).toEqual([]);
      expect(calls.filter((c) => c.m === 'VNetworkDefinition::markOutput').map((c) => c.args[0])).toEqual(net.outputs.map((o) => `%${o.name}`));
      expect(calls.filter((c) => c.m === 'VNetworkDefinition::addInput').map((c) => c.args[0])).toEqual(net.inputs.map((i) => i.name));
      const profileCount = Math.max(0, ...net.inputs.map((i) => i.profiles.length));
      expect(calls.filter((c) => c.m === 'VBuilderConfig::addOptimizationProfile')).toHaveLength(profileCount);
    }
  }, 120_000);
});
