/**
 * DeviceTensor.copyFrom (lib/gpu/device-tensor.ts), the one device-to-device copy that clone()
 * and a cuda engine's input and output copies share, on the simulated device: the bytes
 * arrive, a size mismatch or a freed tensor is a typed error, an empty tensor copies nothing.
 */
import { DeviceTensor, toDevice } from '../../lib/gpu/device-tensor';
import { Tensor } from '../../lib/ir/tensor';
import { resetSimulatedGpu, simulatedGpu } from '../helpers/simulated-gpu';

jest.mock('../../lib/gpu/binding', () => require('../helpers/simulated-gpu').bindingModule);

afterEach(() => resetSimulatedGpu());

test('copyFrom() overwrites every byte; clone() is an allocation and copyFrom()', async () => {
  const src = await toDevice(Tensor.from('float32', [2, 2], [1, -2, 3.5, 4]), 0);
  const dst = await toDevice(Tensor.from('float32', [2, 2], [0, 0, 0, 0]), 0);
  await dst.copyFrom(src);
  expect((await dst.toHost()).toArray()).toEqual([1, -2, 3.5, 4]);
  // Another dtype and shape of the same byte length copies the raw bytes (a view's rules).
  const bits = await DeviceTensor.allocate('int32', [4], 0);
  await bits.copyFrom(src);
  expect((await bits.toHost()).toArray()).toEqual(Array.from(new Int32Array(new Float32Array([1, -2, 3.5, 4]).buffer)));
  const copy = await src.clone();
  src.dispose();
  expect((await copy.toHost()).toArray()).toEqual([1, -2, 3.5, 4]);
});

test('a size mismatch and a freed tensor are E_INVALID_ARGUMENT; an empty tensor copies nothing', async () => {
  const small = await DeviceTensor.allocate('float32', [3], 0);
  const large = await DeviceTensor.allocate('float32', [4], 0);
  await expect(small.copyFrom(large)).rejects.toMatchObject({ code: 'E_INVALID_ARGUMENT', message: 'cannot copy 16 bytes into a DeviceTensor of 12' });
  large.dispose();
  await expect(small.copyFrom(large)).rejects.toMatchObject({ code: 'E_INVALID_ARGUMENT' });
  // With every device copy failing, an empty one still succeeds: it makes none.
  simulatedGpu.failCopies = true;
  const a = await DeviceTensor.allocate('float32', [0, 3], 0);
  const b = await DeviceTensor.allocate('float32', [0, 3], 0);
  await expect(a.copyFrom(b)).resolves.toBeUndefined();
  await expect(small.copyFrom(await DeviceTensor.allocate('int8', [12], 0))).rejects.toThrow('copy failed (simulated)');
});
