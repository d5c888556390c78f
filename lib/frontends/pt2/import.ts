/**
 * Serialized ExportedProgram (model/models/<name>.json) → Graph.
 *
 * - The signature decides what each placeholder is: user inputs become graph inputs (their
 *   FX names kept), parameters/buffers/tensor constants become constants loaded from the
 *   archive's weights/constants files.
 * - Sizes are ints or sympy expressions (`as_expr`) parsed into symbolic Dims; the
 *   `range_constraints` give each symbol's range (graph.symbols).
 * - Each node's target `torch.ops.aten.X.Y` becomes the IR op `aten.X.Y`, its arguments bound
 *   BY NAME (torch.export records ATen's argument names) through call(); Python-operator
 *   SymInt arithmetic (`_operator.mul`, `torch.sym_max`...) becomes `sym.*`; assertions are
 *   checked where possible and dropped; in-place ops (`relu_`, `add_`, `fill_`) become their
 *   functional form when no other alias of the mutated tensor is read afterwards; an update
 *   through slice/select views (slice assignment, `mask[a:b, c:d] = k`) is scattered back up the
 *   view chain (slice_scatter, select_scatter), so later reads of the viewed tensor see it.
 * - Every output is checked against the dtype and size PyTorch recorded for it.
 */
import { BadModelError, InternalError, TensorRTNodeError, UnsupportedOpError } from '../../errors';
import { call } from '../../ir/builder';
import { bindArgs } from '../../ir/check-args';
import { isFloating, isInteger, type DType } from '../../ir/dtype';
import { formatType, Graph, tensorType, Value, type Arg, type Node, type TensorType } from '../../ir/graph';
import { getOp, opNames } from '../../ir/ops/registry';
import type { OpSchema } from '../../ir/schema';
import { evaluateDim, formatShape, symbolsOf, SymbolicLimitError, type Dim } from '../../ir/symbolic';
import { Tensor } from '../../ir/tensor';
import type { Pt2Archive } from './archive';
import {
  deviceName,
  dtypeFromScalarType,
  isObject,
  layoutName,
  memoryFormatName,
  SCHEMA_MAJOR,
  unionKind,
  type ExportedProgramJson,
  type JsonObject,
  type NodeJson,
  type SymIntJson,
  type TensorMetaJson,
} from './serde';
import { inlineGradRegions } from './grad-regions';
import { checkProgramShape } from './program-shape';
import { parseSymExpr } from './sym-expr';
import { loadPayloadTensor, readPayloadConfig, WeightBudget, type PayloadConfig } from './weights';

export interface ImportOptions {
  /** Which program of the archive (`models/<name>.json`); default "model", or the only one. */
  modelName?: string;
  /** Most bytes the load may make up beyond those the archive holds for its weights, in all (see {@link WeightBudget}). */
  maxUnbackedWeightBytes?: number;
}

/** A value that assertion-only nodes produced (SymBool comparisons): usable only by dropped nodes. */
const DROPPED = Symbol('dropped');

/** What a name in the program stands for: a graph value, a literal (constant inputs), or dropped. */
type Entry = Value | number | boolean | string | null | typeof DROPPED;

/** Targets with no outputs that only check things at run time in PyTorch: dropped. */
const ASSERTIONS = new Set([
  'torch.ops.aten._assert_scalar.default',
  'torch.ops.aten._assert_async.default',
  'torch.ops.aten._assert_async.msg',
  'torch.ops.aten.sym_constrain_range.default',
  'torch.ops.aten.sym_constrain_range_for_size.default',
  'torch.ops.aten._assert_tensor_metadata.default',
  'torch.ops.aten._functional_assert_scalar.default',
  'torch.ops.aten._functional_sym_constrain_range.default',
  'torch.ops.aten._functional_sym_constrain_range_for_size.default',
  'torch._check',
  'torch._check_is_size',
]);

/** SymInt arithmetic written as Python operators → sym.* ops. */
const SYM_INT_OPS: Record<string, string> = {
  '_operator.add': 'sym.add',
  '_operator.sub': 'sym.sub',
  '_operator.mul': 'sym.mul',
  '_operator.floordiv': 'sym.floordiv',
  '_operator.mod': 'sym.mod',
  'torch.sym_max': 'sym.max',
  'torch.sym_min': 'sym.min',
};

/** Python comparisons and logic on SymInts/SymBools: only assertions read them. */
const SYM_BOOL_OPS = new Set([
  '_operator.eq',
  '_operator.ne',
  '_operator.lt',
  '_operator.le',
  '_operator.gt',
  '_operator.ge',
  '_operator.and_',
  '_operator.or_',
  '_operator.not_',
  'torch.sym_not',
]);

/** ATen ops whose output aliases their first input (for the in-place aliasing check). */
const VIEW_OPS = new Set([
  'view',
  '_unsafe_view',
  'reshape',
  'alias',
  'as_strided',
  'slice',
  'select',
  'narrow',
  'transpose',
  'permute',
  't',
  'unsqueeze',
  'squeeze',
  'expand',
  'expand_as',
  'flatten',
  'unflatten',
  'diagonal',
  'view_as',
  'view_as_real',
  'view_as_complex',
  'real',
  'imag',
  'detach',
  'contiguous',
  'to',
  'type_as',
  'split',
  'split_with_sizes',
  'chunk',
  'unbind',
]);

/** `torch.ops.aten.relu_.default` → ['relu_', 'default']. */
function atenParts(target: string): [string, string] | null {
  const m = /^torch\.ops\.aten\.([A-Za-z0-9_]+)\.([A-Za-z0-9_]+)$/.exec(target);
  return m ? [m[1]!, m[2]!] : null;
}

function describeArg(a: unknown): string {
  const text = JSON.stringify(a) ?? String(a);
  return text.length > 120 ? `${text.slice(0, 117)}...` : text;
}

/**
 * The IR op a pt2 target maps to: `torch.ops.aten.X.Y` → `aten.X.Y`, and an in-place
 * `aten.X_.Y` to its functional form when only that is declared.
 */
