/**
 * Control flow: ops that run graphs of their own (Node.subgraphs), as ONNX's If, Loop and
 * Scan do. A subgraph reads nothing from the graph around it by reference: the outer values
 * it needs are arguments of the node (`*_inputs`, `captured`) and trailing inputs of the
 * subgraph, so every pass, the serializer and the interpreter see the data flow as ordinary
 * arguments.
 *
 * Output sizes a run decides (a branch's shape when the branches disagree, a loop's trip
 * count) are symbols named after the subgraph (`InferContext.runtimeSymbol`), range [0, ∞),
 * which no input binds: the interpreter checks such dims only where it can evaluate them.
 */
import { UnsupportedOpError } from '../../errors';
import { dimEquals, symbolsOf, type Dim } from '../symbolic';
import { formatType, optionalType, sameKindAndRank, sequenceType, stringTensorType, tensorType, Value, type Graph, type SequenceType, type StringTensorType, type TensorType, type ValueType } from '../graph';
import type { InferContext } from './infer-context';
import { defineOp } from './registry';

/** The subgraph roles of each control-flow op. */
export const CONTROL_FLOW_SUBGRAPHS: Readonly<Record<string, readonly string[]>> = Object.freeze({
  'trt.if': ['then_branch', 'else_branch'],
  'trt.loop': ['body'],
  'trt.scan': ['body'],
  // ONNX SequenceMap (lib/ir/ops/sequences.ts): its body runs once per sequence element.
  'trt.sequence_map': ['body'],
});

export function isControlFlow(target: string): boolean {
  return Object.hasOwn(CONTROL_FLOW_SUBGRAPHS, target);
}

function tensorsOf(ctx: InferContext, g: Graph, which: 'inputs' | 'outputs', role: string): TensorType[] {
  return g[which].map((v, i) => {
    // A branch or body passing a sequence or optional is valid ONNX that these ops do not carry.
    if (v.type.kind !== 'tensor') throw new UnsupportedOpError(`${ctx.where} (${ctx.target}): ${role} ${which === 'inputs' ? 'input' : 'output'} ${i} is a ${formatType(v.type)}; control flow carries tensors only`);
    return v.type;
  });
}

/** A subgraph's inputs or outputs: tensors, string tensors, sequences or optionals (not SymInts). */
function valuesOf(ctx: InferContext, g: Graph, which: 'inputs' | 'outputs', role: string): ValueType[] {
  return g[which].map((v, i) => {
    if (v.type.kind === 'symint') ctx.fail(`${role} ${which === 'inputs' ? 'input' : 'output'} ${i} is a SymInt`);
    return v.type;
  });
}

/** The element type and rank of a value's type, for messages and for matching what a node gives a subgraph. */
function describeKind(t: ValueType): string {
  switch (t.kind) {
    case 'tensor':
      return `${t.dtype} of rank ${t.shape.length}`;
    case 'strings':
      return `a string tensor of rank ${t.shape.length}`;
    case 'sequence':
      return `a sequence of ${t.elem}${t.rank === null ? '' : ` (rank ${t.rank})`}`;
    case 'optional':
      return `an optional (${describeKind(t.element)})`;
    case 'symint':
      return 'a SymInt';
  }
}

/** Whether a value of type `t` fits where `d` is declared: kind, element type and rank, and static dims where both are static. */
function fits(d: ValueType, t: ValueType): boolean {
  const dimsFit = (a: readonly Dim[], b: readonly Dim[]): boolean => a.length === b.length && a.every((x, k) => typeof x !== 'number' || typeof b[k] !== 'number' || x === b[k]);
  switch (d.kind) {
    case 'tensor':
      return t.kind === 'tensor' && d.dtype === t.dtype && dimsFit(d.shape, t.shape);
    case 'strings':
      return t.kind === 'strings' && dimsFit(d.shape, t.shape);
    case 'sequence':
      // A subgraph taking sequences of any rank takes one of a known rank.
      return t.kind === 'sequence' && d.elem === t.elem && (d.rank === null || d.rank === t.rank || t.empty === true);
    case 'optional':
      return t.kind === 'optional' && fits(d.element, t.element);
    case 'symint':
      return false;
  }
}

/** The subgraph's inputs must take what the node gives them: kind, dtype and rank, and static dims where both are static. */
function checkInputs(ctx: InferContext, role: string, g: Graph, given: readonly ValueType[]): void {
  const declared = valuesOf(ctx, g, 'inputs', role);
  if (declared.length !== given.length) ctx.fail(`${role} takes ${declared.length} inputs, the node gives it ${given.length}`);
  declared.forEach((d, i) => {
    const t = given[i]!;
    if (!fits(d, t)) ctx.fail(`${role} input ${i} (%${g.inputs[i]!.name}) is ${describeKind(d)}, the node gives it ${describeKind(t)}${describeKind(d) === describeKind(t) ? ' with other sizes' : ''}`);
  });
}

