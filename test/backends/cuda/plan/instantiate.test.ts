/**
 * Instantiation (lib/backends/cuda/plan/instantiate.ts): concrete shapes from concrete inputs,
 * host values of shape tensors (from inferLayer or the reference executor), which layers
 * reach the device, and which host values it needs.
 */
import { instantiate, profileShapeSets } from '../../../../lib/backends/cuda/plan/instantiate';
import { executeLayer } from '../../../../lib/network/evaluate';
import { BadInputError, UnsupportedOpError } from '../../../../lib/errors';
import { Network, type Layer } from '../../../../lib/network';
import { Tensor } from '../../../../lib/ir/tensor';
import { dynamicBatchNetwork, shapeTensorNetwork, staticNetwork } from '../helpers';

describe('instantiate', () => {
  test('a static network: every tensor at its declared shape, every layer on the device, nothing uploaded', () => {
    const net = staticNetwork();
    const inst = instantiate(net, { x: [2, 3] });
    expect(inst.tensors.map((t) => t?.shape)).toEqual([[2, 3], [2, 3]]);
    expect(inst.deviceLayers.map((l) => l.name)).toEqual(['exp']);
    expect(inst.hostLayers).toEqual([]);
    expect(inst.uploads).toEqual([]);
  });

  test.each([1, 5, 8])('a dynamic batch of %i: the dims follow the input', (b) => {
    const inst = instantiate(dynamicBatchNetwork(), { x: [b, 4] });
    expect(inst.tensors[1]).toEqual({ dtype: 'float32', shape: [b, 4] });
  });

  test('shape tensors: computed on the host (inferLayer, then the reference executor), read as dims and uploaded where read as data', () => {
    const { network, s, p, flat, dims } = shapeTensorNetwork();
    const evaluated: string[] = [];
    const evaluate = (layer: Layer, ins: ReadonlyArray<Tensor | null>): Tensor[] => {
      evaluated.push(layer.name);
      return executeLayer(layer, ins);
    };
    const inst = instantiate(network, { x: [3, 4] }, evaluate);
    expect(inst.tensors[s.id]).toEqual({ dtype: 'int64', shape: [2], value: [3, 4] });
    expect(inst.tensors[p.id]).toEqual({ dtype: 'int64', shape: [1], value: [12] });
    // inferLayer folds the shape layer; only the reduction needs the executor.
    expect(evaluated).toEqual(['numel']);
    expect(inst.tensors[flat.id]).toEqual({ dtype: 'float32', shape: [12] });
    expect(inst.tensors[dims.id]).toEqual({ dtype: 'float32', shape: [2] });
    expect(inst.hostLayers.map((l) => l.name)).toEqual(['shape', 'numel']);
    expect(inst.deviceLayers.map((l) => l.name)).toEqual(['flatten', 'dims']);
    expect(inst.uploads).toEqual([s.id, p.id]);
    // The dead layer is neither run nor shaped.
    expect(network.layers.find((l) => l.name === 'unused')!.outputs.map((id) => inst.tensors[id])).toEqual([undefined]);
  });

  test('bool shape tensors are host values too: the _dyn expand picks its size list with equal + select', () => {
    // expand(x, [-1, 3]) as the converters write it: keep a dim where the list says -1.
    const net = new Network('expand');
    const x = net.addInput('x', 'float32', [-1, 1], [{ min: [1, 1], opt: [2, 1], max: [8, 1] }]);
    const inShape = net.add1({ kind: 'shape' }, [x], 'in_shape');
    const list = net.add1({ kind: 'constant', weights: Tensor.from('int64', [2], [-1n, 3n]) }, [], 'list');
    const minusOne = net.add1({ kind: 'constant', weights: Tensor.from('int64', [2], [-1n, -1n]) }, [], 'minus_one');
    const keep = net.add1({ kind: 'elementwise', op: 'equal' }, [list, minusOne], 'keep');
    const size = net.add1({ kind: 'select' }, [keep, inShape, list], 'size');
    const zeros = net.add1({ kind: 'constant', weights: Tensor.from('int64', [2], [0n, 0n]) }, [], 'zeros');
    const stride = net.add1({ kind: 'constant', weights: Tensor.from('int64', [2], [1n, 0n]) }, [], 'stride');
    const out = net.add1({ kind: 'slice', start: [0, 0], size: [0, 0], stride: [1, 1], mode: 'strict_bounds' }, [x, zeros, size, stride], 'expand');
    net.markOutput(out, 'y');
    const inst = instantiate(net, { x: [5, 1] });
    expect(inst.tensors[keep.id]).toEqual({ dtype: 'bool', shape: [2], value: [1, 0] });
    expect(inst.tensors[size.id]).toEqual({ dtype: 'int64', shape: [2], value: [5, 3] });
    expect(inst.tensors[out.id]).toEqual({ dtype: 'float32', shape: [5, 3] });
    expect(inst.deviceLayers.map((l) => l.name)).toEqual(['expand']);
  });

  test('another batch gives other host values (nothing is cached across shapes)', () => {
    const { network, p, flat } = shapeTensorNetwork();
    const inst = instantiate(network, { x: [7, 4] });
    expect(inst.tensors[p.id]!.value).toEqual([28]);
    expect(inst.tensors[flat.id]!.shape).toEqual([28]);
  });

  test('a host-known network output is uploaded so the device can hand it out', () => {
    const net = new Network('n');
    const x = net.addInput('x', 'float32', [-1, 2], [{ min: [1, 2], opt: [1, 2], max: [4, 2] }]);
    const s = net.add1({ kind: 'shape' }, [x], 'shape');
    net.markOutput(s, 's');
    const inst = instantiate(net, { x: [3, 2] });
    expect(inst.deviceLayers).toEqual([]);
    expect(inst.uploads).toEqual([s.id]);
    expect(inst.tensors[s.id]!.value).toEqual([3, 2]);
  });

  test('dims that depend on data computed on the device are UnsupportedOpError naming the layer', () => {
    const net = new Network('n');
    const x = net.addInput('x', 'float32', [2]);
    const y = net.addInput('y', 'float32', [6]);
    const d = net.add1({ kind: 'cast', to: 'int64' }, [x], 'dims_from_data');
    net.markOutput(net.add1({ kind: 'shuffle', zeroIsPlaceholder: false }, [y, d], 'reshape'), 'out');
    expect(() => instantiate(net, { x: [2], y: [6] })).toThrow(UnsupportedOpError);
    expect(() => instantiate(net, { x: [2], y: [6] })).toThrow('layer "reshape" (shuffle): output 0 has dims [-1, -1]');
  });

  test('input shapes that contradict each other at a layer are BadInputError naming it, as the reference backend words it', () => {
    const net = new Network('n');
    const a = net.addInput('a', 'float32', [-1], [{ min: [1], opt: [2], max: [8] }]);
    const b = net.addInput('b', 'float32', [-1], [{ min: [1], opt: [2], max: [8] }]);
    net.markOutput(net.add1({ kind: 'elementwise', op: 'sum' }, [a, b], 'add'), 'y');
    expect(instantiate(net, { a: [3], b: [3] }).tensors[net.outputs[0]!.tensor]!.shape).toEqual([3]);
    let error: unknown;
    try {
      instantiate(net, { a: [3], b: [2] });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(BadInputError);
    expect((error as BadInputError).message).toBe('cuda backend: the input shapes do not fit together: network layer "add" (elementwise): dim 0 cannot broadcast: 3 vs 2');
    expect((error as BadInputError).details).toEqual({ layer: 'add' });
  });

  test('profile shape sets: min, opt and max of each profile, deduplicated; one set for a static network', () => {
    expect(profileShapeSets(staticNetwork())).toEqual([{ x: [2, 3] }]);
    expect(profileShapeSets(dynamicBatchNetwork())).toEqual([{ x: [1, 4] }, { x: [2, 4] }, { x: [8, 4] }]);
    const net = new Network('n');
    net.addInput('x', 'float32', [-1], [{ min: [1], opt: [1], max: [4] }, { min: [4], opt: [6], max: [9] }]);
    expect(profileShapeSets(net).map((s) => s.x)).toEqual([[1], [4], [6], [9]]);
  });
});
