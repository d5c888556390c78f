/**
 * The structure of a serialized ExportedProgram (model.json), checked once before import: every
 * list, object and union the importer walks is of the kind it expects, so a malformed file is
 * E_BAD_MODEL naming the JSON path (`graph_module.graph.nodes[12].inputs[0].arg`) instead of a
 * TypeError deep in the importer. Only the pieces the importer reads are checked, and only
 * their shape: values (dtypes, op names, sizes) are judged where they are used.
 */
import { BadModelError } from '../../errors';
import { JsonReader } from '../../ir/json-reader';
import { isObject, unionKind, type JsonObject } from './serde';

/** The spec kinds the importer imports (rather than refuses by kind): each must have an `arg`. */
const SPECS_WITH_ARG = new Set(['user_input', 'parameter', 'buffer', 'tensor_constant', 'user_output']);

class ProgramShapeReader extends JsonReader {
  constructor(
    private readonly file: string,
    private readonly entry: string,
  ) {
    super(`${file}: entry "${entry}"`, { maxDepth: 0, quoteLength: 40, strict: false });
  }

  fail(message: string, details?: Record<string, unknown>): never {
    throw new BadModelError(`${this.label}: ${message}`, { details: { file: this.file, entry: this.entry, ...details } });
  }

  /** An object or null/absent (optional fields). */
  optionalObject(x: unknown, what: string): JsonObject | undefined {
    return x === undefined || x === null ? undefined : (this.object(x, what) as JsonObject);
  }

  /** A list of objects. */
  objects(x: unknown, what: string): JsonObject[] {
    return this.array(x, what).map((item, i) => this.object(item, `${what}[${i}]`) as JsonObject);
  }

  /** A tensor reference `{name: string}`. */
  tensorRef(x: unknown, what: string): void {
    this.string(this.object(x, what).name, `${what}.name`);
  }

  /** A SymInt: `{as_int: n}` or `{as_expr: {expr_str, hint?}}` (which one it is is checked where it is read). */
  symInt(x: unknown, what: string): void {
    const s = this.object(x, what);
    const expr = this.optionalObject(s.as_expr, `${what}.as_expr`);
    if (expr !== undefined) this.optionalObject(expr.hint, `${what}.as_expr.hint`);
  }

  /** A serialized Argument union: the payloads the importer reads have the kind it reads them as. */
  argument(x: unknown, what: string): void {
    const arg = this.object(x, what) as JsonObject;
    const kind = unionKind(arg);
    const v = arg[kind];
    const at = `${what}.${kind}`;
    switch (kind) {
      case 'as_tensor':
        return this.tensorRef(v, at);
      case 'as_tensors':
        return this.array(v, at).forEach((t, i) => this.tensorRef(t, `${at}[${i}]`));
      case 'as_optional_tensor':
        return this.argument(v, at);
      case 'as_optional_tensors':
        return this.array(v, at).forEach((t, i) => this.argument(t, `${at}[${i}]`));
      case 'as_ints':
      case 'as_floats':
      case 'as_bools':
      case 'as_strings':
        this.array(v, at);
        return;
      case 'as_sym_int':
      case 'as_sym_bool':
      case 'as_sym_float':
        this.object(v, at);
        return;
      case 'as_sym_ints':
      case 'as_sym_bools':
      case 'as_sym_floats':
        this.objects(v, at);
        return;
      default:
        // Scalars and kinds the importer refuses by name: nothing is walked.
        return;
    }
  }

  node(x: unknown, what: string): void {
    const node = this.object(x, what);
    this.string(node.target, `${what}.target`);
    this.array(node.inputs, `${what}.inputs`).forEach((input, i) => {
      const at = `${what}.inputs[${i}]`;
      const o = this.object(input, at);
      if (o.name !== undefined) this.string(o.name, `${at}.name`);
      if (o.kind !== undefined && o.kind !== null && typeof o.kind !== 'number') this.fail(`${at}.kind is not a number (got ${this.describe(o.kind)})`);
      this.argument(o.arg, `${at}.arg`);
    });
    this.array(node.outputs, `${what}.outputs`).forEach((o, i) => this.argument(o, `${what}.outputs[${i}]`));
    if (node.name !== undefined && node.name !== null) this.string(node.name, `${what}.name`);
    this.optionalObject(node.metadata, `${what}.metadata`);
  }

  /** An input or output spec: a union whose body is an object, with the fields its kind reads. */
  spec(x: unknown, what: string): void {
    const spec = this.object(x, what) as JsonObject;
    const kind = unionKind(spec);
    if (kind.startsWith('(')) return; // empty or ambiguous: refused by kind in the importer
    const body = this.object(spec[kind], `${what}.${kind}`);
    if (kind === 'constant_input') this.object(body.value, `${what}.${kind}.value`);
    else if (body.arg !== undefined || SPECS_WITH_ARG.has(kind)) this.argument(body.arg, `${what}.${kind}.arg`);
  }

  program(json: JsonObject): void {
    const gm = this.object(json.graph_module, 'graph_module');
    const graph = this.object(gm.graph, 'graph_module.graph');
    const g = 'graph_module.graph';
    this.array(graph.nodes, `${g}.nodes`).forEach((n, i) => this.node(n, `${g}.nodes[${i}]`));
    this.array(graph.inputs, `${g}.inputs`).forEach((a, i) => this.argument(a, `${g}.inputs[${i}]`));
    this.array(graph.outputs, `${g}.outputs`).forEach((a, i) => this.argument(a, `${g}.outputs[${i}]`));
    for (const [name, meta] of Object.entries(this.object(graph.tensor_values, `${g}.tensor_values`))) {
      const at = `${g}.tensor_values[${JSON.stringify(name)}]`;
      const m = this.object(meta, at);
      this.array(m.sizes, `${at}.sizes`).forEach((s, i) => this.symInt(s, `${at}.sizes[${i}]`));
    }
    const symInts = this.optionalObject(graph.sym_int_values, `${g}.sym_int_values`) ?? {};
    for (const [name, s] of Object.entries(symInts)) this.symInt(s, `${g}.sym_int_values[${JSON.stringify(name)}]`);
    const sig = this.object(gm.signature, 'graph_module.signature');
    this.array(sig.input_specs, 'graph_module.signature.input_specs').forEach((s, i) => this.spec(s, `graph_module.signature.input_specs[${i}]`));
    this.array(sig.output_specs, 'graph_module.signature.output_specs').forEach((s, i) => this.spec(s, `graph_module.signature.output_specs[${i}]`));
    const ranges = this.optionalObject(json.range_constraints, 'range_constraints') ?? {};
    for (const [key, r] of Object.entries(ranges)) this.optionalObject(r, `range_constraints[${JSON.stringify(key)}]`);
  }
}

/**
 * Checks the structure of the ExportedProgram `json` (entry `entry` of `file`); throws
 * E_BAD_MODEL naming the first malformed JSON path.
 */
export function checkProgramShape(json: JsonObject, file: string, entry: string): void {
  new ProgramShapeReader(file, entry).program(json);
}