/** A list argument's value types (tensors, string tensors, sequences or optionals). */
function argValues(ctx: InferContext, name: string): ValueType[] {
  const a = ctx.arg(name);
  if (!Array.isArray(a)) return ctx.fail(`argument ${name} must be a list of values`);
  return a.map((v, i) => (v instanceof Value && v.type.kind !== 'symint' ? v.type : ctx.fail(`argument ${name}[${i}] must be a tensor, sequence or optional value`)));
}

/**
 * The type of a value that is `a` on one path and `b` on another (If's branches; a loop's
 * value before and after its iterations): kinds and element types must agree; a dim on which
 * they differ is a run-time symbol named `fresh`; a sequence's rank, unknown where they differ.
 */
function joinTypes(ctx: InferContext, a: ValueType, b: ValueType, what: string, fresh: string, same: (d: Dim, k: number) => Dim): ValueType {
  const mismatch = (): never => ctx.fail(`${what} is ${describeKind(a)} on one path and ${describeKind(b)} on the other`);
  const dims = (x: readonly Dim[], y: readonly Dim[]): Dim[] => {
    // Values of different ranks cannot be one typed value; ONNX allows it, this IR refuses it.
    if (x.length !== y.length) {
      throw new UnsupportedOpError(`${ctx.where} (${ctx.target}): ${what} has rank ${x.length} on one path, ${y.length} on the other; ONNX allows it, and this IR types every value with one rank`, {
        details: { op: ctx.target },
      });
    }
    return x.map((d, k) => (dimEquals(d, y[k]!) ? same(d, k) : ctx.runtimeSymbol(`${fresh}_${k}`)));
  };
  switch (a.kind) {
    case 'tensor':
      if (b.kind !== 'tensor' || a.dtype !== b.dtype) return mismatch();
      return tensorType(a.dtype, dims(a.shape, b.shape));
    case 'strings':
      return b.kind === 'strings' ? stringTensorType(dims(a.shape, b.shape)) : mismatch();
    case 'sequence':
      if (b.kind !== 'sequence' || a.elem !== b.elem) return mismatch();
      // A sequence known empty on one path takes the other's rank (it has no element to differ).
      return sequenceType(a.elem, a.empty ? b.rank : b.empty ? a.rank : a.rank === b.rank ? a.rank : null, a.empty === true && b.empty === true);
    case 'optional': {
      if (b.kind !== 'optional') return mismatch();
      // An optional's element sizes are its own (they bind no symbol of the graph): each dim a run-time one.
      const element = joinTypes(ctx, a.element, b.element, `${what}'s element`, `${fresh}_e`, (_, k) => ctx.runtimeSymbol(`${fresh}_e_${k}`));
      return optionalType(element as TensorType | StringTensorType | SequenceType);
    }
    case 'symint':
      return mismatch();
  }
}

/**
 * A subgraph's dim as the outer graph may state it: as it is when every symbol in it is one
 * the outer graph declares (it came in through the inputs), else a run-time symbol.
 */
function outerDim(ctx: InferContext, d: Dim, fresh: string): Dim {
  if (typeof d === 'number') return d;
  return [...symbolsOf(d)].every((s) => ctx.symbols.has(s)) ? d : ctx.runtimeSymbol(fresh);
}

function scalarLike(ctx: InferContext, t: TensorType, what: string, dtypes: readonly string[]): void {
  if (!dtypes.includes(t.dtype) || t.shape.some((d) => d !== 1)) ctx.fail(`${what} must be a one-element ${dtypes.join(' or ')} tensor, got ${t.dtype}[${t.shape.join(', ')}]`);
}

