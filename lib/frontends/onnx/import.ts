/**
 * ModelProto → Graph. Inputs keep their ONNX names and `dim_param` symbols; initializers
 * become constants; each node goes through its folder (shape arithmetic at import time) or
 * its mapper (IR nodes); graph outputs are the ONNX outputs, materialized.
 */
import type { onnx } from 'onnx-proto';

import { BadModelError, InvalidArgumentError, TensorRTNodeError, UnsupportedOpError } from '../../errors';
import type { DType } from '../../ir/dtype';
import { call } from '../../ir/builder';
import { dimsOfType, formatType, Graph, optionalType, sequenceType, stringTensorType, tensorType, Value, type TensorType, type ValueType } from '../../ir/graph';
import { dataDependentSymbol } from '../../ir/ops/data-dependent';
import { SymMaterializer } from '../../ir/sym-values';
import { isStatic, sym, symbolsOf, SymbolicLimitError, type Dim } from '../../ir/symbolic';
import { Tensor } from '../../ir/tensor';
import { decodeAttribute, KNOWN_LIMIT, OnnxContext, shapeOfKnown, type AttrValue, type Known, type OnnxNodeView, type OnnxResult, type ValueResolver } from './context';
import { deferNode, needsKnownInput } from './deferred';
import { STABLE_BEFORE_7, upgradeLegacyForm, type LegacyResolver } from './legacy-forms';
import { toNumber, type LongLike } from './long';
import { onnxFolder, onnxMapper, onnxTakesAnyValues } from './registry';
import { tensorFromProto, type TensorProtoOptions } from './tensor-proto';
import { elementFromOnnx, ONNX_STRING, stringTensorFromProto } from './value-proto';

/** Opsets of the default domain this importer maps (their input-form differences included). */
export const MIN_OPSET = 7;
export const MAX_OPSET = 28;

export interface ImportOptions extends TensorProtoOptions {
  /** How to name the model in errors (its path, or "buffer"). */
  source: string;
  /** Inputs fixed at import (LoadOnnxOptions.constantInputs). */
  constantInputs?: Readonly<Record<string, Tensor>>;
}

function sanitizeSymbol(name: string): string {
  const s = name.replace(/[^A-Za-z0-9_]/g, '_');
  return /^[A-Za-z_]/.test(s) ? s : `d_${s}`;
}

/** The ai.onnx.preview domain (FlexAttention) and the one version of it this importer maps. */
const PREVIEW_DOMAIN = 'ai.onnx.preview';
const PREVIEW_VERSION = 1;
/** ONNX's traditional-ML domain: its LabelEncoder is mapped (lib/frontends/onnx/ops/label-encoder.ts). */
const ML_DOMAIN = 'ai.onnx.ml';

/** Whether every node of `graph`, its subgraphs' included, passes `test`. */
function everyNode(graph: onnx.IGraphProto, test: (node: onnx.INodeProto) => boolean): boolean {
  return (graph.node ?? []).every((n) => test(n) && (n.attribute ?? []).every((a) => (a.g ? everyNode(a.g, test) : true) && (a.graphs ?? []).every((g) => everyNode(g, test))));
}

/**
 * A model that uses ai.onnx.preview ops must import that domain at the version mapped here:
 * preview ops keep no versions, so another one may mean something else.
 */
function checkPreviewDomain(model: onnx.ModelProto, source: string): void {
  if (everyNode(model.graph!, (n) => n.domain !== PREVIEW_DOMAIN)) return;
  const entry = model.opsetImport.find((o) => o.domain === PREVIEW_DOMAIN);
  const version = entry === undefined ? null : toNumber(entry.version as number | LongLike);
  if (version !== PREVIEW_VERSION) {
    throw new UnsupportedOpError(`${source} uses ${PREVIEW_DOMAIN} ops ${version === null ? 'without importing the domain' : `of version ${version}`}; tensorrt-node maps version ${PREVIEW_VERSION}`, {
      details: { domain: PREVIEW_DOMAIN, opset: version ?? 0 },
    });
  }
}