function resolveTarget(target: string): { irTarget: string; inPlace: boolean } {
  const irTarget = target.startsWith('torch.ops.') ? target.slice('torch.ops.'.length) : target;
  const parts = atenParts(target);
  if (parts && parts[0].endsWith('_') && !parts[0].startsWith('_') && getOp(irTarget) === undefined) {
    const functional = `aten.${parts[0].slice(0, -1)}.${parts[1]}`;
    if (getOp(functional) !== undefined) return { irTarget: functional, inPlace: true };
  }
  return { irTarget, inPlace: false };
}

/** Targets the importer handles itself rather than through the op table. */
function handledSpecially(target: string): boolean {
  return ASSERTIONS.has(target) || SYM_BOOL_OPS.has(target) || target === '_operator.getitem' || target in SYM_INT_OPS || target === '_operator.neg';
}

class Importer {
  readonly graph: Graph;
  private readonly values = new Map<string, Entry>();
  /** Symbol values of the example inputs (sympy hints), to compare recorded and inferred sizes. */
  private readonly hints = new Map<string, number>();
  /** Which placeholders hold state (parameter/buffer/constant), by name → what it is. */
  private readonly state = new Map<string, string>();
  /** For each name, the index of the last node that reads it (Infinity: a graph output). */
  private readonly lastRead = new Map<string, number>();
  /** For each tensor produced by a view-like op, the name it aliases. */
  private readonly aliasOf = new Map<string, string>();
  /** The index of the node that defines each view (for the in-place aliasing check). */
  private readonly viewDefinedAt = new Map<string, number>();
  /** Slice and select views by name: how each was taken, so an in-place update through it can be scattered back. */
  private readonly viewLinks = new Map<string, { target: 'aten.slice.Tensor' | 'aten.select.int'; args: Record<string, Arg> }>();
  /** Set by checkInPlace for the node being imported: the view chain its update is scattered up (self first). */
  private scatterChain: string[] = [];
  private readonly modelEntry: string;
  private readonly weights: PayloadConfig;
  private readonly constants: PayloadConfig;

  constructor(
    private readonly archive: Pt2Archive,
    private readonly program: ExportedProgramJson,
    modelName: string,
    /** Shared by every weight and constant this program loads. */
    private readonly budget: WeightBudget,
  ) {
    this.modelEntry = archive.entryName(`models/${modelName}.json`);
    this.graph = new Graph(modelName);
    this.weights = readPayloadConfig(archive, 'data/weights/', `${modelName}_weights_config.json`, 'weights config', false);
    this.constants = readPayloadConfig(archive, 'data/constants/', `${modelName}_constants_config.json`, 'constants config', false);
  }

  private get source(): string {
    return this.archive.source;
  }

  private bad(message: string): never {
    throw new BadModelError(`${this.source}: ${message}`, { details: { file: this.source, entry: this.modelEntry } });
  }

  // -------------------------------------------------------------------------------------
  // Sizes and symbols.

  private parseExpr(text: string, what: string): Dim {
    let d: Dim;
    try {
      d = parseSymExpr(text);
    } catch (cause) {
      if (cause instanceof SymbolicLimitError) {
        throw new BadModelError(`${this.source}: ${what} has a size expression beyond tensorrt-node's limits: ${cause.message}`, {
          cause,
          details: { file: this.source, ...cause.details },
        });
      }
      throw new UnsupportedOpError(`${this.source}: ${what} has the size expression "${text}", which tensorrt-node cannot read: ${(cause as Error).message}`, {
        cause,
        details: { file: this.source },
      });
    }
    for (const s of symbolsOf(d)) if (!this.graph.symbols.has(s)) this.graph.symbols.set(s, { min: 0, max: Infinity });
    return d;
  }

  private symInt(s: SymIntJson, what: string): Dim {
    if (!isObject(s as never)) this.bad(`${what} is not a SymInt`);
    if (typeof s.as_int === 'number') {
      if (!Number.isSafeInteger(s.as_int)) this.bad(`${what} is ${s.as_int}, not an integer below 2^53`);
      return s.as_int;
    }
    if (isObject(s.as_expr as never) && typeof s.as_expr!.expr_str === 'string') {
      const d = this.parseExpr(s.as_expr!.expr_str, what);
      const hint = s.as_expr!.hint;
      if (typeof d !== 'number' && d.op === 'sym' && isObject(hint as never) && typeof hint!.as_int === 'number') this.hints.set(d.name, hint!.as_int);
      return d;
    }
    return this.bad(`${what} is neither as_int nor as_expr: ${JSON.stringify(s)}`);
  }

  private tensorMeta(name: string): TensorMetaJson | undefined {
    const values = this.program.graph_module.graph.tensor_values;
    // Own keys only: a tensor named "constructor" must not find Object.prototype's.
    return Object.hasOwn(values, name) ? values[name] : undefined;
  }

  private readonly types = new Map<string, TensorType>();

  private typeOf(name: string, meta: TensorMetaJson): TensorType {
    const hit = this.types.get(name);
    if (hit !== undefined) return hit;
    if (!isObject(meta as never) || !Array.isArray(meta.sizes)) this.bad(`tensor "${name}" has no sizes in tensor_values`);
    const dtype = this.dtype(meta.dtype, `tensor "${name}"`);
    const type = tensorType(
      dtype,
      meta.sizes.map((s, i) => {
        const d = this.symInt(s, `tensor "${name}" size ${i}`);
        if (typeof d === 'number' && d < 0) this.bad(`tensor "${name}" size ${i} is ${d}, a negative size`);
        return d;
      }),
    );
    this.types.set(name, type);
    return type;
  }

  private dtype(code: unknown, what: string): DType {
    try {
      return dtypeFromScalarType(code, what);
    } catch (e) {
      if (e instanceof UnsupportedOpError) throw new UnsupportedOpError(`${this.source}: ${e.message}`, { details: { file: this.source } });
      throw e;
    }
  }