// If: runs then_branch or else_branch on its own inputs. The branches must agree on the
// number of outputs and their kinds, element types and ranks; a dim on which they differ is a
// run-time one.
defineOp('trt.if(Tensor cond, Any[] then_inputs, Any[] else_inputs) -> Any[]', (ctx) => {
  const cond = ctx.tensor('cond');
  scalarLike(ctx, cond, 'the condition', ['bool']);
  const then = ctx.subgraph('then_branch');
  const other = ctx.subgraph('else_branch');
  checkInputs(ctx, 'then_branch', then, argValues(ctx, 'then_inputs'));
  checkInputs(ctx, 'else_branch', other, argValues(ctx, 'else_inputs'));
  const a = valuesOf(ctx, then, 'outputs', 'then_branch');
  const b = valuesOf(ctx, other, 'outputs', 'else_branch');
  if (a.length !== b.length) ctx.fail(`then_branch has ${a.length} outputs, else_branch ${b.length}`);
  return a.map((t, i) => joinTypes(ctx, t, b[i]!, `output ${i}`, `${then.name}_o${i}`, (d, k) => outerDim(ctx, d, `${then.name}_o${i}_${k}`)));
});

/**
 * Loop: body(iteration int64[], cond bool[], carried..., captured...) -> (cond, carried...,
 * scan slices...). Runs while the iteration is below max_trip_count (when given) and the
 * condition (true when not given; then the body's after each iteration) holds. Outputs: the carried values after the
 * last iteration, then each scan slice stacked on a new axis 0.
 */
defineOp('trt.loop(Tensor? max_trip_count, Tensor? cond, Any[] carried, Any[] captured) -> Any[]', (ctx) => {
  const body = ctx.subgraph('body');
  const m = ctx.optTensor('max_trip_count');
  if (m !== null) scalarLike(ctx, m, 'max_trip_count', ['int64']);
  const c = ctx.optTensor('cond');
  if (c !== null) scalarLike(ctx, c, 'the condition', ['bool']);
  const carried = argValues(ctx, 'carried');
  checkInputs(ctx, 'body', body, [tensorType('int64', []), tensorType('bool', []), ...carried, ...argValues(ctx, 'captured')]);
  const all = valuesOf(ctx, body, 'outputs', 'body');
  if (all.length < 1 + carried.length) ctx.fail(`body has ${all.length} outputs, fewer than the condition and ${carried.length} carried values`);
  const cnd = all[0]!;
  if (cnd.kind !== 'tensor') return ctx.fail('body output 0 (the condition) must be a tensor');
  scalarLike(ctx, cnd, 'body output 0 (the condition)', ['bool']);
  const bodyIns = valuesOf(ctx, body, 'inputs', 'body');
  const result: ValueType[] = carried.map((t, i) => {
    const inp = bodyIns[2 + i]!;
    // An optional carried value the body gives back as a plain value is that value, present
    // (ONNX accepts the form: the interpreter wraps it for the next iteration); after the loop
    // it is the plain value the body gives, as ONNX types it.
    const given = all[1 + i]!;
    if (t.kind === 'optional' && inp.kind === 'optional' && given.kind !== 'optional' && fits(inp.element, given)) {
      return joinTypes(ctx, t.element, given, `carried value ${i}`, `${body.name}_c${i}`, (_, k) => ctx.runtimeSymbol(`${body.name}_c${i}_${k}`));
    }
    const out = given;
    if (!sameKindAndRank(inp, out)) ctx.fail(`carried value ${i} enters the body as ${describeKind(t)} and leaves it as ${describeKind(out)}`);
    // The value after the loop is the initial one (no iteration) or the body's last output.
    return joinTypes(ctx, t, out, `carried value ${i}`, `${body.name}_c${i}`, (d, k) => {
      const x = inp.kind === 'tensor' || inp.kind === 'strings' ? inp.shape[k]! : d;
      return dimEquals(d, x) ? outerDim(ctx, d, `${body.name}_c${i}_${k}`) : ctx.runtimeSymbol(`${body.name}_c${i}_${k}`);
    });
  });
  const outs = all.map((t, i) => (i > carried.length && t.kind !== 'tensor' ? ctx.fail(`scan output ${i - 1 - carried.length} must be a tensor, got ${describeKind(t)}`) : t)) as TensorType[];
  // The trip count is static only for a loop of constant M whose condition cannot turn false:
  // none given (or a constant true), and the body passing it through or giving a constant true.
  const mValue = ctx.args.max_trip_count;
  const condValue = ctx.args.cond;
  const alwaysTrue = (v: unknown): boolean => v instanceof Value && v.producer.kind === 'constant' && Number(v.producer.tensor!.toArray()[0]) !== 0;
  const condHolds = (condValue === null || alwaysTrue(condValue)) && (body.outputs[0] === body.inputs[1] || alwaysTrue(body.outputs[0]));
  const constantM = condHolds && mValue instanceof Value && mValue.producer.kind === 'constant' ? Number(mValue.producer.tensor!.toArray()[0]) : undefined;
  const trips: Dim = constantM !== undefined && Number.isSafeInteger(constantM) ? Math.max(0, constantM) : ctx.runtimeSymbol(`${body.name}_trips`);
  for (let i = 1 + carried.length; i < outs.length; i++) {
    const t = outs[i]!;
    result.push(tensorType(t.dtype, [trips, ...t.shape.map((d, k) => outerDim(ctx, d, `${body.name}_s${i}_${k}`))]));
  }
  return result;
});

