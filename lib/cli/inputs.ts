/**
 * Input tensors for `run` and `bench`: `--input name=file.npy` files and `--random-inputs`,
 * checked against the declared inputs (of the model or the program file) so that errors
 * name the flag, the input and the file.
 */
import * as fs from 'node:fs';

import type { NamedInputSpec } from '../compile/settings';
import { dtypeInfo, type DType } from '../ir/dtype';
import { evaluateDim, formatShape, isStatic, symbolsOf, type Dim } from '../ir/symbolic';
import { readNpy } from '../kernels/npy';
import { Tensor } from '../ir/tensor';
import type { ShapeProfile } from '../runtime/segments';
import { specRunShape, UsageError } from './usage';

/** A declared input (a model's graph input or a program's input). */
export interface DeclaredInput {
  name: string;
  dtype: DType;
  shape: readonly Dim[];
  /** A compiled program's min/opt/max shapes per optimization profile (ProgramIO.profiles); a model's inputs have none. */
  profiles?: readonly ShapeProfile[];
}

/** An `--input` tensor and where it came from. */
export interface GivenInput {
  option: string;
  file: string;
  tensor: Tensor;
}

const NPY_MAGIC = [0x93, 0x4e, 0x55, 0x4d, 0x50, 0x59]; // \x93NUMPY