function defaultOpset(model: onnx.ModelProto, source: string): number {
  const entry = model.opsetImport.find((o) => !o.domain || o.domain === 'ai.onnx');
  if (entry === undefined) {
    // A model of preview or ML ops only (a FlexAttention without modifier subgraphs, a
    // LabelEncoder) needs no default domain; the opset its mappers are told is then the newest,
    // which no node of it reads.
    if ((model.graph!.node ?? []).length > 0 && everyNode(model.graph!, (n) => n.domain === PREVIEW_DOMAIN || n.domain === ML_DOMAIN)) return MAX_OPSET;
    throw new BadModelError(`${source}: the model does not import the default ONNX domain`);
  }
  const version = toNumber(entry.version as number | LongLike);
  const stableOnly = version >= 1 && version < MIN_OPSET && (model.graph!.node ?? []).every((n) => (n.domain ?? '') !== '' || STABLE_BEFORE_7.has(n.opType ?? ''));
  if ((version < MIN_OPSET && !stableOnly) || version > MAX_OPSET) {
    throw new UnsupportedOpError(
      `${source} uses ONNX opset ${version}; tensorrt-node imports opsets ${MIN_OPSET} to ${MAX_OPSET} ` +
        `(and older ones when every op is one whose meaning has not changed since: ${[...STABLE_BEFORE_7].join(', ')}). ` +
        'Re-export the model with a supported opset (torch.onnx.export(..., opset_version=17)) or convert it with onnx.version_converter.',
      { details: { opset: version } },
    );
  }
  return version;
}


/**
 * A known list's values as a tensor would hold them. Known lists are float64: an int64 value
 * past 2^53 in one was rounded when it was read. ±INT64_MAX, the "to the end" bound exporters
 * write into slice arguments, rounds to ±2^63 and is brought back exactly; any other value past
 * 2^53 cannot be, so the list is refused rather than stored changed.
 */
function exactValues(value: Known, hint: string): Array<number | bigint> {
  if (value.dtype !== 'int64') return value.dims as number[];
  return (value.dims as number[]).map((d) => {
    if (Number.isSafeInteger(d)) return d;
    if (d >= 2 ** 63) return 2n ** 63n - 1n;
    if (d <= -(2 ** 63)) return -(2n ** 63n);
    throw new UnsupportedOpError(`shape value "${hint}" holds ${d}, an int64 past 2^53 that import-time shape arithmetic cannot carry exactly`, { details: { value: hint } });
  });
}

/**
 * Null when a value of type `actual` is one the model declares as `declared` (element types
 * and kinds; sizes are checked where the values flow); else what the declaration says.
 */
function declaredMismatch(declared: onnx.ITypeProto | null | undefined, actual: ValueType, what: string): string | null {
  if (!declared) return null;
  const say = (d: string): string => `${what} is declared ${d} but is ${formatType(actual)}`;
  if (declared.tensorType) {
    const code = declared.tensorType.elemType;
    if (!code) return null;
    const elem = elementFromOnnx(code, what);
    if (elem === 'string') return actual.kind === 'strings' ? null : say('a string tensor');
    return actual.kind === 'tensor' && actual.dtype === elem ? null : say(elem);
  }
  if (declared.sequenceType) {
    if (actual.kind !== 'sequence') return say('a sequence');
    const code = declared.sequenceType.elemType?.tensorType?.elemType;
    return !code || elementFromOnnx(code, what) === actual.elem ? null : say(`a sequence of ${elementFromOnnx(code, what)}`);
  }
  if (declared.optionalType) return actual.kind === 'optional' ? null : say('an optional');
  return null;
}

/**
 * How a subgraph (If's branches, Loop's and Scan's body) relates to the graph around it:
 * `captured` makes it a graph of its own, whose outer reads become trailing inputs; `inline`
 * imports it into the outer graph itself (the branch of an If whose condition is known).
 */
interface Scope {
  readonly parent: Importer;
  readonly mode: 'captured' | 'inline';
}

class Importer implements ValueResolver {
  readonly graph: Graph;
  readonly sym: SymMaterializer;
  private readonly values = new Map<string, OnnxResult>();
  private readonly materialized = new Map<OnnxResult, Value>();
  private unknownDims = 0;
  /** The outer values a captured subgraph reads, in the order of its trailing inputs. */
  readonly captured: Value[] = [];

