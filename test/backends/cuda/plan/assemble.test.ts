/**
 * Lowering an instance (lib/backends/cuda/plan/lower-instance.ts) with a fake lowering, and
 * assembling its steps into a plan (lib/backends/cuda/plan/assemble.ts): buffer bindings, the
 * host values uploaded, scratch, in-place reuse, module grouping, and a plan the encoder
 * accepts.
 */
import { assemble, kernelSources, sourceHash } from '../../../../lib/backends/cuda/plan/assemble';
import { instantiate } from '../../../../lib/backends/cuda/plan/instantiate';
import { ARENA_BUFFER, FIRST_IO_BUFFER, lowerInstance, VALUES_BUFFER, WEIGHTS_BUFFER } from '../../../../lib/backends/cuda/plan/lower-instance';
import type { LoweredStep } from '../../../../lib/backends/cuda/layers';
import { layoutWeights, packWeights, weightLocator } from '../../../../lib/backends/cuda/plan/weights';
import { InternalError } from '../../../../lib/errors';
import { encodePlan } from '../../../../lib/gpu/plan';
import { Network } from '../../../../lib/network';
import { Tensor } from '../../../../lib/ir/tensor';
import { fakeLowering, shapeTensorNetwork, staticNetwork, weightedNetwork, type LoweringCall } from '../helpers';

const lowerWith = (network: Network, shapes: Record<string, number[]>, calls: LoweringCall[] = [], scratch?: (name: string) => number) =>
  lowerInstance(network, instantiate(network, shapes), weightLocator(layoutWeights(network)), fakeLowering(calls, scratch));

describe('lowerInstance', () => {
  test('inputs and outputs are buffers of their own; the layer reads and writes them', () => {
    const calls: LoweringCall[] = [];
    const lowered = lowerWith(staticNetwork(), { x: [2, 3] }, calls);
    expect(lowered.inputBuffers).toEqual(new Map([['x', FIRST_IO_BUFFER]]));
    expect(lowered.outputBuffers).toEqual(new Map([['y', FIRST_IO_BUFFER + 1]]));
    expect(calls).toEqual([
      {
        layer: 'exp',
        inputs: [{ dtype: 'float32', shape: [2, 3], at: { buffer: FIRST_IO_BUFFER, offset: 0 } }],
        outputs: [{ dtype: 'float32', shape: [2, 3], at: { buffer: FIRST_IO_BUFFER + 1, offset: 0 } }],
        values: [undefined],
      },
    ]);
    expect(lowered.arenaBytes).toBe(0);
    expect(lowered.values.byteLength).toBe(0);
  });

  test('shape tensors: the lowering gets their host values, and those read as data are uploaded as int64 bytes', () => {
    const { network, s, p } = shapeTensorNetwork();
    const calls: LoweringCall[] = [];
    const lowered = lowerWith(network, { x: [5, 4] }, calls);
    expect(calls.map((c) => c.layer)).toEqual(['flatten', 'dims']);
    expect(calls[0]!.values).toEqual([undefined, [20]]);
    expect(calls[1]!.values).toEqual([[5, 4]]);
    expect(lowered.bound[s.id]!.at).toEqual({ buffer: VALUES_BUFFER, offset: 0 });
    expect(lowered.bound[p.id]!.at).toEqual({ buffer: VALUES_BUFFER, offset: 256 });
    const view = new BigInt64Array(lowered.values.buffer);
    expect([view[0], view[1], view[32]]).toEqual([5n, 4n, 20n]);
    expect(calls[0]!.outputs[0]!.shape).toEqual([20]);
  });

  test('a bool shape tensor read as data is uploaded as one byte per element', () => {
    // keep = (shape(x) == [2, 2]) is computed on the host; the select on the device reads it as data.
    const network = new Network('bool-upload');
    const x = network.addInput('x', 'float32', [-1, 2], [{ min: [1, 2], opt: [2, 2], max: [8, 2] }]);
    const shape = network.add1({ kind: 'shape' }, [x], 'shape');
    const two = network.add1({ kind: 'constant', weights: Tensor.from('int64', [2], [2n, 2n]) }, [], 'two');
    const keep = network.add1({ kind: 'elementwise', op: 'equal' }, [shape, two], 'keep');
    const cond = network.add1({ kind: 'shuffle', reshape: [1, 2], zeroIsPlaceholder: false }, [keep], 'cond');
    const zeros = network.add1({ kind: 'unary', op: 'abs' }, [x], 'abs');
    network.markOutput(network.add1({ kind: 'select' }, [cond, x, zeros], 'pick'), 'y');
    const lowered = lowerWith(network, { x: [3, 2] });
    const inst = instantiate(network, { x: [3, 2] });
    expect(inst.tensors[keep.id]).toMatchObject({ dtype: 'bool', value: [0, 1] });
    // The reshape to [1, 2] is not a shape tensor (rank 2): it runs on the device, reading keep.
    const at = lowered.bound[keep.id]!.at;
    expect(at.buffer).toBe(VALUES_BUFFER);
    expect([...lowered.values.subarray(at.offset ?? 0, (at.offset ?? 0) + 2)]).toEqual([0, 1]);
  });

  test('weights are found in the weights buffer; a constant is read there (no copy); a reshape whose input dies at it works in place and its copy is dropped', () => {
    const network = weightedNetwork();
    const layout = layoutWeights(network);
    const bias = (network.layers.find((l) => l.name === 'bias')!.params as { weights: { data: Float32Array } }).weights;
    expect(new Float32Array(packWeights(layout).buffer, layout.offsets.get(bias as never)!, 6)).toEqual(bias.data);
    const lowered = lowerWith(network, { x: [2, 3] });
    const [exp, reshape] = ['exp', 'reshape'].map((n) => network.layers.find((l) => l.name === n)!.outputs[0]!);
    expect(lowered.aliases).toEqual(new Map([[reshape, exp]]));
    expect(lowered.bound[reshape]!.at).toEqual(lowered.bound[exp]!.at);
    const constant = network.layers.find((l) => l.name === 'bias')!.outputs[0]!;
    expect(lowered.bound[constant]!.at).toEqual({ buffer: WEIGHTS_BUFFER, offset: 0 });
    const plan = assemble(lowered.steps);
    expect(plan.spec.steps.map((s) => s.kind)).toEqual(['launch', 'launch']);
    // The sum reads the constant in the weights buffer.
    expect(plan.spec.steps[1]).toMatchObject({ kind: 'launch', args: expect.arrayContaining([{ pointer: { buffer: WEIGHTS_BUFFER, offset: 0 } }]) });
  });

  test('scratch lies after the intermediates, is aligned, and is reused layer after layer', () => {
    const network = weightedNetwork();
    const plain = lowerWith(network, { x: [2, 3] });
    const withScratch = lowerWith(network, { x: [2, 3] }, [], (name) => (name === 'exp' ? 1000 : name === 'add' ? 3000 : 0));
    expect(withScratch.arenaBytes).toBe(plain.arenaBytes + 3072);
    const scratchArgs = withScratch.steps.flatMap((s) => (s.kind === 'launch' ? s.args.filter((a) => 'pointer' in a && a.pointer.offset! >= plain.arenaBytes && a.pointer.buffer === ARENA_BUFFER) : []));
    expect(scratchArgs).toEqual([{ pointer: { buffer: ARENA_BUFFER, offset: plain.arenaBytes } }, { pointer: { buffer: ARENA_BUFFER, offset: plain.arenaBytes } }]);
  });

  test('one tensor marked as two outputs: the second output buffer gets a copy', () => {
    const net = new Network('n');
    const x = net.addInput('x', 'float32', [4]);
    const y = net.add1({ kind: 'unary', op: 'exp' }, [x], 'exp');
    net.markOutput(y, 'a');
    net.markOutput(y, 'b');
    const lowered = lowerWith(net, { x: [4] });
    expect(lowered.steps.at(-1)).toEqual({ kind: 'copy', dst: { buffer: FIRST_IO_BUFFER + 2, offset: 0 }, src: { buffer: FIRST_IO_BUFFER + 1, offset: 0 }, bytes: 16 });
  });
});