/** Reads every `--input name=file.npy`. */
export function readInputOptions(specs: readonly string[] = []): Map<string, GivenInput> {
  const given = new Map<string, GivenInput>();
  for (const spec of specs) {
    const option = `--input ${spec}`;
    const eq = spec.indexOf('=');
    if (eq <= 0 || eq === spec.length - 1) throw new UsageError(`${option}: expected name=file.npy (e.g. --input input0=x.npy)`);
    const name = spec.slice(0, eq);
    const file = spec.slice(eq + 1);
    if (given.has(name)) throw new UsageError(`${option}: input "${name}" was given twice`);
    let bytes: Uint8Array;
    try {
      bytes = fs.readFileSync(file);
    } catch (cause) {
      const why = (cause as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : (cause as Error).message;
      throw new UsageError(`${option}: cannot read ${file} for input "${name}": ${why}`, { cause, details: { flag: '--input', input: name, file } });
    }
    if (!NPY_MAGIC.every((b, i) => bytes[i] === b)) {
      throw new UsageError(
        `${option}: ${file} is not a .npy file (NumPy's format, as numpy.save writes it) for input "${name}"; convert it, or use --random-inputs`,
        { details: { flag: '--input', input: name, file } },
      );
    }
    let tensor: Tensor;
    try {
      tensor = readNpy(bytes);
    } catch (cause) {
      throw new UsageError(`${option}: ${file} cannot be read as .npy for input "${name}": ${(cause as Error).message}`, { cause, details: { flag: '--input', input: name, file } });
    }
    given.set(name, { option, file, tensor });
  }
  return given;
}

function unknownInput(option: string, name: string, declared: readonly DeclaredInput[]): never {
  throw new UsageError(`${option}: the model has no input "${name}" (its inputs: ${declared.map((d) => d.name).join(', ')})`, { details: { input: name } });
}

/**
 * Every given input names a declared input and has its dtype, rank and static dims; every
 * `--shape` names a declared input.
 */
export function checkGivenInputs(declared: readonly DeclaredInput[], given: ReadonlyMap<string, GivenInput>, shapes: ReadonlyMap<string, NamedInputSpec>): void {
  const byName = new Map(declared.map((d) => [d.name, d]));
  for (const [name, spec] of shapes) {
    const d = byName.get(name);
    if (d === undefined) unknownInput(`--shape ${name}=...`, name, declared);
    const dims = 'shape' in spec ? spec.shape : 'min' in spec ? spec.min : undefined;
    if (dims !== undefined && dims.length !== d.shape.length) {
      throw new UsageError(`--shape ${name}=...: input "${name}" has ${d.shape.length} dims ${formatShape(d.shape)}, not ${dims.length}`, { details: { input: name } });
    }
  }
  for (const [name, g] of given) {
    const d = byName.get(name);
    if (d === undefined) unknownInput(g.option, name, declared);
    const t = g.tensor;
    const mismatch = t.dtype !== d.dtype || t.shape.length !== d.shape.length || d.shape.some((dim, i) => isStatic(dim) && dim !== t.shape[i]);
    if (mismatch) {
      throw new UsageError(`${g.option}: ${g.file} holds ${t.dtype}[${t.shape.join(', ')}], but input "${name}" is ${d.dtype}${formatShape(d.shape)}`, {
        details: { flag: '--input', input: name, file: g.file },
      });
    }
  }
}

/** A small seeded generator (mulberry32): the same seed gives the same inputs on every machine. */
function generator(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Values of `dtype`: floats (and complex parts) uniform in [-1, 1), integers in [0, 10), bools 0/1. */
function randomTensor(dtype: DType, shape: number[], next: () => number): Tensor {
  const info = dtypeInfo(dtype);
  const count = shape.reduce((a, b) => a * b, 1) * info.lanes;
  const values = new Array<number>(count);
  for (let i = 0; i < count; i++) {
    const u = next();
    values[i] = info.kind === 'int' ? Math.floor(u * 10) : info.kind === 'bool' ? (u < 0.5 ? 0 : 1) : u * 2 - 1;
  }
  return Tensor.from(dtype, shape, values);
}

/**
 * The opt shape of a compiled input, for a random value without `--shape`: per dim, the size
 * the given inputs and shapes already bind it to, else the opt of the first profile that
 * holds every bound size (profile 0 when none does: the run then names the dim out of range).
 */
function optShape(d: DeclaredInput, profiles: readonly ShapeProfile[], bound: ReadonlyMap<string, number>): { dims: number[]; profile: number } {
  const known = d.shape.map((dim) => (!isStatic(dim) && [...symbolsOf(dim)].every((n) => bound.has(n)) ? evaluateDim(dim, bound) : undefined));
  const fits = (p: ShapeProfile): boolean => known.every((k, i) => k === undefined || (k >= p.min[i]! && k <= p.max[i]!));
  const profile = Math.max(0, profiles.findIndex(fits));
  return { dims: d.shape.map((dim, i) => (isStatic(dim) ? dim : (known[i] ?? profiles[profile]!.opt[i]!))), profile };
}

/**
 * The inputs of a run: the given ones, and with `seed` set, seeded random values for the
 * rest, at their `--shape` (a range's opt), else their declared shape with symbols bound by
 * the given inputs and shapes, else (a compiled program's dynamic input) its opt shape.
 * `note` hears, once, which inputs took their opt shape.
 *
 * @throws {UsageError} an input without a value, or a random one whose shape is not fully known.
 */
export function runInputs(
  declared: readonly DeclaredInput[],
  given: ReadonlyMap<string, GivenInput>,
  shapes: ReadonlyMap<string, NamedInputSpec>,
  seed: number | undefined,
  note: (message: string) => void = () => undefined,
): Record<string, Tensor> {
  const bound = new Map<string, number>();
  const bind = (d: DeclaredInput, dims: readonly number[]): void =>
    d.shape.forEach((dim, i) => {
      if (!isStatic(dim) && dim.op === 'sym') bound.set(dim.name, dims[i]!);
    });
  for (const d of declared) {
    const g = given.get(d.name);
    const s = shapes.get(d.name);
    if (g !== undefined) bind(d, g.tensor.shape);
    else if (s !== undefined && specRunShape(s) !== undefined) bind(d, specRunShape(s)!);
  }
  const next = generator(seed ?? 0);
  const atOpt: string[] = [];
  // Null prototype: an input named "__proto__" is an ordinary key.
  const inputs: Record<string, Tensor> = Object.create(null);
  for (const d of declared) {
    const g = given.get(d.name);
    if (g !== undefined) {
      inputs[d.name] = g.tensor;
      continue;
    }
    if (seed === undefined) {
      throw new UsageError(`input "${d.name}" (${d.dtype}${formatShape(d.shape)}) has no value: add --input ${d.name}=file.npy, or --random-inputs`, { details: { input: d.name } });
    }
    const s = shapes.get(d.name);
    let dims = s === undefined ? undefined : specRunShape(s);
    if (dims === undefined && d.shape.every((dim) => [...symbolsOf(dim)].every((n) => bound.has(n)))) dims = d.shape.map((dim) => evaluateDim(dim, bound));
    if (dims === undefined && d.profiles !== undefined && d.profiles.length > 0) {
      const opt = optShape(d, d.profiles, bound);
      dims = opt.dims;
      // Later inputs sharing a symbol take the same size.
      bind(d, dims);
      atOpt.push(`${d.name}=${dims.join('x') || 'scalar'}${d.profiles.length > 1 ? ` (profile ${opt.profile} of ${d.profiles.length})` : ''}`);
    }
    if (dims === undefined) {
      const example = d.shape.map((dim) => (isStatic(dim) ? dim : 1)).join('x') || 'scalar';
      throw new UsageError(`--random-inputs: input "${d.name}" has dynamic dims ${formatShape(d.shape)}: add --shape ${d.name}=${example}`, { details: { input: d.name } });
    }
    inputs[d.name] = randomTensor(d.dtype, dims, next);
  }
  if (atOpt.length > 0) note(`--random-inputs: no --shape for ${atOpt.length === 1 ? 'a dynamic input' : 'dynamic inputs'}: using the compiled opt shape ${atOpt.join(', ')}`);
  return inputs;
}