  constructor(
    private readonly proto: onnx.IGraphProto,
    private readonly options: ImportOptions,
    private readonly scope?: Scope,
    name?: string,
  ) {
    if (scope?.mode === 'inline') {
      this.graph = scope.parent.graph;
      this.sym = scope.parent.sym;
    } else {
      this.graph = new Graph(name ?? (proto.name || 'onnx_graph'));
      this.sym = new SymMaterializer(this.graph);
    }
  }

  /** Whether `name` is defined here or in an enclosing graph. */
  knows(name: string): boolean {
    return this.values.has(name) || (this.scope?.parent.knows(name) ?? false);
  }

  /** An outer value read by a captured subgraph: constants are copied in, known lists with static elements kept, other values become inputs. */
  private capture(name: string): OnnxResult {
    const parent = this.scope!.parent;
    const outer = parent.lookup(name);
    let local: OnnxResult;
    if (!(outer instanceof Value) && outer.dims.every(isStatic)) local = outer;
    else {
      const v = parent.materialize(outer, name);
      if (v.producer.kind === 'constant') local = this.graph.addConstant(name, v.producer.tensor!, v.producer.origin);
      else {
        this.declareSymbols(dimsOfType(v.type));
        local = this.graph.addInput(name, v.type);
        this.sym.addSources(local);
        this.captured.push(v);
      }
    }
    this.values.set(name, local);
    return local;
  }

  /** Declares the symbols `shape` uses in this graph, with the enclosing graph's ranges where it has them. */
  private declareSymbols(shape: readonly Dim[]): void {
    for (const d of shape) {
      for (const s of symbolsOf(d)) {
        if (!this.graph.symbols.has(s)) this.graph.symbols.set(s, { ...(this.scope?.parent.graph.symbols.get(s) ?? { min: 0, max: Infinity }) });
      }
    }
  }

  /** A captured subgraph of `proto` whose inputs have `inputs`' types (ValueResolver.importSubgraph). */
  importSubgraph(proto: onnx.IGraphProto, inputs: readonly ValueType[], name: string, opset: number): { graph: Graph; captured: Value[] } {
    const child = new Importer(proto, this.options, { parent: this, mode: 'captured' }, this.graph.uniqueName(name));
    const graph = child.runSubgraph(inputs, opset);
    return { graph, captured: child.captured };
  }

  /** The outputs of `proto` imported into this graph, its inputs bound to `inputs` where given (ValueResolver.inlineSubgraph). */
  inlineSubgraph(proto: onnx.IGraphProto, opset: number, inputs?: readonly Value[]): OnnxResult[] {
    const child = new Importer(proto, this.options, { parent: this, mode: 'inline' });
    if (inputs !== undefined) child.bindInputs(inputs);
    child.addInitializers();
    (proto.node ?? []).forEach((node, i) => child.importNode(node, i, opset));
    return (proto.output ?? []).map((o) => child.lookup(o.name ?? ''));
  }

  /** Binds an inlined subgraph's declared inputs to outer values, checking the element types it declares. */
  private bindInputs(inputs: readonly Value[]): void {
    const where = `${this.options.source}: subgraph "${this.proto.name ?? ''}"`;
    const declared = this.proto.input ?? [];
    if (declared.length !== inputs.length) throw new BadModelError(`${where} declares ${declared.length} inputs, its node gives it ${inputs.length}`);
    declared.forEach((input, i) => {
      const name = input.name ?? '';
      const v = inputs[i]!;
      const wrong = declaredMismatch(input.type, v.type, `${where} input "${name}"`);
      if (wrong !== null) throw new BadModelError(wrong, { details: { input: name } });
      if (this.values.has(name)) throw new BadModelError(`${where} input "${name}" is declared twice`, { details: { input: name } });
      this.values.set(name, v);
    });
  }

