/**
 * The checks of checkRunInputs() (./program-io.ts) as one pass over tables built once per
 * program, for runs on the calling thread: a model that computes in 20 µs
 * cannot afford the general check's name lists, closures and a Tensor rebuilt per input.
 * It is conservative: it accepts only what checkRunInputs() accepts, with the same order,
 * and answers undefined for anything else (a wrong dtype, a tensor whose fields were
 * reassigned, a DeviceTensor, an expression dim), so that the caller runs checkRunInputs(),
 * which throws the typed error. Every error therefore has one source, the general check.
 */
import type { ShapedInputs } from '../interpreter/bind-inputs';
import { dtypeInfo, type DType } from '../ir/dtype';
import { isIntactTensor, Tensor } from '../ir/tensor';
import type { RunLimits } from '../engine/resource-limits';

/** A dim of the table: ≥ 0 a static dim, < 0 the symbol of slot -1 - d. */
type PlannedDim = number;

export class FastInputCheck {
  /** The elements of the inputs the last accepted call returned, all inputs together. */
  elements = 0;
  /** A symbol's value in the call under way, by slot; NaN while unbound. */
  private readonly bound: Float64Array;

  private constructor(
    private readonly names: readonly string[],
    private readonly dtypes: readonly DType[],
    private readonly dims: readonly (readonly PlannedDim[])[],
    private readonly lanes: readonly number[],
    private readonly itemBytes: readonly number[],
    private readonly symbolMin: readonly number[],
    private readonly symbolMax: readonly number[],
    private readonly maxTensorBytes: number,
  ) {
    this.bound = new Float64Array(symbolMin.length);
  }

  /** The tables of `shaped`; undefined where a dim is an expression (s0*2): only the general check evaluates those. */
  static of(shaped: ShapedInputs, limits: RunLimits): FastInputCheck | undefined {
    const slots = new Map<string, number>();
    const symbolMin: number[] = [];
    const symbolMax: number[] = [];
    const dims: PlannedDim[][] = [];
    for (const io of shaped.inputs) {
      const planned: PlannedDim[] = [];
      for (const d of io.tensorType.shape) {
        if (typeof d === 'number') {
          planned.push(d);
          continue;
        }
        if (d.op !== 'sym') return undefined;
        let slot = slots.get(d.name);
        if (slot === undefined) {
          slot = symbolMin.length;
          slots.set(d.name, slot);
          const range = shaped.symbols.get(d.name);
          symbolMin.push(range?.min ?? -Infinity);
          symbolMax.push(range?.max ?? Infinity);
        }
        planned.push(-1 - slot);
      }
      dims.push(planned);
    }
    const infos = shaped.inputs.map((io) => dtypeInfo(io.tensorType.dtype));
    return new FastInputCheck(
      shaped.inputs.map((io) => io.name),
      shaped.inputs.map((io) => io.tensorType.dtype),
      dims,
      infos.map((i) => i.lanes),
      infos.map((i) => i.itemBytes),
      symbolMin,
      symbolMax,
      limits.maxTensorBytes,
    );
  }

  /** `inputs` (in order or by name) in declared order, when they pass every check; else undefined (see the top of this file). */
  check(inputs: unknown): Tensor[] | undefined {
    const n = this.names.length;
    if (inputs === null || typeof inputs !== 'object') return undefined;
    // A copy even of an array: each element is read once, so what is checked is what runs
    // (an array's getters, or a Proxy, could answer a second read differently).
    const ordered = new Array<Tensor>(n);
    if (Array.isArray(inputs)) {
      if (inputs.length !== n) return undefined;
      for (let i = 0; i < n; i++) ordered[i] = inputs[i];
    } else {
      // Exactly the names, own and enumerable: anything else is for the general check to name.
      if (Object.keys(inputs).length !== n) return undefined;
      for (let i = 0; i < n; i++) {
        if (!Object.hasOwn(inputs, this.names[i]!)) return undefined;
        ordered[i] = (inputs as Record<string, Tensor>)[this.names[i]!]!;
      }
    }
    if (this.bound.length > 0) this.bound.fill(NaN);
    let elements = 0;
    for (let i = 0; i < n; i++) {
      const count = this.accepted(ordered[i], i);
      if (count < 0) return undefined;
      elements += count;
    }
    this.elements = elements;
    return ordered;
  }

  /** The elements of input `i`, or -1 where it fails a check. */
  private accepted(t: unknown, i: number): number {
    if (!(t instanceof Tensor) || !isIntactTensor(t) || t.dtype !== this.dtypes[i]) return -1;
    const want = this.dims[i]!;
    const shape = t.shape;
    if (shape.length !== want.length) return -1;
    let count = 1;
    for (let axis = 0; axis < want.length; axis++) {
      const d = want[axis]!;
      const actual = shape[axis]!;
      if (d >= 0) {
        if (d !== actual) return -1;
      } else {
        const slot = -1 - d;
        const bound = this.bound[slot]!;
        if ((!Number.isNaN(bound) && bound !== actual) || actual < this.symbolMin[slot]! || actual > this.symbolMax[slot]!) return -1;
        this.bound[slot] = actual;
      }
      count *= actual;
    }
    // An empty tensor, or a buffer detached or resized since the tensor was built: the general check decides.
    if (count === 0 || t.data.length !== count * this.lanes[i]!) return -1;
    if (count * this.itemBytes[i]! > this.maxTensorBytes) return -1;
    return count;
  }
}
