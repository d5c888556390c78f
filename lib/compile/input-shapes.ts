/**
 * compile()'s input shapes: from `settings.inputs` (static shapes, ranges, or several
 * optimization profiles; see InputSpec in ./input-spec.ts) and the model's own symbol ranges
 * (torch.export `range_constraints`, ONNX `dim_param`), a plan: which symbols are fixed at
 * compile time (specialized), and for each remaining (dynamic) symbol its min/opt/max in every
 * optimization profile. Profiles of any tensor with symbolic dims (graph inputs, and values
 * crossing into an engine segment from a fallback segment) are derived from the plan.
 */
import { InvalidArgumentError, BadInputError } from '../errors';
import { orderInputs } from '../interpreter/bind-inputs';
import { isDType } from '../ir/dtype';
import type { Graph } from '../ir/graph';
import { dimBounds, evaluateDim, formatDim, formatShape, isStatic, symbolsOf, type Dim, type SymbolRange } from '../ir/symbolic';
import type { Logger } from '../logger';
import type { ProfileShapes } from '../network';
import type { Segment } from '../partitioning/partition';
import type { InputSpec, ShapeRange } from './input-spec';

/** One symbol's bounds in one optimization profile. */
export interface SymbolProfile {
  min: number;
  opt: number;
  max: number;
}

export interface InputShapePlan {
  /** Symbols fixed at compile time (static specs, or a range of one value): specialize these. */
  staticSymbols: Map<string, number>;
  /** Per optimization profile, the bounds of every dynamic symbol (empty when nothing is dynamic). */
  profiles: Array<Map<string, SymbolProfile>>;
  /** Every dynamic symbol's range over all profiles (the range run-time shapes are checked against). */
  ranges: Map<string, SymbolRange>;
}

/** True when the plan leaves run-time dims (the graph is compiled with shape tensors and profiles). */
export function isDynamicPlan(plan: InputShapePlan): boolean {
  return plan.ranges.size > 0;
}

const KEYS = new Set(['name', 'dtype', 'shape', 'min', 'opt', 'max', 'profiles']);

function isDims(v: unknown): v is number[] {
  return Array.isArray(v) && v.every((d) => Number.isInteger(d) && (d as number) >= 0);
}

/**
 * Checks one `settings.inputs` entry's form (not against the model): the problem, or null.
 * Exactly one of `shape`, `min`/`max` (with optional `opt`) or `profiles`.
 */
export function checkInputSpecForm(label: string, spec: unknown): string | null {
  if (typeof spec !== 'object' || spec === null) return `${label} must be an object with a shape, a {min, opt, max} range or profiles`;
  const s = spec as Record<string, unknown>;
  for (const k of Object.keys(s)) if (!KEYS.has(k)) return `${label} has an unknown key "${k}" (known: ${[...KEYS].join(', ')})`;
  if (s.dtype !== undefined && !isDType(s.dtype)) return `${label}.dtype ${JSON.stringify(s.dtype)} is not a dtype`;
  if (s.name !== undefined && typeof s.name !== 'string') return `${label}.name must be a string`;
  const forms = ['shape' in s, 'min' in s || 'max' in s || 'opt' in s, 'profiles' in s].filter(Boolean).length;
  if (forms !== 1) return `${label} needs exactly one of shape, {min, opt, max} or profiles`;
  const range = (l: string, r: Record<string, unknown>): string | null => {
    for (const k of Object.keys(r)) if (!['min', 'opt', 'max'].includes(k)) return `${l} has an unknown key "${k}" (known: min, opt, max)`;
    for (const k of ['min', 'max'] as const) if (!isDims(r[k])) return `${l}.${k} must be a list of non-negative integers, got ${JSON.stringify(r[k])}`;
    if (r.opt !== undefined && !isDims(r.opt)) return `${l}.opt must be a list of non-negative integers, got ${JSON.stringify(r.opt)}`;
    const n = (r.min as number[]).length;
    if ((r.max as number[]).length !== n || (r.opt !== undefined && (r.opt as number[]).length !== n)) return `${l}: min, opt and max must have the same length`;
    return null;
  };
  if ('shape' in s) return isDims(s.shape) ? null : `${label}.shape must be a list of non-negative integers, got ${JSON.stringify(s.shape)}`;
  if ('profiles' in s) {
    if (!Array.isArray(s.profiles) || s.profiles.length === 0) return `${label}.profiles must be a non-empty list of {min, opt, max}`;
    for (let i = 0; i < s.profiles.length; i++) {
      const p = s.profiles[i] as unknown;
      if (typeof p !== 'object' || p === null) return `${label}.profiles[${i}] must be {min, opt, max}`;
      const r = range(`${label}.profiles[${i}]`, p as Record<string, unknown>);
      if (r) return r;
    }
    return null;
  }
  const { name: _n, dtype: _d, ...r } = s;
  return range(label, r);
}