  private runSubgraph(inputs: readonly ValueType[], opset: number): Graph {
    const where = `${this.options.source}: subgraph "${this.graph.name}"`;
    const declared = this.proto.input ?? [];
    if (declared.length !== inputs.length) throw new BadModelError(`${where} declares ${declared.length} inputs, its node gives it ${inputs.length}`);
    this.addInitializers();
    declared.forEach((input, i) => {
      const name = input.name ?? '';
      const t = inputs[i]!;
      const wrong = declaredMismatch(input.type, t, `${where} input "${name}"`);
      if (wrong !== null) throw new BadModelError(wrong, { details: { input: name } });
      if (this.values.has(name)) throw new BadModelError(`${where} input "${name}" is declared twice`, { details: { input: name } });
      this.declareSymbols(dimsOfType(t));
      const v = this.graph.addInput(name, t);
      this.sym.addSources(v);
      this.values.set(name, v);
    });
    (this.proto.node ?? []).forEach((node, i) => this.importNode(node, i, opset));
    const outputs = (this.proto.output ?? []).map((out) => {
      const name = out.name ?? '';
      const v = this.materialize(this.lookup(name), name);
      const wrong = declaredMismatch(out.type, v.type, `${where} output "${name}"`);
      if (wrong !== null) throw new BadModelError(wrong, { details: { output: name } });
      return v;
    });
    this.graph.setOutputs(outputs, (this.proto.output ?? []).map((o) => o.name ?? ''));
    // Outer reads became inputs as they were met; inputs first keeps the graph in its usual form.
    const placeholders = this.graph.nodes.filter((n) => n.kind === 'placeholder');
    const rest = this.graph.nodes.filter((n) => n.kind !== 'placeholder');
    this.graph.nodes.splice(0, this.graph.nodes.length, ...placeholders, ...rest);
    this.graph.eliminateDeadCode();
    return this.graph;
  }

  /** Constants that older node forms gave as attributes (./legacy-forms.ts). */
  private readonly legacy: LegacyResolver = {
    constant: (hint, tensor) => {
      let name = hint;
      for (let i = 1; this.values.has(name); i++) name = `${hint}_${i}`;
      this.values.set(name, this.graph.addConstant(this.graph.uniqueName(hint), tensor));
      return name;
    },
    dtypeOf: (name) => {
      const v = this.lookup(name);
      return v instanceof Value ? v.tensorType.dtype : v.dtype;
    },
  };

  lookup(name: string): OnnxResult {
    const v = this.values.get(name);
    if (v !== undefined) return v;
    if (this.scope !== undefined && this.scope.parent.knows(name)) {
      return this.scope.mode === 'inline' ? this.scope.parent.lookup(name) : this.capture(name);
    }
    throw new BadModelError(`${this.options.source}: value "${name}" is used before it is defined`);
  }

  materialize(value: OnnxResult, hint: string): Value {
    if (value instanceof Value) return value;
    if (this.scope?.mode === 'inline') return this.scope.parent.materialize(value, hint);
    const hit = this.materialized.get(value);
    if (hit !== undefined) return hit;
    let v: Value;
    if (value.dims.every(isStatic)) {
      v = this.graph.addConstant(hint, Tensor.from(value.dtype, shapeOfKnown(value), exactValues(value, hint)));
    } else {
      const name = value.shape === undefined ? hint : `${hint}_flat`;
      v = call(this.graph, 'trt.sym_tensor', { values: value.dims.map((d) => this.sym.arg(d)), scalar: value.scalar, dtype: value.dtype }, { name }).output;
      if (value.shape !== undefined) v = call(this.graph, 'aten.reshape.default', { self: v, shape: [...value.shape] }, { name: hint }).output;
    }
    this.materialized.set(value, v);
    return v;
  }

  private dimOf(d: onnx.TensorShapeProto.IDimension, inputName: string, axis: number): Dim {
    if (d.dimParam) {
      const name = sanitizeSymbol(d.dimParam);
      if (!this.graph.symbols.has(name)) this.graph.symbols.set(name, { min: 0, max: Infinity });
      return sym(name);
    }
    if (d.dimValue !== null && d.dimValue !== undefined && (typeof d.dimValue === 'number' || 'low' in (d.dimValue as object))) {
      const n = toNumber(d.dimValue as number | LongLike);
      if (!Number.isSafeInteger(n) || n < 0) {
        throw new BadModelError(`${this.options.source}: input "${inputName}" dim ${axis} is ${n}, not a non-negative integer below 2^53`, {
          details: { input: inputName, axis },
        });
      }
      return n;
    }
    // Neither value nor name: a dim only known at run time.
    const name = `unk${this.unknownDims++}`;
    this.graph.symbols.set(name, { min: 0, max: Infinity });
    return sym(name);
  }

