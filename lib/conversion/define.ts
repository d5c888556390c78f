/**
 * The one way built-in converters are registered (lib/conversion/converters/): each converter
 * declares, where it is defined, which shapes it serves and its argument checks, the way
 * Torch-TensorRT's `dynamo_tensorrt_converter` declares `supports_dynamic_shapes` and a
 * `capability_validator`. No module derives registrations from another's, so the order the
 * converter modules are imported in does not matter.
 */
import { Value, type Arg, type Node } from '../ir/graph';
import { registerConverter, type ConverterImpl } from './registry';
import type { CheckArgs, SelectionSettings } from './types';

/** One argument check: null (or true) when it accepts the node, otherwise the reason it refuses. */
export type Check = (node: Node, settings: SelectionSettings) => string | null | true;

/** The checks in order: the first refusal wins. */
export function allOf(...checks: ReadonlyArray<Check | undefined>): CheckArgs {
  const all = checks.filter((c): c is Check => c !== undefined);
  return (node, settings) => {
    for (const check of all) {
      const verdict = check(node, settings);
      if (verdict !== null && verdict !== true) return verdict;
    }
    return true;
  };
}

/** Refuses int / int[] arguments holding a run-time SymInt (the dynamic-shape legalization rewrites such ops into `_dyn` variants). */
export function staticIntArgs(node: Node): string | null {
  for (const [name, a] of Object.entries(node.args)) {
    const bad = (x: Arg): boolean => (x instanceof Value && x.type.kind === 'symint') || (Array.isArray(x) && x.some(bad));
    if (bad(a)) return `argument ${name} holds a run-time SymInt; the legalization pass rewrites such ops into _dyn variants`;
  }
  return null;
}

export interface ConverterSpec {
  /**
   * The nodes it serves: `static` (default: all input dims static), `dynamic` (only nodes
   * with run-time dims; named `<target> (dynamic)` unless `name` says otherwise), or `any`
   * (one registration for both, as the `_dyn` ops whose shape arguments are tensors).
   */
  shapes?: 'static' | 'dynamic' | 'any';
  /**
   * For a `static` converter whose code is also correct with run-time (-1) dims (it reads
   * ranks, never dims): `true`, or the extra checks such nodes must pass. It is then also
   * registered for dynamic nodes as `<name> (dynamic)`, checked by `staticIntArgs`, these
   * extra checks, then `checks`.
   */
  dynamic?: boolean | ReadonlyArray<Check>;
  /** Argument checks, in order (see `allOf`). */
  checks?: ReadonlyArray<Check | undefined>;
  priority?: number;
  name?: string;
  /** Takes TensorRT's quantized types (float8e4m3fn, int4) on its operands (ConverterOptions.quantizedTypes). */
  quantizedTypes?: boolean;
  /** Computes a size only a run tells, a data-dependent symbol of its output (ConverterOptions.dataDependent). */
  dataDependent?: boolean;
}

/** Registers `impl` for every target as `spec` declares. */
export function defineConverter(targets: string | readonly string[], impl: ConverterImpl, spec: ConverterSpec = {}): void {
  const shapes = spec.shapes ?? 'static';
  const own = spec.checks?.some((c) => c !== undefined) ? allOf(...spec.checks) : undefined;
  for (const target of typeof targets === 'string' ? [targets] : targets) {
    const name = spec.name ?? (shapes === 'dynamic' ? `${target} (dynamic)` : target);
    registerConverter(target, impl, {
      static: shapes !== 'dynamic',
      dynamic: shapes !== 'static',
      checkArgs: own,
      priority: spec.priority,
      name,
      quantizedTypes: spec.quantizedTypes,
      dataDependent: spec.dataDependent,
    });
    if (shapes === 'static' && spec.dynamic !== undefined && spec.dynamic !== false) {
      const extra = spec.dynamic === true ? [] : spec.dynamic;
      registerConverter(target, impl, {
        static: false,
        dynamic: true,
        checkArgs: allOf(staticIntArgs, ...extra, own),
        priority: spec.priority,
        name: `${name} (dynamic)`,
        quantizedTypes: spec.quantizedTypes,
        dataDependent: spec.dataDependent,
      });
    }
  }
}