/** Where a symbol's bounds came from, for messages. */
interface Origin {
  input: string;
  dim: number;
}

interface Constraint extends SymbolProfile {
  explicitOpt: boolean;
  from: Origin;
}

const fmtRange = (r: SymbolRange): string => `[${r.min}, ${r.max === Infinity ? '∞' : r.max}]`;

/**
 * The specs in graph-input order (undefined where none is given). Given by name (an object,
 * or a list with names), some inputs may be left out: they take their ranges from the model
 * and from symbols they share with given inputs. A list without names gives every input.
 */
function orderedSpecs(graph: Graph, inputs: InputSpec[] | Record<string, unknown> | undefined): Array<InputSpec | undefined> {
  const names = graph.inputs.map((v) => v.name);
  if (inputs === undefined) return names.map(() => undefined);
  let byName: Record<string, InputSpec>;
  if (Array.isArray(inputs)) {
    if (!inputs.some((s) => s.name !== undefined)) {
      try {
        return orderInputs(names, inputs);
      } catch (error) {
        if (error instanceof BadInputError) throw new InvalidArgumentError(`settings.inputs: ${error.message}`, { cause: error });
        throw error;
      }
    }
    byName = Object.fromEntries(inputs.map((s) => [s.name ?? '', s]));
  } else byName = inputs as Record<string, InputSpec>;
  const unknown = Object.keys(byName).filter((k) => !names.includes(k));
  if (unknown.length > 0) {
    throw new InvalidArgumentError(`settings.inputs: inputs do not match the model's (${names.join(', ')}): unknown ${unknown.join(', ')}`);
  }
  return names.map((n) => (Object.hasOwn(byName, n) ? byName[n] : undefined));
}

/** The ranges of one spec, one per profile (a static shape or one range repeats). */
function rangesOf(spec: InputSpec, count: number): ShapeRange[] {
  if ('shape' in spec) return new Array<ShapeRange>(count).fill({ min: spec.shape, opt: spec.shape, max: spec.shape });
  if ('profiles' in spec) return spec.profiles;
  return new Array<ShapeRange>(count).fill({ min: spec.min, opt: spec.opt, max: spec.max });
}

/**
 * Plans the input shapes of `graph` from the settings and the model's symbol ranges.
 * Throws E_INVALID_ARGUMENT naming the input and dim for: a wrong dtype or rank, a size that
 * differs from a static dim of the model, min > max, opt outside [min, max], a range outside
 * the model's range for the symbol, one symbol given two different ranges, or a dynamic dim
 * with no finite range anywhere. An opt not given is the max, said through `log`.
 */