  private readSymbols(): void {
    const g = this.program.graph_module.graph;
    // Hints first (every bare-symbol expression carries its example value).
    for (const [name, meta] of Object.entries(g.tensor_values ?? {})) {
      (meta.sizes ?? []).forEach((s, i) => this.symInt(s, `tensor "${name}" size ${i}`));
    }
    for (const [name, s] of Object.entries(g.sym_int_values ?? {})) this.symInt(s, `SymInt "${name}"`);
    for (const [key, range] of Object.entries(this.program.range_constraints ?? {})) {
      let d: Dim;
      try {
        d = parseSymExpr(key);
      } catch {
        continue; // a constraint on an expression, not a symbol: the sizes carry it
      }
      if (typeof d === 'number' || d.op !== 'sym') continue;
      const bound = (v: unknown, fallback: number): number => {
        if (v === null || v === undefined) return fallback;
        let n: number | undefined;
        if (typeof v === 'number' && Number.isInteger(v)) n = v;
        else if (typeof v === 'string') {
          if (/^-(int_)?oo$/.test(v)) return -Infinity;
          if (/^(int_)?oo$/.test(v)) return Infinity;
          if (/^-?\d+$/.test(v)) n = Number(v);
        }
        if (n === undefined) return this.bad(`range_constraints["${key}"] has a bad bound ${JSON.stringify(v)}`);
        // Past 2^53 a bound is not exact: only "unbounded" is meant there.
        return Math.abs(n) >= Number.MAX_SAFE_INTEGER ? Math.sign(n) * Infinity : n;
      };
      const min = Math.max(0, bound(range?.min_val, 0));
      const max = bound(range?.max_val, Infinity);
      if (min > max) {
        this.bad(`range_constraints["${key}"] gives symbol ${d.name} the empty range [${min}, ${max}] (a size is at least 0, and min_val may not exceed max_val)`);
      }
      this.graph.symbols.set(d.name, { min, max });
    }
  }

  // -------------------------------------------------------------------------------------
  // Signature: placeholders.

  private loadState(kind: string, placeholder: string, fqn: string, payloads: PayloadConfig[]): Value {
    const payload = payloads.find((p) => p.config.has(fqn)) ?? payloads[0]!;
    const tensor: Tensor = loadPayloadTensor(this.archive, payload, fqn, kind, this.budget);
    const meta = this.tensorMeta(placeholder);
    if (meta !== undefined) {
      const t = this.typeOf(placeholder, meta);
      if (t.dtype !== tensor.dtype || t.shape.length !== tensor.rank || t.shape.some((d, i) => d !== tensor.shape[i])) {
        this.bad(
          `${kind} "${fqn}" is ${tensor.dtype}[${tensor.shape.join(', ')}] in the archive, but the program uses it as ${formatType(t)} (placeholder "${placeholder}")`,
        );
      }
    }
    const origin = kind === 'parameter' ? 'parameter' : kind === 'buffer' ? 'buffer' : 'constant';
    const v = this.graph.addConstant(placeholder, tensor, origin);
    v.producer.meta.fqn = fqn;
    this.state.set(placeholder, `${kind} "${fqn}"`);
    return v;
  }

  private readInputs(): void {
    const specs = this.program.graph_module.signature.input_specs;
    const placeholders = this.program.graph_module.graph.inputs;
    if (specs.length !== placeholders.length) {
      this.bad(`the signature lists ${specs.length} inputs but the graph has ${placeholders.length} placeholders`);
    }
    specs.forEach((spec, i) => {
      const kind = unionKind(spec);
      const body = spec[kind] as JsonObject;
      const argName = (a: unknown): string => {
        if (isObject(a) && typeof a.name === 'string') return a.name;
        if (isObject(a) && isObject(a.as_tensor) && typeof a.as_tensor.name === 'string') return a.as_tensor.name;
        return this.bad(`input spec ${i} (${kind}) has no tensor name: ${describeArg(spec)}`);
      };
      switch (kind) {
        case 'user_input': {
          const arg = body.arg as JsonObject;
          const argKind = isObject(arg) ? unionKind(arg) : '?';
          if (argKind === 'as_tensor') {
            const name = argName(arg);
            const meta = this.tensorMeta(name);
            if (meta === undefined) this.bad(`user input "${name}" has no entry in tensor_values`);
            this.values.set(name, this.graph.addInput(name, this.typeOf(name, meta!)));
          } else if (['as_int', 'as_float', 'as_bool', 'as_string', 'as_none'].includes(argKind)) {
            // A non-tensor input torch.export specialized: the graph does not read it.
            const v = arg[argKind] as Entry;
            this.values.set(`__input_${i}`, argKind === 'as_none' ? null : v);
          } else {
            throw new UnsupportedOpError(
              `${this.source}: user input ${i} is ${argKind} (${describeArg(arg)}); only tensor inputs are supported (SymInt and object inputs are not)`,
              { details: { file: this.source } },
            );
          }
          break;
        }
        case 'parameter':
          this.values.set(argName(body.arg), this.loadState('parameter', argName(body.arg), String(body.parameter_name), [this.weights]));
          break;
        case 'buffer':
          // Persistent buffers live with the weights, non-persistent ones with the constants.
          this.values.set(argName(body.arg), this.loadState('buffer', argName(body.arg), String(body.buffer_name), [this.weights, this.constants]));
          break;
        case 'tensor_constant':
          this.values.set(
            argName(body.arg),
            this.loadState('tensor constant', argName(body.arg), String(body.tensor_constant_name), [this.constants, this.weights]),
          );
          break;
        case 'constant_input': {
          const value = body.value as JsonObject;
          const vk = isObject(value) ? unionKind(value) : '?';
          this.values.set(String(body.name), vk === 'as_none' ? null : (value[vk] as Entry));
          break;
        }
        default:
          throw new UnsupportedOpError(
            `${this.source}: input ${i} is a "${kind}" input (${describeArg(spec)}); tensorrt-node imports user inputs, parameters, buffers and tensor constants only`,
            { details: { file: this.source } },
          );
      }
    });
  }

  // -------------------------------------------------------------------------------------
  // Arguments.

  private lookup(name: string, where: string): Entry {
    if (!this.values.has(name)) this.bad(`${where} reads "${name}", which is not defined before it`);
    return this.values.get(name)!;
  }

  private tensorArg(ref: unknown, where: string): Value {
    const name = isObject(ref) && typeof ref.name === 'string' ? ref.name : this.bad(`${where}: bad tensor reference ${JSON.stringify(ref)}`);
    const v = this.lookup(name, where);
    if (!(v instanceof Value) || v.type.kind !== 'tensor') this.bad(`${where} reads "${name}" as a tensor, but it is not one`);
    return v;
  }