  private addInputs(initializerNames: Set<string>): void {
    const declared = new Set((this.proto.input ?? []).map((i) => i.name ?? ''));
    const unknown = Object.keys(this.options.constantInputs ?? {}).filter((n) => !declared.has(n) || initializerNames.has(n));
    if (unknown.length > 0) {
      throw new InvalidArgumentError(`constantInputs names ${unknown.map((n) => `"${n}"`).join(', ')}, which ${this.options.source} has no input of`, {
        details: { input: unknown[0] },
      });
    }
    const seen = new Set<string>();
    for (const input of this.proto.input ?? []) {
      const name = input.name ?? '';
      // Two inputs of one name: the second would be fed nothing (ONNX values are single-assignment).
      if (seen.has(name)) throw new BadModelError(`${this.options.source}: input "${name}" is declared twice`, { details: { input: name } });
      seen.add(name);
      if (initializerNames.has(name)) continue; // IR < 4: initializers listed as inputs
      const type = this.inputType(input.type, name);
      const fixed = this.options.constantInputs?.[name];
      if (fixed !== undefined) {
        if (type.kind !== 'tensor') throw new InvalidArgumentError(`constantInputs["${name}"]: input "${name}" is a ${formatType(type)}; only tensor inputs can be fixed`, { details: { input: name } });
        this.values.set(name, this.fixedInput(name, fixed, type.dtype, type.shape));
        continue;
      }
      const v = this.graph.addInput(name, type);
      this.sym.addSources(v);
      this.values.set(name, v);
    }
  }

  /**
   * A graph input's declared type: a tensor (it must have a rank), a STRING tensor, a sequence
   * of tensors, or an optional tensor or sequence. An optional's or a sequence's element sizes
   * are its own: an optional tensor's are data-dependent symbols, not the graph's.
   */
  private inputType(type: onnx.ITypeProto | null | undefined, name: string): ValueType {
    const where = `${this.options.source}: input "${name}"`;
    const tensorOf = (tt: onnx.TypeProto.ITensor, own: boolean): TensorType | ReturnType<typeof stringTensorType> => {
      const elem = elementFromOnnx(tt.elemType ?? 0, `input "${name}"`);
      if (!tt.shape) throw new UnsupportedOpError(`${where} has no shape (not even a rank); give it one when exporting`, { details: { input: name } });
      const shape = (tt.shape.dim ?? []).map((d, axis) => (own ? sym(dataDependentSymbol(this.graph, Infinity)) : this.dimOf(d, name, axis)));
      return elem === 'string' ? stringTensorType(shape) : tensorType(elem, shape);
    };
    const sequenceOf = (st: onnx.TypeProto.ISequence): ReturnType<typeof sequenceType> => {
      const tt = st.elemType?.tensorType;
      if (!tt) throw new UnsupportedOpError(`${where} is a sequence of ${st.elemType?.sequenceType ? 'sequences' : st.elemType?.mapType ? 'maps' : 'values'} other than tensors, which is not supported`, { details: { input: name } });
      return sequenceType(elementFromOnnx(tt.elemType ?? 0, `input "${name}"`), tt.shape ? (tt.shape.dim ?? []).length : null);
    };
    if (type?.tensorType) return tensorOf(type.tensorType, false);
    if (type?.sequenceType) return sequenceOf(type.sequenceType);
    if (type?.optionalType) {
      const el = type.optionalType.elemType;
      if (el?.tensorType) return optionalType(tensorOf(el.tensorType, true));
      if (el?.sequenceType) return optionalType(sequenceOf(el.sequenceType));
      throw new UnsupportedOpError(`${where} is an optional of neither a tensor nor a sequence, which is not supported`, { details: { input: name } });
    }
    throw new UnsupportedOpError(`${where} is ${type?.mapType ? 'a map' : type?.sparseTensorType ? 'a sparse tensor' : 'of no type'}; tensors, string tensors, sequences and optionals are supported`, { details: { input: name } });
  }