export function planInputShapes(graph: Graph, inputs: InputSpec[] | Record<string, unknown> | undefined, log: Logger): InputShapePlan {
  const specs = orderedSpecs(graph, inputs);
  const counts = new Set(specs.flatMap((s) => (s && 'profiles' in s ? [s.profiles.length] : [])));
  if (counts.size > 1) {
    const list = specs.flatMap((s, i) => (s && 'profiles' in s ? [`"${graph.inputs[i]!.name}" has ${s.profiles.length}`] : []));
    throw new InvalidArgumentError(`settings.inputs: every input given with profiles must give the same number of them (${list.join(', ')})`);
  }
  const count = counts.size === 1 ? [...counts][0]! : 1;

  // Per profile, per symbol: the bounds each place that names it gives.
  const constraints: Array<Map<string, Constraint>> = Array.from({ length: count }, () => new Map());
  const checks: Array<() => void> = [];
  graph.inputs.forEach((v, i) => {
    const spec = specs[i];
    const type = v.tensorType;
    const label = `input "${v.name}"`;
    if (spec === undefined) return;
    if (spec.dtype !== undefined && spec.dtype !== type.dtype) {
      throw new InvalidArgumentError(`settings.inputs: ${label} is ${type.dtype} in the model, not ${spec.dtype}`);
    }
    rangesOf(spec, count).forEach((r, p) => {
      const where = count > 1 ? ` (profile ${p})` : '';
      if (r.min.length !== type.shape.length) {
        throw new InvalidArgumentError(
          `settings.inputs: ${label} must have rank ${type.shape.length} ${formatShape(type.shape)}, got ${'shape' in spec ? 'shape' : 'a range of'} [${r.min.join(', ')}]${where}`,
        );
      }
      type.shape.forEach((d, axis) => {
        const min = r.min[axis]!;
        const max = r.max[axis]!;
        const opt = r.opt?.[axis];
        const at = `settings.inputs: ${label} dim ${axis}${where}`;
        if (min > max) throw new InvalidArgumentError(`${at}: min ${min} > max ${max}`, { details: { input: v.name, dim: axis } });
        if (opt !== undefined && (opt < min || opt > max)) {
          throw new InvalidArgumentError(`${at}: opt ${opt} is outside [${min}, ${max}]`, { details: { input: v.name, dim: axis } });
        }
        if (isStatic(d)) {
          if (min !== d || max !== d) {
            const got = min === max ? `${min}` : `[${min}, ${max}]`;
            throw new InvalidArgumentError(`${at} must be ${d}, got ${got}`, { details: { input: v.name, dim: axis } });
          }
          return;
        }
        if (d.op !== 'sym') {
          // An expression (s0*2): checked once the symbols have their bounds.
          checks.push(() => {
            const ranges = new Map([...constraints[p]!].map(([s, c]) => [s, { min: c.min, max: c.max }]));
            if (![...symbolsOf(d)].every((s) => ranges.has(s))) return;
            const b = dimBounds(d, ranges);
            if (b.min !== min || b.max !== max) {
              throw new InvalidArgumentError(`${at} is ${formatDim(d)}, which ranges over ${fmtRange(b)} here, not [${min}, ${max}]`, {
                details: { input: v.name, dim: axis },
              });
            }
          });
          return;
        }
        const model = graph.symbols.get(d.name) ?? { min: 0, max: Infinity };
        if (min < model.min || max > model.max) {
          throw new InvalidArgumentError(`${at} (symbol ${d.name}): [${min}, ${max}] is outside the model's range ${fmtRange(model)} for ${d.name}`, {
            details: { input: v.name, dim: axis, symbol: d.name },
          });
        }
        const c: Constraint = { min, max, opt: opt ?? max, explicitOpt: opt !== undefined, from: { input: v.name, dim: axis } };
        const prev = constraints[p]!.get(d.name);
        if (prev === undefined) {
          constraints[p]!.set(d.name, c);
          return;
        }
        if (prev.min !== c.min || prev.max !== c.max || (prev.explicitOpt && c.explicitOpt && prev.opt !== c.opt)) {
          const show = (x: Constraint): string => `[${x.min}, ${x.explicitOpt ? `${x.opt}, ` : ''}${x.max}]`;
          throw new InvalidArgumentError(
            `${at} is symbol ${d.name}, given ${show(c)} here but ${show(prev)} for input "${prev.from.input}" dim ${prev.from.dim}${where}`,
            { details: { input: v.name, dim: axis, symbol: d.name } },
          );
        }
        if (!prev.explicitOpt && c.explicitOpt) constraints[p]!.set(d.name, { ...c, from: prev.from });
      });
    });
  });

  // Symbols no spec bounds: the model's range, when finite.
  const used = new Set<string>();
  for (const v of graph.inputs) for (const d of v.tensorType.shape) symbolsOf(d, used);
  for (const s of used) {
    for (let p = 0; p < count; p++) {
      if (constraints[p]!.has(s)) continue;
      const model = graph.symbols.get(s) ?? { min: 0, max: Infinity };
      if (model.max === Infinity) {
        const v = graph.inputs.find((x) => x.tensorType.shape.some((d) => symbolsOf(d).has(s)))!;
        const shape = v.tensorType.shape;
        const axis = shape.findIndex((d) => symbolsOf(d).has(s));
        const example = shape.map((d) => (isStatic(d) ? d : 1));
        const max = shape.map((d) => (isStatic(d) ? d : 64));
        throw new InvalidArgumentError(
          `input "${v.name}" has dynamic dims ${formatShape(shape)} (dim ${axis} is ${formatDim(shape[axis]!)}, unbounded in the model): give its shape or range in settings.inputs, e.g. ` +
            `{ inputs: { ${JSON.stringify(v.name)}: { shape: [${example.join(', ')}] } } } or { inputs: { ${JSON.stringify(v.name)}: { min: [${example.join(', ')}], max: [${max.join(', ')}] } } }`,
          { details: { input: v.name, dim: axis, symbol: s } },
        );
      }
      constraints[p]!.set(s, { min: model.min, max: model.max, opt: model.max, explicitOpt: false, from: { input: '', dim: -1 } });
    }
  }
  checks.forEach((c) => c());

  // Opts not given are the max: say so.
  for (const s of used) {
    const defaulted = constraints.map((m, p) => ({ p, c: m.get(s)! })).filter(({ c }) => !c.explicitOpt && c.min !== c.max);
    for (const { p, c } of defaulted) {
      const where = c.from.dim >= 0 ? `input "${c.from.input}" dim ${c.from.dim} (${s})` : `symbol ${s} (range ${fmtRange(c)} from the model)`;
      log('info', `${where}: no opt given${count > 1 ? ` in profile ${p}` : ''}; optimizing for the max, ${c.max}`);
    }
  }

  const staticSymbols = new Map<string, number>();
  const profiles: Array<Map<string, SymbolProfile>> = constraints.map(() => new Map());
  const ranges = new Map<string, SymbolRange>();
  for (const s of used) {
    const all = constraints.map((m) => m.get(s)!);
    if (all.every((c) => c.min === c.max && c.min === all[0]!.min)) {
      staticSymbols.set(s, all[0]!.min);
      continue;
    }
    all.forEach((c, p) => profiles[p]!.set(s, { min: c.min, opt: c.opt, max: c.max }));
    ranges.set(s, { min: Math.min(...all.map((c) => c.min)), max: Math.max(...all.map((c) => c.max)) });
  }
  return { staticSymbols, profiles: ranges.size > 0 ? profiles : [], ranges };
}

