/**
 * The converter registry (docs/architecture.md, lib/conversion/): a target maps to candidate converters; selection takes
 * the node's shapes, the settings and each candidate's own `checkArgs` into account, and
 * says why when nothing fits.
 */
import { InternalError } from '../errors';
import type { Node } from '../ir/graph';
import { Value } from '../ir/graph';
import { isDataDependentDim, isDataDependentSymbol } from '../ir/ops/data-dependent';
import { formatShape, symbolsOf } from '../ir/symbolic';
import type { NetTensor } from '../network';
import type { ConversionContext } from './context';
import type { CheckArgs, SelectionSettings } from './types';

export type { CheckArgs, DataDependentSizes, SelectionSettings } from './types';

/**
 * Builds the layers for `node` and returns one network tensor per node output; null for an
 * output nothing reads (`ctx.isUsed`), so costly unused outputs need not be built.
 */
export type ConverterImpl = (node: Node, ctx: ConversionContext) => ReadonlyArray<NetTensor | null>;


export interface ConverterOptions {
  /** Handles nodes whose inputs have run-time (symbolic) dims. Default true. */
  dynamic?: boolean;
  /** Handles nodes whose inputs are all static. Default true. */
  static?: boolean;
  checkArgs?: CheckArgs;
  /** Higher is tried first among candidates of the same strictness. Default 0. */
  priority?: number;
  /** Shown in listings and reasons (defaults to the target). */
  name?: string;
  /**
   * Reads or writes TensorRT's quantized types (float8e4m3fn, int4), which exist only between
   * quantize and dequantize layers: nodes of other targets on such values stay refused.
   */
  quantizedTypes?: boolean;
  /**
   * Produces a size only a run tells (a data-dependent symbol that none of the node's inputs
   * has, such as NonZero's count) with a layer that computes it at run time (nonzero). Nodes
   * making such a size are refused by every other converter; nodes only reading one need no
   * flag (a dynamic converter sees it as a run-time -1 dim).
   */
  dataDependent?: boolean;
}

export interface ConverterCandidate {
  readonly target: string;
  readonly impl: ConverterImpl;
  readonly dynamic: boolean;
  readonly static: boolean;
  readonly checkArgs?: CheckArgs;
  readonly priority: number;
  readonly name: string;
  /** Registration order, the last tie-breaker. */
  readonly order: number;
  readonly quantizedTypes: boolean;
  readonly dataDependent: boolean;
}

export type Selection = { ok: true; converter: ConverterCandidate } | { ok: false; reasons: string[] };

const table = new Map<string, ConverterCandidate[]>();
let registered = 0;

/** Every registered converter (compile() compares it with the built-in set to know whether user converters are in play). */
export const registeredCandidates = (): Set<ConverterCandidate> => new Set([...table.values()].flat());

/** Registers a converter for `target`. Registering with the target alone gives static+dynamic support. */
export function registerConverter(target: string, impl: ConverterImpl, options: ConverterOptions = {}): ConverterCandidate {
  const candidate: ConverterCandidate = {
    target,
    impl,
    dynamic: options.dynamic ?? true,
    static: options.static ?? true,
    checkArgs: options.checkArgs,
    priority: options.priority ?? 0,
    name: options.name ?? target,
    order: registered++,
    quantizedTypes: options.quantizedTypes ?? false,
    dataDependent: options.dataDependent ?? false,
  };
  if (!candidate.dynamic && !candidate.static) throw new InternalError(`converter ${candidate.name} supports neither static nor dynamic shapes`);
  const list = table.get(target) ?? [];
  list.push(candidate);
  table.set(target, list);
  return candidate;
}

/** Removes a converter (tests, and users replacing a built-in one). */
export function unregisterConverter(candidate: ConverterCandidate): void {
  const list = table.get(candidate.target);
  if (!list) return;
  const i = list.indexOf(candidate);
  if (i >= 0) list.splice(i, 1);
  if (list.length === 0) table.delete(candidate.target);
}

/** The converters registered for `target`, in registration order (to derive variants of them). */
export function registeredConverters(target: string): readonly ConverterCandidate[] {
  return [...(table.get(target) ?? [])];
}

/** True when any tensor input of `node` has a symbolic dim. */
export function hasDynamicInputs(node: Node): boolean {
  return node.inputValues().some((v) => v.type.kind === 'symint' || (v.type.kind === 'tensor' && v.type.shape.some((d) => typeof d !== 'number')));
}

/**
 * The candidates for a node, strictest first: for a dynamic node the dynamic-only ones, then
 * those supporting both; for a static node the static-only ones, then both. Within a group,
 * higher priority first, then registration order.
 */
export function candidatesFor(node: Node): ConverterCandidate[] {
  const dynamic = hasDynamicInputs(node);
  const all = table.get(node.target) ?? [];
  const fits = all.filter((c) => (dynamic ? c.dynamic : c.static));
  const strict = (c: ConverterCandidate): number => (dynamic ? (c.static ? 1 : 0) : c.dynamic ? 1 : 0);
  return fits.sort((a, b) => strict(a) - strict(b) || b.priority - a.priority || a.order - b.order);
}