  private symIntArg(ref: unknown, where: string): Value | number | typeof DROPPED {
    if (!isObject(ref)) return this.bad(`${where}: bad SymInt argument ${JSON.stringify(ref)}`);
    if (typeof ref.as_int === 'number') return ref.as_int;
    if (typeof ref.as_name === 'string') {
      const v = this.lookup(ref.as_name, where);
      if (v === DROPPED) return DROPPED;
      if (typeof v === 'number') return v;
      if (v instanceof Value && v.type.kind === 'symint') return v;
      return this.bad(`${where} reads "${ref.as_name}" as a SymInt, but it is not one`);
    }
    return this.bad(`${where}: bad SymInt argument ${JSON.stringify(ref)}`);
  }

  /** One serialized Argument → an IR argument (DROPPED when it reads a dropped value). */
  private convertArg(arg: JsonObject, where: string, label: string): Arg | typeof DROPPED {
    const kind = unionKind(arg);
    const v = arg[kind];
    const unsupported = (why: string): never => {
      throw new UnsupportedOpError(`${where}: argument ${label} is ${kind}: ${why}`, { details: { argument: label, kind } });
    };
    switch (kind) {
      case 'as_none':
        return null;
      case 'as_tensor':
        return this.tensorArg(v, where);
      case 'as_tensors':
        return (v as JsonObject[]).map((t) => this.tensorArg(t, where));
      case 'as_optional_tensor': {
        const o = v as JsonObject;
        return unionKind(o) === 'as_none' ? null : this.tensorArg(o.as_tensor, where);
      }
      case 'as_optional_tensors':
        return (v as JsonObject[]).map((o) => (unionKind(o) === 'as_none' ? null : this.tensorArg(o.as_tensor, where)));
      case 'as_int':
      case 'as_float':
      case 'as_bool':
      case 'as_string':
        return v as number | boolean | string;
      case 'as_ints':
      case 'as_floats':
      case 'as_bools':
      case 'as_strings':
        return v as (number | boolean | string)[];
      case 'as_scalar_type':
        try {
          return dtypeFromScalarType(v, `${where}: argument ${label}`);
        } catch (e) {
          throw new UnsupportedOpError((e as Error).message, { details: { argument: label } });
        }
      case 'as_memory_format':
        return memoryFormatName(v);
      case 'as_layout':
        return layoutName(v);
      case 'as_device':
        return deviceName(v);
      case 'as_sym_int':
        return this.symIntArg(v, where);
      case 'as_sym_ints': {
        const list = (v as JsonObject[]).map((x) => this.symIntArg(x, where));
        return list.includes(DROPPED) ? DROPPED : (list as Arg[]);
      }
      case 'as_sym_bool': {
        const o = v as JsonObject;
        if (typeof o.as_bool === 'boolean') return o.as_bool;
        return typeof o.as_name === 'string' && this.lookup(o.as_name, where) === DROPPED ? DROPPED : unsupported('symbolic booleans are not supported');
      }
      case 'as_sym_bools':
        return (v as JsonObject[]).map((o) => (typeof o.as_bool === 'boolean' ? o.as_bool : unsupported('symbolic booleans are not supported')));
      case 'as_sym_float': {
        const o = v as JsonObject;
        return typeof o.as_float === 'number' ? o.as_float : unsupported('symbolic floats are not supported');
      }
      case 'as_sym_floats':
        return (v as JsonObject[]).map((o) => (typeof o.as_float === 'number' ? o.as_float : unsupported('symbolic floats are not supported')));
      case 'as_graph':
        return unsupported('a subgraph (control flow or another higher-order op), which tensorrt-node does not import');
      case 'as_custom_obj':
        return unsupported('a custom (TorchBind) object');
      case 'as_operator':
        return unsupported('an operator passed as a value');
      case 'as_complex':
        return unsupported('a complex Python scalar; multiply by a complex tensor instead');
      default:
        return unsupported(`this argument kind is not supported (${describeArg(arg)})`);
    }
  }

  // -------------------------------------------------------------------------------------
  // Nodes.

  private nodeName(node: NodeJson, index: number): string {
    if (typeof node.name === 'string' && node.name) return node.name;
    const first = node.outputs[0];
    if (isObject(first)) {
      const k = unionKind(first);
      const body = first[k];
      if (isObject(body) && typeof body.name === 'string') return body.name;
      if (isObject(body) && typeof body.as_name === 'string') return body.as_name;
    }
    return `node_${index}`;
  }

  /** The names a node's outputs define, in IR output order (null: an output nobody reads). */
  private outputNames(node: NodeJson, where: string): (string | null)[] {
    if (node.outputs.length === 1 && isObject(node.outputs[0]) && unionKind(node.outputs[0]) === 'as_tensors') {
      return (node.outputs[0].as_tensors as JsonObject[]).map((t) => (typeof t.name === 'string' ? t.name : null));
    }
    return node.outputs.map((o, i) => {
      const k = unionKind(o);
      const body = o[k];
      if (k === 'as_none') return null;
      if (k === 'as_tensor' && isObject(body) && typeof body.name === 'string') return body.name;
      if (k === 'as_sym_int' && isObject(body) && typeof body.as_name === 'string') return body.as_name;
      if (k === 'as_sym_bool' && isObject(body) && typeof body.as_name === 'string') return body.as_name;
      if (k === 'as_optional_tensor' && isObject(body)) {
        const t = body.as_tensor;
        return isObject(t) && typeof t.name === 'string' ? t.name : null;
      }
      return this.bad(`${where}: output ${i} is ${k}, which the importer does not read (${describeArg(o)})`);
    });
  }

  private static inputRefs(arg: JsonObject, into: string[]): void {
    const visit = (x: unknown): void => {
      if (Array.isArray(x)) x.forEach(visit);
      else if (isObject(x)) {
        if (typeof x.name === 'string' && Object.keys(x).length === 1) into.push(x.name);
        if (typeof x.as_name === 'string') into.push(x.as_name);
        Object.values(x).forEach(visit);
      }
    };
    visit(arg);
  }

