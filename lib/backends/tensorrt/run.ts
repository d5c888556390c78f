/**
 * The tensorrt backend's run path: an Engine over the addon's engine; outputs are allocated by
 * the GPU runtime (lib/gpu) and every input and output handed to TensorRT by device address,
 * except outputs whose size only the run tells (a nonzero's: -1 in the shapes TensorRT gives
 * before the run). TensorRT sizes those through the addon's IOutputAllocator, and they are
 * moved into DeviceTensors of the notified shapes once the run is done.
 */
import { BadInputError, InternalError } from '../../errors';
import type { TrtDType } from '../../network';
import type { Tensor } from '../../ir/tensor';
import type { DeviceValue, RunValue } from '../../engine/residency';
import type { RunLimits } from '../../engine/resource-limits';
import type { Engine, EngineSignature } from '../../engine/backend';
import type { DeviceTensor } from '../../gpu/device-tensor';
import type { NativeTensorRTEngine } from './binding';
import { checkedLayer, isCheckOutput } from './index-checks';

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

/**
 * The Engine of a loaded native engine on device `ordinal`. `checks` are the engine's
 * index-check outputs (./index-checks.ts): allocated and bound like the others, read after
 * each run, never returned; a set flag rejects the run with E_BAD_INPUT naming its layer.
 */
export function tensorrtEngine(native: NativeTensorRTEngine, signature: EngineSignature, ordinal: number, checks: readonly string[] = []): Engine {
  return {
    ...signature,
    residency: 'device',
    deviceOrdinal: ordinal,
    async run(inputs: Readonly<Record<string, RunValue>>, limits?: RunLimits): Promise<Record<string, RunValue>> {
      const shapes: Record<string, number[]> = Object.create(null);
      for (const [name, v] of Object.entries(inputs)) shapes[name] = [...v.shape];
      const outputShapes = native.outputShapes(shapes);
      // Output allocation and host↔device copies belong to the GPU runtime (lib/gpu).
      const { DeviceTensor } = await import('../../gpu/device-tensor');
      const outputs: Record<string, DeviceTensor> = Object.create(null);
      const addresses: Record<string, bigint> = Object.create(null);
      for (const [name, v] of Object.entries(inputs)) addresses[name] = addressOf(v, name);
      const io = new Map(native.io().map((t) => [t.name, t]));
      const flags: Record<string, DeviceTensor> = Object.create(null);
      const freeAll = (): void => {
        for (const t of [...Object.values(outputs), ...Object.values(flags)]) t.dispose();
      };
      // Outputs the run sizes: their dtype now, their shape and memory from the run.
      const sizedByRun = new Map<string, TrtDType>();
      try {
        for (const name of [...signature.outputNames, ...checks]) {
          const dtype = DTYPE_OF[io.get(name)?.dataType ?? -1];
          if (dtype === undefined) throw new InternalError(`tensorrt engine: output "${name}" has a DataType this library does not know`);
          const shape = outputShapes[name] ?? [];
          if (shape.some((d) => d < 0)) {
            sizedByRun.set(name, dtype);
            continue;
          }
          const out = await DeviceTensor.allocate(dtype, shape, ordinal);
          (isCheckOutput(name) ? flags : outputs)[name] = out;
          addresses[name] = addressOf(out, name);
        }
        const decided = await native.run(shapes, addresses, ordinal, limits?.maxTensorBytes ?? 0);
        if (decided !== undefined || sizedByRun.size > 0) {
          try {
            const into: Record<string, readonly [bigint, number]> = Object.create(null);
            for (const [name, dtype] of sizedByRun) {
              const shape = decided?.shapes[name];
              if (shape === undefined) throw new InternalError(`tensorrt engine: TensorRT reported no shape for output "${name}", whose size the run decides`);
              const out = await DeviceTensor.allocate(dtype, shape, ordinal);
              outputs[name] = out;
              into[name] = [addressOf(out, name), out.byteLength];
            }
            await decided!.moveInto(into);
          } finally {
            decided?.dispose();
          }
        }
        const read = await Promise.all(checks.map(async (name) => [name, (await flags[name]!.toHost()).data[0]] as const));
        const failed = read.find(([, flag]) => Number(flag) > 0);
        if (failed !== undefined) {
          const layer = checkedLayer(failed[0]);
          throw new BadInputError(`tensorrt engine: layer "${layer}": an index is out of range for the axis it addresses (a model's index must lie in [-d, d)); the run's outputs were discarded`, {
            details: { layer },
          });
        }
      } catch (error) {
        freeAll();
        throw error;
      }
      for (const t of Object.values(flags)) t.dispose();
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

// kINT4 (9) is absent: TensorRT packs INT4 I/O two values a byte, and the replay refuses INT4 network I/O.
const DTYPE_OF: Record<number, TrtDType> = { 0: 'float32', 1: 'float16', 2: 'int8', 3: 'int32', 4: 'bool', 5: 'uint8', 6: 'float8e4m3fn', 7: 'bfloat16', 8: 'int64' };
