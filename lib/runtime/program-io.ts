/**
 * A program's inputs and outputs as its public objects (Program, TensorParallelProgram)
 * check and print them: run inputs in order or by name, checked against the declared dtypes,
 * shapes and symbol ranges before anything is posted to the worker.
 */
import { inspect } from 'node:util';

import { BadInputError, createError, InvalidArgumentError } from '../errors';
import { bindShapes, orderInputs, type ShapedInputs } from '../interpreter/bind-inputs';
import { tensorType } from '../ir/graph';
import { formatDim, formatShape, type Dim, type SymbolRange } from '../ir/symbolic';
import { DeviceTensor } from '../gpu/device-tensor';
import { Tensor } from '../ir/tensor';
import { checkTensorBytes, type RunLimits } from '../engine/resource-limits';
import type { ProgramIO } from './segments';
import { isShared } from './worker/worker-protocol';

/** The declared inputs with their types, and the ranges of the symbols in their shapes. */
export function shapedInputs(inputs: readonly ProgramIO[], symbols: ReadonlyMap<string, SymbolRange>): ShapedInputs {
  return { inputs: inputs.map((io) => ({ name: io.name, tensorType: tensorType(io.dtype, io.shape) })), symbols };
}

/** Whether `buffer` was detached (transferred away); Node.js 20 has no `ArrayBuffer.prototype.detached`. */
function isDetached(buffer: ArrayBufferLike): boolean {
  if (buffer.byteLength !== 0 || isShared(buffer)) return false;
  try {
    new Uint8Array(buffer);
    return false;
  } catch {
    return true;
  }
}

/**
 * Checks that `t`, a Tensor, still holds what a tensor must (its fields are plain properties
 * a caller can change, and its buffer can be transferred away after it was built).
 *
 * @throws {BadInputError} `E_BAD_INPUT` naming the input.
 */
function checkTensorData(t: Tensor, label: string): void {
  if (ArrayBuffer.isView(t.data) && isDetached(t.data.buffer)) {
    throw new BadInputError(`${label}: its data's ArrayBuffer is detached (transferred to another thread or structuredClone'd with transfer), so it cannot be read`, {
      details: { input: label },
    });
  }
  try {
    new Tensor(t.dtype, t.shape, t.data);
  } catch (cause) {
    if (cause instanceof InvalidArgumentError) throw new BadInputError(`${label} is not a valid tensor: ${cause.message}`, { cause });
    throw cause;
  }
}

/**
 * Run inputs (in order or by name) in declared order, each a Tensor of the declared dtype
 * and shape whose data can be sent to the worker, and none larger than `limits` allows.
 * Nothing is changed before every input has passed.
 *
 * @throws {BadInputError} `E_BAD_INPUT` naming the input: missing, unknown, not a Tensor, detached data, wrong dtype or shape.
 * @throws {ShapeOutOfRangeError} `E_SHAPE_OUT_OF_RANGE`: a dim outside its symbol's range.
 * @throws {ResourceLimitError} `E_RESOURCE_LIMIT`: an input larger than `limits.maxTensorBytes`.
 */
export function checkRunInputs(shaped: ShapedInputs, inputs: readonly Tensor[] | Readonly<Record<string, Tensor>>, limits: RunLimits): Tensor[];
/** With `allowDevice`, live DeviceTensors (shape and dtype checked the same) are accepted too. */
export function checkRunInputs(
  shaped: ShapedInputs,
  inputs: readonly RunInput[] | Readonly<Record<string, RunInput>>,
  limits: RunLimits,
  allowDevice: true,
): RunInput[];
export function checkRunInputs(
  shaped: ShapedInputs,
  inputs: readonly RunInput[] | Readonly<Record<string, RunInput>>,
  limits: RunLimits,
  allowDevice = false,
): RunInput[] {
  const ordered = orderInputs(
    shaped.inputs.map((io) => io.name),
    inputs,
  );
  ordered.forEach((t, i) => {
    const label = `input "${shaped.inputs[i]!.name}"`;
    if (t instanceof DeviceTensor) {
      if (t.disposed) throw new BadInputError(`${label} is a DeviceTensor that was disposed`, { details: { input: shaped.inputs[i]!.name } });
      if (allowDevice) return;
      throw new BadInputError(`${label} is a DeviceTensor, but this program runs on the CPU: pass a Tensor (await tensor.toHost())`, { details: { input: shaped.inputs[i]!.name } });
    }
    if (!(t instanceof Tensor)) throw new BadInputError(`${label} must be a Tensor${allowDevice ? ' or a DeviceTensor' : ''}, got ${t === null ? 'null' : typeof t}`);
    checkTensorData(t, label);
  });
  bindShapes(shaped, ordered);
  ordered.forEach((t, i) => checkTensorBytes(limits, t.dtype, t.shape, `input "${shaped.inputs[i]!.name}"`, { input: shaped.inputs[i]!.name }));
  return ordered;
}

/** What Program.run() takes for one input: a host Tensor, or (for programs that run on a GPU) a DeviceTensor. */
export type RunInput = Tensor | DeviceTensor;

/** `name: dtype[shape]`. */
export function formatOneIO(io: ProgramIO): string {
  return `${io.name}: ${io.dtype}${formatShape(io.shape)}`;
}

/** `name: dtype[shape], ...` for toString(). */
export function formatIO(ios: readonly ProgramIO[]): string {
  return ios.map(formatOneIO).join(', ');
}

/**
 * Gives `target` a toString() and a util.inspect form returning `text()`. Non-enumerable, so
 * equality checks, JSON and structured cloning see the plain data.
 */
function printAs<T extends object>(target: T, text: () => string): T {
  Object.defineProperty(target, 'toString', { value: text, enumerable: false });
  Object.defineProperty(target, inspect.custom, { value: text, enumerable: false });
  return target;
}

/**
 * A copy of `shape` that prints as `[batch, 3, 224, 224]` in template strings, String() and
 * console.log, symbolic dims included (a plain array of SymExpr objects prints
 * `[object Object]`).
 */
export function printableShape(shape: readonly Dim[]): Dim[] {
  const dims = shape.map((d) => (typeof d === 'number' ? d : printAs({ ...d }, () => formatDim(d))));
  return printAs(dims, () => formatShape(shape));
}

/**
 * Copies of `ios` whose shapes print (see {@link printableShape}) and that print as
 * `name: dtype[shape]`. Profiles are copied too: changing them must not change the program.
 */
export function printableIO(ios: readonly ProgramIO[]): readonly ProgramIO[] {
  return Object.freeze(
    ios.map((io) => {
      const copy: ProgramIO = { ...io, shape: printableShape(io.shape) };
      if (io.profiles !== undefined) copy.profiles = io.profiles.map((p) => ({ min: [...p.min], opt: [...p.opt], max: [...p.max] }));
      return printAs(copy, () => formatOneIO(io));
    }),
  );
}
