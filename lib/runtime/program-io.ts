/**
 * A program's inputs and outputs as its public objects (Program, TensorParallelProgram)
 * check and print them: run inputs in order or by name, checked against the declared dtypes,
 * shapes and symbol ranges before anything is posted to the worker.
 */
import { inspect } from 'node:util';

import { createError } from '../errors';
import { bindShapes, orderInputs, type ShapedInputs } from '../interpreter/bind-inputs';
import { tensorType } from '../ir/graph';
import { formatDim, formatShape, type Dim, type SymbolRange } from '../ir/symbolic';
import { Tensor } from '../tensor';
import type { ProgramIO } from './segments';

/** The declared inputs with their types, and the ranges of the symbols in their shapes. */
export function shapedInputs(inputs: readonly ProgramIO[], symbols: ReadonlyMap<string, SymbolRange>): ShapedInputs {
  return { inputs: inputs.map((io) => ({ name: io.name, tensorType: tensorType(io.dtype, io.shape) })), symbols };
}

/**
 * Run inputs (in order or by name) in declared order, each a Tensor of the declared dtype
 * and shape.
 *
 * @throws {BadInputError} `E_BAD_INPUT` naming the input: missing, unknown, not a Tensor, wrong dtype or shape.
 * @throws {ShapeOutOfRangeError} `E_SHAPE_OUT_OF_RANGE`: a dim outside its symbol's range.
 */
export function checkRunInputs(shaped: ShapedInputs, inputs: readonly Tensor[] | Readonly<Record<string, Tensor>>): Tensor[] {
  const ordered = orderInputs(
    shaped.inputs.map((io) => io.name),
    inputs,
  );
  ordered.forEach((t, i) => {
    if (!(t instanceof Tensor)) throw createError('E_BAD_INPUT', `input "${shaped.inputs[i]!.name}" must be a Tensor`);
  });
  bindShapes(shaped, ordered);
  return ordered;
}

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

/** Copies of `ios` whose shapes print (see {@link printableShape}) and that print as `name: dtype[shape]`. */
export function printableIO(ios: readonly ProgramIO[]): readonly ProgramIO[] {
  return Object.freeze(ios.map((io) => printAs({ ...io, shape: printableShape(io.shape) }, () => formatOneIO(io))));
}
