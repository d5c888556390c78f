/**
 * onnxruntime's CPU memory arena is off for a network with a tensor of 64 MiB or more (the
 * arena keeps every block it frees, so such a run holds several times its live tensors) and
 * on otherwise; the choice travels in the engine bytes, and engines without it (built before
 * the choice existed) keep the arena.
 */
import { ARENA_OFF_TENSOR_BYTES, buildOrtEngine } from '../../../lib/backends/onnxruntime/build';
import { packOrtEngine, unpackOrtEngine } from '../../../lib/backends/onnxruntime/engine-format';
import { Network } from '../../../lib/network';

/** x [n] → exp → y: one input, one output of `elements` float32. */
function expNetwork(elements: number): Network {
  const network = new Network('n');
  const x = network.addInput('x', 'float32', [elements]);
  network.markOutput(network.add1({ kind: 'unary', op: 'exp' }, [x], 'exp'), 'y');
  return network;
}

const SESSION = { intraOpThreads: 1, interOpThreads: 1 };

test('a network with a tensor of 64 MiB or more builds an engine without the arena', () => {
  const elements = ARENA_OFF_TENSOR_BYTES / 4;
  expect(unpackOrtEngine(buildOrtEngine(expNetwork(elements), SESSION)).description.session).toEqual({ ...SESSION, memoryArena: false });
  expect(unpackOrtEngine(buildOrtEngine(expNetwork(elements - 1), SESSION)).description.session).toEqual(SESSION);
});

test('dims decided at run time do not turn the arena off', () => {
  const network = new Network('dynamic');
  const x = network.addInput('x', 'float32', [-1, 2 ** 30], [{ min: [1, 2 ** 30], opt: [1, 2 ** 30], max: [1, 2 ** 30] }]);
  network.markOutput(network.add1({ kind: 'unary', op: 'exp' }, [x], 'exp'), 'y');
  expect(unpackOrtEngine(buildOrtEngine(network, SESSION)).description.session.memoryArena).toBeUndefined();
});

test('an engine description without the setting keeps the arena', () => {
  const built = unpackOrtEngine(buildOrtEngine(expNetwork(4), SESSION));
  const again = unpackOrtEngine(packOrtEngine(built.description, built.model));
  expect(again.description.session).toEqual(SESSION);
});