  /** Pre-pass: last reads (for in-place ops) and view aliasing. */
  private scan(): void {
    const g = this.program.graph_module.graph;
    g.nodes.forEach((node, index) => {
      const refs: string[] = [];
      for (const input of node.inputs ?? []) Importer.inputRefs(input.arg, refs);
      for (const r of refs) this.lastRead.set(r, index);
      const parts = atenParts(node.target);
      if (parts && VIEW_OPS.has(parts[0]) && refs.length > 0) {
        for (const out of this.outputNames(node, `pt2 node "${this.nodeName(node, index)}"`)) {
          if (out === null) continue;
          this.aliasOf.set(out, refs[0]!);
          this.viewDefinedAt.set(out, index);
        }
      }
    });
    const outs: string[] = [];
    for (const o of g.outputs) Importer.inputRefs(o, outs);
    for (const r of outs) this.lastRead.set(r, Infinity);
  }

  private importNode(node: NodeJson, index: number): void {
    if (!isObject(node as never) || typeof node.target !== 'string' || !Array.isArray(node.inputs) || !Array.isArray(node.outputs)) {
      this.bad(`graph node ${index} is malformed`);
    }
    const name = this.nodeName(node, index);
    const target = node.target;
    const where = `pt2 node "${name}" (${target.replace(/^torch\.ops\./, '')})`;
    try {
      this.importNodeInner(node, index, name, target, where);
    } catch (error) {
      // A symbolic size over the limits is only known to be this node's fault here.
      if (error instanceof TensorRTNodeError && !(error instanceof SymbolicLimitError)) throw error;
      throw new BadModelError(`${this.source}: ${where}: ${(error as Error).message}`, { cause: error });
    }
  }

  private importNodeInner(node: NodeJson, index: number, name: string, target: string, where: string): void {
    const outputs = this.outputNames(node, where);

    if (ASSERTIONS.has(target)) {
      if (target === 'torch.ops.aten._assert_tensor_metadata.default') this.checkTensorMetadata(node, where);
      for (const o of outputs) if (o !== null) this.values.set(o, DROPPED);
      return;
    }
    if (SYM_BOOL_OPS.has(target)) {
      for (const o of outputs) if (o !== null) this.values.set(o, DROPPED);
      return;
    }
    if (target === '_operator.getitem') {
      const [seq, idx] = node.inputs.map((i) => i.arg);
      const list = seq !== undefined ? this.convertArg(seq, where, 'a') : null;
      const k = idx !== undefined ? this.convertArg(idx, where, 'b') : null;
      if (!Array.isArray(list) || typeof k !== 'number' || !(list[k] instanceof Value)) this.bad(`${where}: cannot resolve getitem`);
      if (outputs[0]) this.values.set(outputs[0], (list as Value[])[k as number]!);
      return;
    }
    if (target in SYM_INT_OPS || target === '_operator.neg') {
      this.importSymOp(node, name, target, where, outputs);
      return;
    }

    let { irTarget, inPlace } = resolveTarget(target);
    const op = getOp(irTarget);
    // checkOpsKnown() has already refused every unknown target.
    if (op === undefined) throw new InternalError(`${where}: op ${target} passed the op check but has no declaration`);

    const bound = this.bindNode(node, op.schema, irTarget, where);
    if (bound === null) {
      // It reads a dropped (assertion-only) value: nothing else can use it.
      for (const o of outputs) if (o !== null) this.values.set(o, DROPPED);
      return;
    }

    irTarget = bound.target;
    const args = bound.args;
    if ((irTarget === 'aten.slice.Tensor' || irTarget === 'aten.select.int') && outputs[0]) this.viewLinks.set(outputs[0], { target: irTarget, args });
    let self: Value | undefined;
    if (inPlace) {
      // The functional op may name its first argument differently (dropout_(self) vs dropout(input)).
      const first = args[getOp(irTarget)!.schema.args[0]!.name];
      self = first instanceof Value ? first : undefined;
      if (self === undefined) this.bad(`${where}: an in-place op without a self tensor`);
      this.checkInPlace(node, index, where);
    }

    const meta: Record<string, unknown> = { pt2Node: name, pt2Target: target };
    const moduleStack = node.metadata?.nn_module_stack;
    if (typeof moduleStack === 'string' && moduleStack) meta.pt2Module = moduleStack;
    const options = { name: outputs.find((o) => o !== null) ?? name, where, meta };
    let irNode = this.call(irTarget, args, options);
    const recorded = outputs[0] !== null && outputs[0] !== undefined ? this.tensorMeta(outputs[0]) : undefined;
    // A Python float Scalar that is integer-valued (2.0) reads as an int: when that changed the
    // result dtype (int tensor * 2.0), redo it on the tensor cast to the recorded dtype.
    if (recorded !== undefined && irNode.outputs[0]?.type.kind === 'tensor' && args.self instanceof Value && args.self.type.kind === 'tensor') {
      const want = this.dtype(recorded.dtype, `tensor "${outputs[0]}"`);
      const got = irNode.outputs[0].tensorType.dtype;
      const hadFloat = node.inputs.some((i) => isObject(i.arg) && unionKind(i.arg) === 'as_float' && Number.isInteger(i.arg.as_float));
      if (got !== want && hadFloat && isFloating(want) && (isInteger(args.self.tensorType.dtype) || args.self.tensorType.dtype === 'bool')) {
        const cast = this.call('aten._to_copy.default', { self: args.self, dtype: want }, { name: `${options.name}_cast`, where });
        irNode = this.call(irTarget, { ...args, self: cast.output }, options);
      }
    }

    if (inPlace) {
      // The mutated tensor keeps its dtype (int.add_(float) is an error in PyTorch; float32.add_(float64) stays float32).
      let result = irNode.output;
      if (result.tensorType.dtype !== self!.tensorType.dtype) {
        result = this.call('aten._to_copy.default', { self: result, dtype: self!.tensorType.dtype }, { name: `${options.name}_inplace`, where }).output;
      }
      const selfName = Importer.inPlaceSelf(node) ?? this.bad(`${where}: an in-place op whose first argument is not a tensor`);
      this.values.set(selfName, result);
      this.scatterUp(result, options);
      if (outputs[0]) this.values.set(outputs[0], result);
      this.checkRecorded(outputs[0] ?? null, result, where);
      return;
    }

    if (irNode.outputs.length < outputs.filter((o) => o !== null).length) {
      this.bad(`${where}: the program names ${outputs.length} outputs, tensorrt-node's ${irTarget} gives ${irNode.outputs.length}`);
    }
    outputs.forEach((o, i) => {
      if (o === null) return;
      const v = irNode.outputs[i]!;
      if (v.name !== o && i > 0) v.name = this.graph.uniqueName(o);
      this.values.set(o, v);
      this.checkRecorded(o, v, where);
    });
  }