/**
 * Min/opt/max of a tensor whose dims may be symbolic, in every profile of `plan`: symbols
 * take their profile bounds; expressions their interval bounds (opt evaluated at the opts,
 * clamped into [min, max]). Empty when every dim is static.
 */
export function profilesForShape(shape: readonly Dim[], plan: InputShapePlan): ProfileShapes[] {
  if (shape.every(isStatic)) return [];
  return plan.profiles.map((symbols) => {
    const ranges = new Map([...symbols].map(([s, b]) => [s, { min: b.min, max: b.max }]));
    const opts = new Map([...symbols].map(([s, b]) => [s, b.opt]));
    const min: number[] = [];
    const opt: number[] = [];
    const max: number[] = [];
    for (const d of shape) {
      const b = dimBounds(d, ranges);
      const lo = Math.max(0, b.min);
      const hi = Math.max(lo, b.max);
      let o: number;
      try {
        o = evaluateDim(d, opts);
      } catch {
        o = hi;
      }
      min.push(lo);
      max.push(hi);
      opt.push(Math.min(Math.max(o, lo), hi));
    }
    return { min, opt, max };
  });
}

/** Narrows the graph's symbol ranges to the plan's (the union of its profiles). */
export function applySymbolRanges(graph: Graph, plan: InputShapePlan): void {
  for (const [s, r] of plan.ranges) graph.symbols.set(s, { ...r });
}

/** The optimization profiles of an engine segment's inputs with run-time dims, by value name. */
export function segmentProfiles(segment: Segment, plan: InputShapePlan): Map<string, ProfileShapes[]> {
  const out = new Map<string, ProfileShapes[]>();
  for (const v of segment.inputs) {
    if (v.type.kind !== 'tensor') continue;
    const p = profilesForShape(v.type.shape, plan);
    if (p.length > 0) out.set(v.name, p);
  }
  return out;
}