describe('assemble', () => {
  const kernel = (key: string, source = `// ${key}`) => ({ key, entry: 'k', source });
  const launch = (key: string, grid: [number] = [1], source?: string): LoweredStep => ({ kind: 'launch', kernel: kernel(key, source), grid, block: [32], args: [{ scalar: 'u32', value: 1 }] });

  test('each distinct source is one module, in first-use order; launches name their module', () => {
    const plan = assemble([launch('b'), launch('a'), launch('b'), { kind: 'memset', dst: { buffer: 0 }, bytes: 8, value: 0 }]);
    expect(plan.modules.map((m) => m.key)).toEqual(['b', 'a']);
    expect(plan.modules[0]!.sourceHash).toBe(sourceHash('// b'));
    expect(plan.spec.steps.map((s) => (s.kind === 'launch' ? s.module : s.kind))).toEqual([0, 1, 0, 'memset']);
    expect(() => encodePlan(plan.spec)).not.toThrow();
  });

  test('empty launches, copies and memsets and copies onto themselves are dropped', () => {
    const plan = assemble([
      launch('a', [0]),
      { kind: 'copy', dst: { buffer: 0, offset: 256 }, src: { buffer: 0, offset: 256 }, bytes: 64 },
      { kind: 'copy', dst: { buffer: 0 }, src: { buffer: 1 }, bytes: 0 },
      { kind: 'memset', dst: { buffer: 0 }, bytes: 0, value: 0 },
      { kind: 'copy', dst: { buffer: 0 }, src: { buffer: 1 }, bytes: 4 },
    ]);
    expect(plan.spec.steps).toEqual([{ kind: 'copy', dst: { buffer: 0 }, src: { buffer: 1 }, bytes: 4 }]);
    // The dropped launch's kernel is still a module: build() compiles what any shape may need.
    expect(plan.modules.map((m) => m.key)).toEqual(['a']);
  });

  test('two different sources under one key are an InternalError (a lowering bug)', () => {
    expect(() => kernelSources([launch('a', [1], 'x'), launch('a', [1], 'y')])).toThrow(InternalError);
  });
});