  private fixedInput(name: string, t: Tensor, dtype: DType, shape: readonly Dim[]): Value {
    const fits = t instanceof Tensor && t.dtype === dtype && t.shape.length === shape.length && shape.every((d, i) => !isStatic(d) || d === t.shape[i]);
    if (!fits) {
      throw new InvalidArgumentError(
        `constantInputs["${name}"] must be a ${dtype} tensor of shape [${shape.map(String).join(', ')}] (the input's declared type)` +
          (t instanceof Tensor ? `, got ${t.dtype} [${t.shape.join(', ')}]` : ''),
        { details: { input: name } },
      );
    }
    return this.graph.addConstant(this.graph.uniqueName(name), t);
  }

  private addInitializers(): Set<string> {
    const names = new Set<string>();
    for (const init of this.proto.initializer ?? []) {
      const name = init.name ?? '';
      if (names.has(name) || (this.scope?.mode === 'inline' && this.values.has(name))) throw new BadModelError(`${this.options.source}: initializer "${name}" is defined twice`, { details: { initializer: name } });
      if (init.dataType === ONNX_STRING) {
        const st = stringTensorFromProto(init, `${this.options.source}: initializer "${name}"`);
        this.values.set(name, call(this.graph, 'trt.string_constant', { values: [...st.data], shape: [...st.shape] }, { name }).output);
      } else this.values.set(name, this.graph.addConstant(name, tensorFromProto(init, `initializer "${name}"`, this.options), 'parameter'));
      names.add(name);
    }
    return names;
  }

  private view(node: onnx.INodeProto, index: number): OnnxNodeView {
    const name = node.name || `${node.opType ?? 'node'}_${index}`;
    const where = `ONNX node "${name}" (${node.opType})`;
    const attributes = new Map<string, AttrValue>();
    for (const a of node.attribute ?? []) attributes.set(a.name ?? '', decodeAttribute(a, where, this.options));
    return { name, opType: node.opType ?? '', domain: node.domain ?? '', inputs: node.input ?? [], outputs: node.output ?? [], attributes };
  }

  private importNode(node: onnx.INodeProto, index: number, modelOpset: number): void {
    const { view, opset } = upgradeLegacyForm(this.view(node, index), modelOpset, this.legacy);
    const ctx = new OnnxContext(this.graph, view, opset, this);
    const folder = onnxFolder(view.domain, view.opType);
    const mapper = onnxMapper(view.domain, view.opType);
    if (mapper === undefined && folder === undefined) {
      const domain = view.domain && view.domain !== 'ai.onnx' ? ` from domain "${view.domain}"` : '';
      ctx.unsupported(`op type ${view.opType}${domain} is not supported${domain === '' ? ` (opset ${opset})` : ''}`);
    }
    if (!onnxTakesAnyValues(view.domain, view.opType)) this.refuseNonTensorInputs(view, ctx);
    let results: OnnxResult[] | null = null;
    try {
      if (folder !== undefined) results = folder(ctx);
      // A folded list longer than a shape is no shape: the op runs as a node instead, and
      // its tensor is bounded like any other (the budgets of compile and run).
      if (results !== null && results.some((r) => !(r instanceof Value) && r.dims.length > KNOWN_LIMIT)) results = null;
      if (results === null) {
        results =
          mapper === undefined ? ctx.unsupported(`${view.opType} is only supported on shape values known at import time`) : mapper(ctx);
      }
    } catch (error) {
      // An input the mapper needs known that the model computes: import the node at run time.
      const deferred = needsKnownInput(error)
        ? deferNode(new OnnxContext(this.graph, view, opset, this), node, modelOpset, (name) => this.materialize(this.lookup(name), name))
        : null;
      if (deferred !== null) {
        this.define(view, deferred, ctx);
        return;
      }
      // A symbolic size over the limits is only known to be this node's fault here.
      if (error instanceof TensorRTNodeError && !(error instanceof SymbolicLimitError)) throw error;
      throw new BadModelError(`${ctx.where}: ${(error as Error).message}`, { cause: error, details: { node: view.name, op: view.opType } });
    }
    // An attribute no mapper read is one whose meaning the import would drop (a newer opset's
    // addition, an exporter's extension): refused by name rather than answered without it.
    const unreadInputs = ctx.unreadInputs();
    if (unreadInputs.length > 0) {
      const named = unreadInputs.map((i) => `${i} ("${view.inputs[i]}")`).join(', ');
      ctx.unsupported(`input${unreadInputs.length > 1 ? 's' : ''} ${named} of ${view.opType} (opset ${opset}) ${unreadInputs.length > 1 ? 'are' : 'is'} not supported: importing the node without ${unreadInputs.length > 1 ? 'them' : 'it'} would change what it computes`);
    }
    const ignored = ctx.unreadAttributes();
    if (ignored.length > 0) {
      ctx.unsupported(`attribute${ignored.length > 1 ? 's' : ''} ${ignored.map((a) => `"${a}"`).join(', ')} of ${view.opType} (opset ${opset}) ${ignored.length > 1 ? 'are' : 'is'} not supported: importing the node without ${ignored.length > 1 ? 'them' : 'it'} would change what it computes`);
    }
    this.define(view, results!, ctx);
  }

