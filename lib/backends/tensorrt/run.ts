/**
 * The tensorrt backend's run path: an Engine over the addon's engine; outputs are allocated by
 * the GPU runtime (lib/gpu) and every input and output handed to TensorRT by device address.
 */
import { InternalError } from '../../errors';
import type { TrtDType } from '../../network';
import type { Tensor } from '../../ir/tensor';
import type { DeviceValue, RunValue } from '../../engine/residency';
import type { Engine, EngineSignature } from '../../engine/backend';
import type { NativeTensorRTEngine } from './binding';

/** A device address for TensorRT: the GPU runtime's DeviceBuffer must expose it. */
function addressOf(value: RunValue, name: string): bigint {
  const buffer = (value as { buffer?: { address?: unknown } }).buffer;
  if (buffer === undefined || typeof buffer.address !== 'bigint') {
    throw new InternalError(
      `tensorrt engine: the device value of "${name}" exposes no device address (DeviceBuffer.address); this build's GPU runtime cannot hand buffers to TensorRT`,
    );
  }
  return buffer.address;
}

/** The Engine of a loaded native engine on device `ordinal`. */
export function tensorrtEngine(native: NativeTensorRTEngine, signature: EngineSignature, ordinal: number): Engine {
  return {
    ...signature,
    residency: 'device',
    deviceOrdinal: ordinal,
    async run(inputs: Readonly<Record<string, RunValue>>): Promise<Record<string, RunValue>> {
      const shapes: Record<string, number[]> = Object.create(null);
      for (const [name, v] of Object.entries(inputs)) shapes[name] = [...v.shape];
      const outputShapes = native.outputShapes(shapes);
      // Output allocation and host↔device copies belong to the GPU runtime (lib/gpu).
      const { DeviceTensor } = await import('../../gpu/device-tensor');
      const outputs: Record<string, RunValue> = Object.create(null);
      const addresses: Record<string, bigint> = Object.create(null);
      for (const [name, v] of Object.entries(inputs)) addresses[name] = addressOf(v, name);
      const io = new Map(native.io().map((t) => [t.name, t]));
      for (const name of signature.outputNames) {
        const dtype = DTYPE_OF[io.get(name)?.dataType ?? -1];
        if (dtype === undefined) throw new InternalError(`tensorrt engine: output "${name}" has a DataType this library does not know`);
        const out = await DeviceTensor.allocate(dtype, outputShapes[name] ?? [], ordinal);
        outputs[name] = out;
        addresses[name] = addressOf(out, name);
      }
      await native.run(shapes, addresses, ordinal);
      return outputs;
    },
    // Host inputs of a program reach the engine's device through this (lib/runtime/execute.ts).
    async upload(tensor: Tensor): Promise<DeviceValue> {
      const { toDevice } = await import('../../gpu/device-tensor');
      return toDevice(tensor, ordinal);
    },
    dispose: () => native.dispose(),
  };
}

const DTYPE_OF: Record<number, TrtDType> = { 0: 'float32', 1: 'float16', 2: 'int8', 3: 'int32', 4: 'bool', 5: 'uint8', 7: 'bfloat16', 8: 'int64' };