  private call(target: string, args: Record<string, Arg>, options: { name: string; where: string; meta?: Record<string, unknown> }): Node {
    try {
      return call(this.graph, target, args, options);
    } catch (error) {
      if (error instanceof BadModelError && !(error instanceof SymbolicLimitError)) throw new BadModelError(`${this.source}: ${error.message}`, { cause: error, details: error.details });
      throw error;
    }
  }

  /**
   * A Python number given where the schema wants a Tensor (`add.Tensor(x, 1e-05)`: PyTorch wraps
   * it): the overload taking a Scalar there (`add.Scalar`) when one is declared, else a 0-d
   * constant tensor (bool, int64 or float32).
   */
  private scalarOverload(schema: OpSchema, named: Record<string, Arg>): { target: string; schema: OpSchema; args: Record<string, Arg> } {
    const isNumber = (a: Arg | undefined): a is number | boolean => typeof a === 'number' || typeof a === 'boolean';
    const wrapped = schema.args.filter((a) => a.type.base === 'Tensor' && !a.type.list && isNumber(named[a.name]));
    if (wrapped.length === 0) return { target: schema.name, schema, args: named };
    const base = schema.name.slice(0, schema.name.lastIndexOf('.') + 1);
    for (const candidate of opNames()) {
      if (!candidate.startsWith(base) || candidate === schema.name) continue;
      const other = getOp(candidate)!.schema;
      const fits = Object.entries(named).every(([k, v]) => {
        const spec = other.args.find((a) => a.name === k);
        if (spec === undefined) return false;
        if (isNumber(v)) return spec.type.base === 'Scalar' || spec.type.base === 'int' || spec.type.base === 'float' || spec.type.base === 'bool';
        if (v instanceof Value && v.type.kind === 'tensor') return spec.type.base === 'Tensor';
        return spec.type.base !== 'Tensor';
      });
      if (fits && bindArgs(other, named).problems.length === 0) return { target: candidate, schema: other, args: named };
    }
    const args = { ...named };
    for (const spec of wrapped) {
      const v = named[spec.name] as number | boolean;
      const dtype = typeof v === 'boolean' ? 'bool' : Number.isInteger(v) ? 'int64' : 'float32';
      args[spec.name] = this.graph.addConstant(`${spec.name}_scalar`, Tensor.scalar(dtype, typeof v === 'boolean' ? Number(v) : v));
    }
    return { target: schema.name, schema, args };
  }

  /** Binds a node's named arguments to the op's schema; null when one reads a dropped value. */
  private bindNode(node: NodeJson, opSchema: OpSchema, irTarget: string, where: string): { target: string; args: Record<string, Arg> } | null {
    let schema = opSchema;
    const named: Record<string, Arg> = {};
    let dropped = false;
    node.inputs.forEach((input, i) => {
      if (!isObject(input as never) || !isObject(input.arg)) this.bad(`${where}: argument ${i} is malformed`);
      const label = typeof input.name === 'string' ? input.name : String(i);
      let spec = schema.args.find((a) => a.name === input.name);
      // Positional arguments under another name (an older or newer ATen schema): bind by position.
      if (spec === undefined && input.kind !== 2) {
        const positional = schema.args[i];
        if (positional !== undefined && !positional.kwargOnly && !(positional.name in named)) spec = positional;
      }
      const value = this.convertArg(input.arg, where, label);
      if (value === DROPPED) {
        dropped = true;
        return;
      }
      if (spec === undefined) {
        // An argument our schema lacks: harmless when it is null (e.g. a defaulted Generator).
        if (value === null) return;
        throw new UnsupportedOpError(`${this.source}: ${where}: argument "${label}" is not part of tensorrt-node's schema ${schema.signature}`, {
          details: { file: this.source, op: irTarget, argument: label },
        });
      }
      named[spec.name] = value;
    });
    if (dropped) return null;
    const chosen = this.scalarOverload(schema, named);
    schema = chosen.schema;
    const bound = bindArgs(schema, chosen.args);
    if (bound.problems.length > 0) {
      this.bad(`${where}: its arguments do not fit ${schema.signature}: ${bound.problems.join('; ')}`);
    }
    // A factory op given only float Scalars (torch.full(..., 1.0)) makes the default float dtype.
    const dtypeSpec = schema.args.find((a) => a.name === 'dtype' && a.type.base === 'ScalarType');
    if (dtypeSpec !== undefined && bound.args.dtype === null) {
      const floatScalar = node.inputs.some((input) => {
        const spec = schema.args.find((a) => a.name === input.name);
        return spec?.type.base === 'Scalar' && isObject(input.arg) && unionKind(input.arg) === 'as_float';
      });
      if (floatScalar) bound.args.dtype = 'float32';
    }
    return { target: chosen.target, args: bound.args };
  }

  private importSymOp(node: NodeJson, name: string, target: string, where: string, outputs: (string | null)[]): void {
    const outKinds = node.outputs.map((o) => unionKind(o));
    if (outKinds.some((k) => k !== 'as_sym_int')) {
      throw new UnsupportedOpError(`${this.source}: ${where}: ${target} on ${outKinds.join(', ')} values is not supported (only SymInt arithmetic is)`, {
        details: { file: this.source, node: name, op: target },
      });
    }
    const operands = node.inputs.map((i, k) => this.convertArg(i.arg, where, i.name ?? String(k)));
    if (operands.includes(DROPPED)) {
      for (const o of outputs) if (o !== null) this.values.set(o, DROPPED);
      return;
    }
    const args: Record<string, Arg> =
      target === '_operator.neg' ? { a: 0, b: operands[0] as Arg } : { a: operands[0] as Arg, b: operands[1] as Arg };
    const irTarget = target === '_operator.neg' ? 'sym.sub' : SYM_INT_OPS[target]!;
    const v = this.call(irTarget, args, { name: outputs[0] ?? name, where, meta: { pt2Node: name, pt2Target: target } }).output;
    if (outputs[0]) this.values.set(outputs[0], v);
    const symInts = this.program.graph_module.graph.sym_int_values;
    const recorded = outputs[0] && symInts && Object.hasOwn(symInts, outputs[0]) ? symInts[outputs[0]] : undefined;
    if (recorded !== undefined && v.type.kind === 'symint') {
      const r = this.symInt(recorded, `SymInt "${outputs[0]}"`);
      if (!this.sameDim(v.type.expr, r)) this.bad(`${where}: PyTorch recorded ${outputs[0]} = ${formatShape([r])}, tensorrt-node computes ${formatShape([v.type.expr])}`);
    }
  }