const UNREPRESENTABLE: Record<string, string> = {
  float64: 'TensorRT has no float64 (set truncateDouble to compute it in float32)',
  complex64: 'TensorRT has no complex types (the complex lowering pass rewrites complex subgraphs into real arithmetic)',
  complex128: 'TensorRT has no complex types',
  int16: 'TensorRT has no int16',
  uint16: 'TensorRT has no uint16',
  uint32: 'TensorRT has no uint32',
  uint64: 'TensorRT has no uint64',
  // TensorRT 10 has FP8 (e4m3fn), FP4 (e2m1) and INT4, but only inside its quantize/dequantize
  // layers and weights: the quantization converters (quantizedTypes) take FP8 and INT4; any
  // other node on them runs in a fallback segment.
  float8e4m3fn: 'TensorRT holds FP8 only between quantize and dequantize layers',
  float8e4m3fnuz: 'TensorRT has no float8e4m3fnuz',
  float8e5m2: 'TensorRT has no float8e5m2',
  float8e5m2fnuz: 'TensorRT has no float8e5m2fnuz',
  float8e8m0: 'TensorRT has float8e8m0 only as block scales, which the converters do not map yet',
  float4e2m1: 'TensorRT computes FP4 only inside quantize/dequantize layers, which the converters do not map yet',
  int4: 'TensorRT holds INT4 only between quantize and dequantize layers',
  uint4: 'TensorRT has no uint4',
  int2: 'TensorRT has no int2',
  uint2: 'TensorRT has no uint2',
};

/** The data-dependent symbols in `node`'s output shapes that none of its inputs has: the sizes the node itself decides at run time. */
export function newDataDependentSymbols(node: Node): string[] {
  const known = new Set<string>();
  for (const v of node.inputValues()) {
    if (v.type.kind === 'tensor') v.type.shape.forEach((d) => symbolsOf(d, known));
    else if (v.type.kind === 'symint') symbolsOf(v.type.expr, known);
  }
  const fresh = new Set<string>();
  for (const v of node.outputs) {
    if (v.type.kind !== 'tensor') continue;
    for (const d of v.type.shape) for (const s of symbolsOf(d)) if (isDataDependentSymbol(s) && !known.has(s)) fresh.add(s);
  }
  return [...fresh];
}

/** Picks the converter for `node`, or collects every reason none fits. */
export function selectConverter(node: Node, settings: SelectionSettings = {}): Selection {
  if (settings.torchExecutedOps?.has(node.target) || settings.torchExecutedOps?.has(node.name)) {
    return { ok: false, reasons: ['forced to a fallback segment by torchExecutedOps'] };
  }
  const takesQuantized = (table.get(node.target) ?? []).some((c) => c.quantizedTypes);
  for (const v of [...node.inputValues(), ...node.outputs]) {
    if (v instanceof Value && v.type.kind === 'tensor') {
      const dtype = v.type.dtype;
      const why = UNREPRESENTABLE[dtype];
      const allowed = (dtype === 'float64' && settings.truncateDouble) || (takesQuantized && (dtype === 'float8e4m3fn' || dtype === 'int4'));
      if (why !== undefined && !allowed) return { ok: false, reasons: [`%${v.name} is ${dtype}: ${why}`] };
    }
  }
  // Sizes only a run tells: refused where the backend's engines cannot hold them; where they
  // can, a node making a new one needs a converter that computes it (`dataDependent`).
  // Partitioning keeps such values from entering an engine, and from leaving one where the
  // backend holds them `inside` only (lib/partitioning/partition.ts).
  if ((settings.dataDependentSizes ?? 'none') === 'none') {
    for (const v of [...node.inputValues(), ...node.outputs]) {
      if (v instanceof Value && v.type.kind === 'tensor' && v.type.shape.some(isDataDependentDim)) {
        return { ok: false, reasons: [`%${v.name} ${formatShape(v.type.shape)} has a size that depends on tensor data, which this backend's engines cannot hold`] };
      }
    }
  }
  const fresh = newDataDependentSymbols(node);
  const all = table.get(node.target) ?? [];
  if (all.length === 0) return { ok: false, reasons: [`no converter is registered for ${node.target}`] };
  const dynamic = hasDynamicInputs(node);
  const candidates = candidatesFor(node);
  const reasons: string[] = [];
  if (candidates.length === 0) {
    reasons.push(`the ${all.length} converter(s) for ${node.target} support only ${dynamic ? 'static' : 'dynamic'} shapes`);
  }
  for (const c of candidates) {
    if (fresh.length > 0 && !c.dataDependent) {
      reasons.push(`${c.name}: it does not compute ${fresh.join(', ')}, a size that depends on tensor data`);
      continue;
    }
    const verdict = c.checkArgs ? c.checkArgs(node, settings) : true;
    if (verdict === true) return { ok: true, converter: c };
    reasons.push(`${c.name}: ${verdict}`);
  }
  return { ok: false, reasons };
}

export interface ConverterListing {
  target: string;
  name: string;
  dynamic: boolean;
  static: boolean;
  priority: number;
  checksArgs: boolean;
}

/** Every registered converter with its flags, sorted by target, then in selection order for static nodes. */
export function listConverters(): ConverterListing[] {
  return [...table.entries()]
    .sort(([a], [b]) => a.localeCompare(b))
    .flatMap(([, list]) =>
      [...list]
        .sort((a, b) => b.priority - a.priority || a.order - b.order)
        .map((c) => ({ target: c.target, name: c.name, dynamic: c.dynamic, static: c.static, priority: c.priority, checksArgs: c.checkArgs !== undefined })),
    );
}

/** Targets with at least one converter. */
export function convertibleTargets(): string[] {
  return [...table.keys()].sort();
}