  /** A string tensor, sequence or optional given to an op whose mapper reads tensors: refused by name. */
  private refuseNonTensorInputs(view: OnnxNodeView, ctx: OnnxContext): void {
    view.inputs.forEach((name, i) => {
      if (name === '') return;
      const r = this.lookup(name);
      if (r instanceof Value && r.type.kind !== 'tensor' && r.type.kind !== 'symint') {
        ctx.unsupported(`input ${i} ("${name}") is a ${formatType(r.type)}; ${view.opType} is imported for tensors only`);
      }
    });
  }

  /** Binds the node's output names to `results`. */
  private define(view: OnnxNodeView, results: readonly OnnxResult[], ctx: OnnxContext): void {
    view.outputs.forEach((name, i) => {
      if (name === '') return; // an output the model does not use
      const r = results[i];
      if (r === undefined) ctx.unsupported(`output ${i} ("${name}") is not produced by this importer`);
      // ONNX graphs are single-assignment: a second definition would silently replace the first.
      if (this.values.has(name)) ctx.bad(`output ${i} ("${name}") is already defined by an earlier node, input or initializer`);
      this.values.set(name, r);
      // Sizes first known from this output (a loop's trip count) can then be read from it.
      if (r instanceof Value) this.sym.addSources(r);
      if (r instanceof Value && r.producer.kind === 'call' && r.name !== name) r.name = this.graph.uniqueName(name);
    });
  }

  run(opset: number): Graph {
    const g = this.proto;
    const initializers = this.addInitializers();
    this.addInputs(initializers);
    (g.node ?? []).forEach((node, i) => this.importNode(node, i, opset));
    const outputs: Value[] = [];
    const names: string[] = [];
    const seen = new Set<string>();
    for (const out of g.output ?? []) {
      const name = out.name ?? '';
      // Outputs are returned by name: a repeated name would silently shadow the earlier one.
      if (seen.has(name)) throw new BadModelError(`${this.options.source}: the graph lists output "${name}" twice`, { details: { output: name } });
      seen.add(name);
      const v = this.materialize(this.lookup(name), name);
      const wrong = declaredMismatch(out.type, v.type, `${this.options.source}: output "${name}"`);
      if (wrong !== null) throw new BadModelError(wrong, { details: { output: name } });
      outputs.push(v);
      names.push(name);
    }
    this.graph.setOutputs(outputs, names);
    this.graph.eliminateDeadCode();
    return this.graph;
  }
}

/** Imports a decoded model. */
export function importModel(model: onnx.ModelProto, options: ImportOptions): Graph {
  checkPreviewDomain(model, options.source);
  return new Importer(model.graph!, options, undefined, model.graph!.name || 'onnx_graph').run(defaultOpset(model, options.source));
}