/**
 * Scan (opset 9+): body(state..., slices..., captured...) -> (state..., output slices...).
 * Iterates over axis `scan_input_axes[j]` of each scan input (backwards where its direction
 * is 1); each output slice is stacked on `scan_output_axes[j]` (prepended where its direction
 * is 1). Outputs: the final states, then the stacked scan outputs.
 */
defineOp(
  'trt.scan(Tensor[] initial, Tensor[] scan_inputs, Tensor[] captured, int[] scan_input_axes, int[] scan_input_directions, int[] scan_output_axes, int[] scan_output_directions) -> Tensor[]',
  (ctx) => {
    const body = ctx.subgraph('body');
    const states = ctx.tensors('initial');
    const scans = ctx.tensors('scan_inputs');
    const inAxes = ctx.ints('scan_input_axes');
    const inDirs = ctx.ints('scan_input_directions');
    if (scans.length === 0) ctx.fail('needs at least one scan input');
    if (inAxes.length !== scans.length || inDirs.length !== scans.length) ctx.fail(`scan_input_axes and scan_input_directions must have one entry per scan input (${scans.length})`);
    let n: Dim | undefined;
    const slices = scans.map((t, j) => {
      const r = t.shape.length;
      const axis = inAxes[j]! < 0 ? inAxes[j]! + r : inAxes[j]!;
      if (axis < 0 || axis >= r) ctx.fail(`scan_input_axes[${j}] = ${inAxes[j]} is outside rank ${r}`);
      if (inDirs[j] !== 0 && inDirs[j] !== 1) ctx.fail(`scan_input_directions[${j}] must be 0 or 1, got ${inDirs[j]}`);
      const len = t.shape[axis]!;
      if (n === undefined) n = len;
      else if (typeof n === 'number' && typeof len === 'number' && n !== len) ctx.fail(`scan input ${j} has ${len} iterations along its axis, scan input 0 has ${n}`);
      return tensorType(t.dtype, t.shape.filter((_, k) => k !== axis));
    });
    checkInputs(ctx, 'body', body, [...states, ...slices, ...ctx.tensors('captured')]);
    const outs = tensorsOf(ctx, body, 'outputs', 'body');
    const nOut = outs.length - states.length;
    if (nOut < 0) ctx.fail(`body has ${outs.length} outputs, fewer than its ${states.length} states`);
    const outAxes = ctx.ints('scan_output_axes');
    const outDirs = ctx.ints('scan_output_directions');
    if (outAxes.length !== nOut || outDirs.length !== nOut) ctx.fail(`scan_output_axes and scan_output_directions must have one entry per scan output (${nOut})`);
    const bodyIns = tensorsOf(ctx, body, 'inputs', 'body');
    const result: ValueType[] = states.map((t, i) => {
      const out = outs[i]!;
      const inp = bodyIns[i]!;
      if (out.dtype !== t.dtype || out.shape.length !== t.shape.length) ctx.fail(`state ${i} enters the body as ${t.dtype} of rank ${t.shape.length} and leaves it as ${out.dtype} of rank ${out.shape.length}`);
      return tensorType(t.dtype, t.shape.map((d, k) => (dimEquals(inp.shape[k]!, out.shape[k]!) && dimEquals(d, inp.shape[k]!) ? outerDim(ctx, d, `${body.name}_c${i}_${k}`) : ctx.runtimeSymbol(`${body.name}_c${i}_${k}`))));
    });
    outs.slice(states.length).forEach((t, j) => {
      const r = t.shape.length + 1;
      const axis = outAxes[j]! < 0 ? outAxes[j]! + r : outAxes[j]!;
      if (axis < 0 || axis >= r) ctx.fail(`scan_output_axes[${j}] = ${outAxes[j]} is outside rank ${r}`);
      if (outDirs[j] !== 0 && outDirs[j] !== 1) ctx.fail(`scan_output_directions[${j}] must be 0 or 1, got ${outDirs[j]}`);
      const shape = t.shape.map((d, k) => outerDim(ctx, d, `${body.name}_s${j}_${k}`));
      shape.splice(axis, 0, n!);
      result.push(tensorType(t.dtype, shape));
    });
    return result;
  },
);