  /** `_assert_tensor_metadata(a, dtype=...)`: checked now (our types are static), then dropped. */
  private checkTensorMetadata(node: NodeJson, where: string): void {
    const a = node.inputs.find((i) => i.name === 'a') ?? node.inputs[0];
    if (a === undefined || !isObject(a.arg) || unionKind(a.arg) !== 'as_tensor') return;
    const v = this.tensorArg(a.arg.as_tensor, where);
    const dt = node.inputs.find((i) => i.name === 'dtype');
    if (dt !== undefined && isObject(dt.arg) && unionKind(dt.arg) === 'as_scalar_type') {
      const want = this.dtype(dt.arg.as_scalar_type, `${where}: dtype`);
      if (want !== v.tensorType.dtype) this.bad(`${where}: the program asserts %${v.name} is ${want}, but it is ${v.tensorType.dtype}`);
    }
  }

  /** The name of the tensor an in-place node mutates (its `self`, or its first argument), if it names one. */
  private static inPlaceSelf(node: NodeJson): string | undefined {
    const selfInput = node.inputs.find((i) => i.name === 'self') ?? node.inputs[0];
    const selfRef = selfInput && isObject(selfInput.arg) ? selfInput.arg.as_tensor : undefined;
    return isObject(selfRef) && typeof selfRef.name === 'string' ? selfRef.name : undefined;
  }

  /** An in-place op rewritten functionally must not leave a stale alias or mutate state. */
  private checkInPlace(node: NodeJson, index: number, where: string): void {
    const selfName = Importer.inPlaceSelf(node);
    if (selfName === undefined) return;
    const chain: string[] = [selfName];
    for (let n = this.aliasOf.get(selfName); n !== undefined && !chain.includes(n); n = this.aliasOf.get(n)) chain.push(n);
    for (const n of chain) {
      const state = this.state.get(n);
      if (state !== undefined) {
        throw new UnsupportedOpError(
          `${this.source}: ${where} mutates ${state} in place; programs that update their state are not supported (export in eval mode, without in-place updates of parameters or buffers)`,
          { details: { file: this.source, op: node.target } },
        );
      }
    }
    // An update through slice/select views is scattered back up the chain (slice_scatter,
    // select_scatter), so later reads of the viewed tensors see it, as in PyTorch; above the
    // first other kind of view nothing may be read afterwards, nor may any other view of the
    // chain taken before this node (it would keep the old values).
    let top = 0;
    while (top + 1 < chain.length && this.viewLinks.has(chain[top]!) && this.aliasOf.get(chain[top]!) === chain[top + 1]) top++;
    const refuse = (n: string, why: string): never => {
      throw new UnsupportedOpError(`${this.source}: ${where} mutates "${selfName}", a view of "${n}", which ${why}; in-place updates through views are not supported`, {
        details: { file: this.source, op: node.target },
      });
    };
    for (const n of chain.slice(top + 1)) if ((this.lastRead.get(n) ?? -1) > index) refuse(n, 'is read afterwards');
    const scattered = new Set(chain.slice(0, top + 1));
    for (const [view] of this.aliasOf) {
      if (scattered.has(view) || (this.viewDefinedAt.get(view) ?? Infinity) >= index || (this.lastRead.get(view) ?? -1) <= index) continue;
      for (let n = this.aliasOf.get(view); n !== undefined; n = this.aliasOf.get(n)) {
        if (scattered.has(n)) refuse(n, `has another view "${view}" that is read afterwards`);
      }
    }
    this.scatterChain = chain.slice(0, top + 1);
  }

  /** After an in-place update of `scatterChain[0]` to `value`: each viewed tensor up the chain gets the update scattered in. */
  private scatterUp(value: Value, options: { name: string; where: string; meta?: Record<string, unknown> }): void {
    const chain = this.scatterChain;
    this.scatterChain = [];
    let child = value;
    for (let i = 0; i + 1 < chain.length; i++) {
      const link = this.viewLinks.get(chain[i]!)!;
      const parent = this.values.get(chain[i + 1]!);
      if (!(parent instanceof Value)) throw new InternalError(`${options.where}: the viewed tensor "${chain[i + 1]}" has no value`);
      const a = link.args;
      const scatter =
        link.target === 'aten.slice.Tensor'
          ? this.call('aten.slice_scatter.default', { self: parent, src: child, dim: a.dim ?? 0, start: a.start ?? null, end: a.end ?? null, step: a.step ?? 1 }, { ...options, name: `${options.name}_scatter` })
          : this.call('aten.select_scatter.default', { self: parent, src: child, dim: a.dim!, index: a.index! }, { ...options, name: `${options.name}_scatter` });
      child = scatter.output;
      this.values.set(chain[i + 1]!, child);
    }
  }

  private sameDim(ours: Dim, theirs: Dim): boolean {
    if (typeof ours === 'number' && typeof theirs === 'number') return ours === theirs;
    try {
      return evaluateDim(ours, this.hints) === evaluateDim(theirs, this.hints);
    } catch {
      return true; // no example value for a symbol: nothing to compare with
    }
  }

  /** The inferred type of `v` must match what PyTorch recorded for `name`. */
  private checkRecorded(name: string | null, v: Value, where: string): void {
    if (name === null || v.type.kind !== 'tensor') return;
    const meta = this.tensorMeta(name);
    if (meta === undefined) return;
    const recorded = this.typeOf(name, meta);
    const ours = v.type;
    if (recorded.dtype !== ours.dtype || recorded.shape.length !== ours.shape.length || recorded.shape.some((d, i) => !this.sameDim(ours.shape[i]!, d))) {
      this.bad(`${where}: PyTorch recorded "${name}" as ${formatType(recorded)}, but tensorrt-node infers ${formatType(ours)}`);
    }
  }

