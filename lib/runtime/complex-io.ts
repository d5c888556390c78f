/**
 * A program's complex boundary (docs/complex-numbers.md, "Runtime boundary"). Inside a compiled program
 * complex values travel as real carriers with a trailing dim of 2 (lib/lowering/complex/);
 * the caller still passes and receives complex64/complex128 tensors. The executor converts
 * at the boundary:
 *
 * - complex64 ↔ float32 carrier: the same interleaved Float32Array, seen with another dtype
 *   and shape (zero copy);
 * - complex128 → float32 carrier (truncateDouble): a float64 → float32 copy; back, a copy;
 * - complex128 ↔ float64 carrier (a complex128 output computed without truncateDouble): zero copy.
 */
import { InternalError } from '../errors';
import { Tensor } from '../ir/tensor';
import type { ProgramIO } from './segments';

export type { ComplexIOAdapter } from './segments';

/** Typed-array kinds compared by tag, not instanceof: data may come from another realm (worker messages, vm contexts). */
const isF32 = (a: unknown): a is Float32Array => Object.prototype.toString.call(a) === '[object Float32Array]';
const isF64 = (a: unknown): a is Float64Array => Object.prototype.toString.call(a) === '[object Float64Array]';

/** A caller's tensor for `io` as the program's carrier (itself when `io` is not complex). */
export function toCarrier(io: ProgramIO, t: Tensor): Tensor {
  const adapter = io.complex;
  if (adapter === undefined) return t;
  if (t.dtype !== 'complex64' && t.dtype !== 'complex128') throw new InternalError(`program input "${io.name}" should be complex, got ${t.dtype}`);
  const shape = [...t.shape, 2];
  const data = t.data as Float32Array | Float64Array;
  if (adapter.carrier === 'float32') return new Tensor('float32', shape, isF32(data) ? data : Float32Array.from(data));
  return new Tensor('float64', shape, isF64(data) ? data : Float64Array.from(data));
}

/** A carrier computed for output `io` as the complex tensor the caller receives (itself when `io` is not complex). */
export function fromCarrier(io: ProgramIO, t: Tensor): Tensor {
  if (io.complex === undefined) return t;
  if ((t.dtype !== 'float32' && t.dtype !== 'float64') || t.shape[t.shape.length - 1] !== 2) {
    throw new InternalError(`program output "${io.name}" should be a carrier [..., 2] of its complex values, got ${t.dtype}[${t.shape.join(', ')}]`);
  }
  const shape = t.shape.slice(0, -1);
  const data = t.data as Float32Array | Float64Array;
  if (io.dtype === 'complex64') return new Tensor('complex64', shape, isF32(data) ? data : Float32Array.from(data));
  return new Tensor('complex128', shape, isF64(data) ? data : Float64Array.from(data));
}
