/**
 * The forms in which compile() accepts a model input's shape (`settings.inputs`). A module of
 * its own, with no run-time code, so that the settings (./settings.ts) and the shape planner
 * (./input-shapes.ts) both read it without importing each other.
 */
import type { DType } from '../ir/dtype';

/**
 * How compile() sees one model input (`settings.inputs`), in one of three forms:
 *
 * - static, `{ shape: [4, 32] }`: compiled for exactly this shape; the model's symbolic
 *   dims in it are fixed (specialized) everywhere in the graph.
 * - one range, `{ min: [1, 32], opt: [8, 32], max: [64, 32] }`: run-time dims anywhere in
 *   [min, max] (TensorRT's optimization profile), tuned for `opt`. `opt` may be left out:
 *   it is then the max, and the logger says so. Dims the model fixes need min = max = that
 *   size. A symbol whose range is a single value is specialized as in a static shape.
 * - several optimization profiles, `{ profiles: [{ min, opt?, max }, ...] }`: one TensorRT
 *   optimization profile each (each engine carries them all and picks the first that fits
 *   the run's shapes). Every input given with `profiles` gives the same number of them; an
 *   input given as a shape or one range uses it in every profile.
 *
 * Specs given by name (an object keyed by input name, or a list with names) may leave inputs
 * out; a list without names gives every input in order. Inputs without a spec take their
 * ranges from the symbols they share with given inputs, else from the model: torch.export
 * `range_constraints`, ONNX `dim_param` symbols (unbounded, so such an input needs a spec).
 * One symbol shared by several inputs (the sequence length of `x` and `freqs_cis`) must get
 * the same range wherever it is given. min > max, opt outside [min, max], a range outside
 * the model's range for that symbol, or a size that differs from a static dim are
 * E_INVALID_ARGUMENT errors naming the input and dim. At run time, a dim outside the
 * compiled range is E_SHAPE_OUT_OF_RANGE naming the input, dim and range.
 */
export type InputSpec = StaticInputSpec | RangeInputSpec | ProfilesInputSpec;

/** Fields every input spec may have. */
interface InputSpecBase {
  /** Matches a graph input by name; without names, specs apply in input order. */
  name?: string;
  /** Checked against the model's input dtype when given. */
  dtype?: DType;
}

/** A static input shape (see {@link InputSpec}). */
export interface StaticInputSpec extends InputSpecBase {
  shape: number[];
}

/** The range of an input's shape in one optimization profile: every dim in [min, max], tuned for opt (default max). */
export interface ShapeRange {
  min: number[];
  opt?: number[];
  max: number[];
}

/** A dynamic input with one optimization profile (see {@link InputSpec}). */
export interface RangeInputSpec extends InputSpecBase, ShapeRange {}

/** A dynamic input with several optimization profiles (see {@link InputSpec}). */
export interface ProfilesInputSpec extends InputSpecBase {
  profiles: ShapeRange[];
}

/** `T` without its name, for each member of a union. */
type Unnamed<T> = T extends unknown ? Omit<T, 'name'> : never;

/** An input spec keyed by input name (the record form of `settings.inputs`). */
export type NamedInputSpec = Unnamed<InputSpec>;