  // -------------------------------------------------------------------------------------
  // Outputs.

  private readOutputs(): void {
    const values: Value[] = [];
    const names: string[] = [];
    this.program.graph_module.signature.output_specs.forEach((spec, i) => {
      const kind = unionKind(spec);
      const body = spec[kind] as JsonObject;
      if (kind !== 'user_output') {
        const what: Record<string, string> = {
          buffer_mutation: `updates buffer "${String(body?.buffer_name)}"`,
          parameter_mutation: `updates parameter "${String(body?.parameter_name)}"`,
          user_input_mutation: `updates its input "${String(body?.user_input_name)}" in place`,
          loss_output: 'returns a training loss',
          gradient_to_parameter: 'returns gradients',
          gradient_to_user_input: 'returns gradients',
          token: 'threads side-effect tokens',
        };
        throw new UnsupportedOpError(
          `${this.source}: the program ${what[kind] ?? `has a "${kind}" output`} (output ${i}); only programs whose outputs are all user outputs are supported ` +
            '(export the model in eval mode, without in-place updates of buffers or inputs)',
          { details: { file: this.source, output: i, kind } },
        );
      }
      const arg = body.arg as JsonObject;
      const ak = isObject(arg) ? unionKind(arg) : '?';
      let v: Entry;
      let name: string;
      if (ak === 'as_tensor') {
        name = String((arg.as_tensor as JsonObject).name);
        v = this.lookup(name, `output ${i}`);
      } else if (ak === 'as_sym_int' && isObject(arg.as_sym_int) && typeof arg.as_sym_int.as_name === 'string') {
        name = arg.as_sym_int.as_name;
        v = this.lookup(name, `output ${i}`);
      } else {
        throw new UnsupportedOpError(`${this.source}: output ${i} is ${ak} (${describeArg(arg ?? {})}); only tensor and SymInt outputs are supported`, {
          details: { file: this.source, output: i },
        });
      }
      if (!(v instanceof Value)) this.bad(`output ${i} ("${name}") is not a computed value`);
      values.push(v);
      names.push(name);
    });
    this.graph.setOutputs(values, names);
  }

  /** Every op the graph uses that tensorrt-node lacks, in one error with counts and node names. */
  private checkOpsKnown(): void {
    const missing = new Map<string, string[]>();
    this.program.graph_module.graph.nodes.forEach((node, index) => {
      if (typeof node?.target !== 'string' || handledSpecially(node.target)) return;
      if (getOp(resolveTarget(node.target).irTarget) !== undefined) return;
      const nodes = missing.get(node.target) ?? [];
      nodes.push(this.nodeName(node, index));
      missing.set(node.target, nodes);
    });
    if (missing.size === 0) return;
    const lines = [...missing].map(([target, nodes]) => {
      const shown = nodes.slice(0, 3).map((n) => `"${n}"`).join(', ');
      const hint = target.includes('higher_order') ? ': a higher-order op with a subgraph; control flow is not supported' : '';
      return `  - ${target} × ${nodes.length} (${shown}${nodes.length > 3 ? ', …' : ''})${hint}`;
    });
    throw new UnsupportedOpError(`${this.source}: ${missing.size} op(s) are not supported by tensorrt-node:\n${lines.join('\n')}`, {
      details: { file: this.source, ops: Object.fromEntries([...missing].map(([t, n]) => [t, n.length])) },
    });
  }

  run(): Graph {
    const g = this.program.graph_module.graph;
    inlineGradRegions(g, this.source);
    this.checkOpsKnown();
    this.readSymbols();
    this.scan();
    this.readInputs();
    g.nodes.forEach((node, i) => this.importNode(node, i));
    this.readOutputs();
    this.graph.eliminateDeadCode();
    return this.graph;
  }
}

/** The programs (`models/<name>.json`) an archive holds. */
export function modelNames(archive: Pt2Archive): string[] {
  return archive
    .list()
    .filter((p) => /^models\/[^/]+\.json$/.test(p))
    .map((p) => p.slice('models/'.length, -'.json'.length));
}

/** Reads and checks the ExportedProgram JSON of `modelName`. */
export function readProgram(archive: Pt2Archive, modelName: string): ExportedProgramJson {
  const relative = `models/${modelName}.json`;
  const entry = archive.entryName(relative);
  const json = archive.json(relative, 'the serialized ExportedProgram');
  const fail = (message: string): never => {
    throw new BadModelError(`${archive.source}: entry "${entry}": ${message}`, { details: { file: archive.source, entry } });
  };
  if (!isObject(json)) return fail('is not a JSON object');
  const version = json.schema_version;
  if (!isObject(version) || typeof version.major !== 'number') {
    return fail('has no schema_version; it is not a torch.export program (or one older than PyTorch 2.3)');
  }
  if (version.major !== SCHEMA_MAJOR) {
    fail(
      `has ExportedProgram schema version ${version.major}.${String(version.minor)}; tensorrt-node reads schema version ${SCHEMA_MAJOR}.x ` +
        '(PyTorch 2.6 and later). Export the model again with a supported PyTorch',
    );
  }
  checkProgramShape(json, archive.source, entry);
  return json as unknown as ExportedProgramJson;
}

/** Imports the program `modelName` of an opened archive. */
export function importProgram(archive: Pt2Archive, options: ImportOptions = {}): Graph {
  const budget = new WeightBudget(options.maxUnbackedWeightBytes);
  archive.checkFormat();
  const names = modelNames(archive);
  let modelName = options.modelName;
  if (modelName === undefined) {
    if (names.includes('model')) modelName = 'model';
    else if (names.length === 1) modelName = names[0]!;
    else if (names.length === 0) {
      throw new BadModelError(`${archive.source}: the archive has no program (no entry "${archive.entryName('models/model.json')}")`, {
        details: { file: archive.source, entry: archive.entryName('models/model.json') },
      });
    } else {
      throw new BadModelError(`${archive.source}: the archive holds several programs (${names.join(', ')}); choose one with the modelName option`, {
        details: { file: archive.source, models: names },
      });
    }
  }
  const program = readProgram(archive, modelName);
  return new Importer(archive, program, modelName, budget).run();
}
