/**
 * If, Loop and Scan: their graph attributes become subgraphs of `trt.if`, `trt.loop` and
 * `trt.scan` nodes (lib/ir/ops/control-flow.ts). A subgraph reads outer values by name in ONNX;
 * here each such read becomes a trailing input of the subgraph and an argument of the node
 * (the importer's capture). An If whose condition is known at import (a shape test) is no
 * control flow: the branch taken is imported in place, so its shape arithmetic still folds.
 */
import { optionalType, sequenceType, stringTensorType, tensorType, type SequenceType, type StringTensorType, type TensorType, type ValueType } from '../../../ir/graph';
import { dimEquals, sym, type Dim } from '../../../ir/symbolic';
import type { Value } from '../../../ir/graph';
import type { OnnxContext } from '../context';
import { defineOnnxOp, takesAnyValues } from '../registry';

const ITERATION = tensorType('int64', []);
const CONDITION = tensorType('bool', []);

/**
 * The types a loop-carried value (or scan state) enters its body with. Imported first with the
 * initial values' types; where an output's dim differs from its input's (a value that grows
 * per iteration), that dim is a symbol of the body's own instead, and the body is imported again.
 */
function carriedTypes<T extends ValueType>(ctx: OnnxContext, initial: readonly T[], importWith: (types: readonly T[]) => readonly ValueType[]): T[] | null {
  const outs = importWith(initial);
  let changed = false;
  const widened = initial.map((t, i): ValueType => {
    const out = outs[i]!;
    // A sequence whose elements' rank the body changes holds elements of no one rank (also
    // inside an optional, which the body may give back as a plain sequence).
    const seqOut = out.kind === 'optional' ? out.element : out;
    if (t.kind === 'sequence' || (t.kind === 'optional' && t.element.kind === 'sequence')) {
      const seqIn = (t.kind === 'optional' ? t.element : t) as SequenceType;
      if (seqOut.kind !== 'sequence' || (seqOut.rank === seqIn.rank && !seqIn.empty)) return t;
      changed = true;
      // A list the loop fills from empty has the rank of what the body puts in it.
      const open = sequenceType(seqIn.elem, seqIn.empty ? seqOut.rank : null);
      return t.kind === 'optional' ? optionalType(open) : open;
    }
    if ((t.kind !== 'tensor' && t.kind !== 'strings') || out.kind !== t.kind) return t; // the op's rule names a mismatch
    const outShape = (out as TensorType | StringTensorType).shape;
    if (outShape.length !== t.shape.length) return t;
    const shape = t.shape.map((d, k): Dim => {
      if (dimEquals(d, outShape[k]!)) return d;
      changed = true;
      return sym(`${(ctx.node.name || ctx.node.opType).replace(/[^A-Za-z0-9_]/g, '_')}_carried${i}_${k}`);
    });
    return t.kind === 'tensor' ? tensorType(t.dtype, shape) : stringTensorType(shape);
  });
  return changed ? (widened as T[]) : null;
}

defineOnnxOp('If', (ctx) => {
  const thenProto = ctx.graphAttribute('then_branch');
  const elseProto = ctx.graphAttribute('else_branch');
  const nThen = thenProto.output?.length ?? 0;
  const nElse = elseProto.output?.length ?? 0;
  if (nThen !== nElse) ctx.bad(`then_branch has ${nThen} outputs, else_branch ${nElse}: both branches must give the node's outputs`);
  if (nThen < ctx.node.outputs.length) ctx.bad(`the node has ${ctx.node.outputs.length} outputs, its branches give ${nThen}`);
  const condType = ctx.inputType(0);
  if (condType.dtype !== 'bool' || condType.shape.some((d) => d !== 1)) ctx.bad(`the condition must be a one-element bool tensor, got ${condType.dtype}[${condType.shape.join(', ')}]`);
  const known = ctx.constant(0);
  if (known !== null) return ctx.inlineSubgraph(Number(known.toArray()[0]) !== 0 ? 'then_branch' : 'else_branch');
  const then = ctx.subgraph('then_branch', []);
  const other = ctx.subgraph('else_branch', []);
  return ctx.call('trt.if', { cond: ctx.input(0), then_inputs: then.captured, else_inputs: other.captured }, { then_branch: then.graph, else_branch: other.graph }).outputs;
});

defineOnnxOp('Loop', (ctx) => {
  const m = ctx.optInput(0);
  const cond = ctx.optInput(1);
  if (m !== null && (m.tensorType.dtype !== 'int64' || m.tensorType.shape.some((d) => d !== 1))) ctx.bad(`M (input 0) must be a one-element int64 tensor, got ${m.tensorType.dtype}[${m.tensorType.shape.join(', ')}]`);
  if (cond !== null && (cond.tensorType.dtype !== 'bool' || cond.tensorType.shape.some((d) => d !== 1))) ctx.bad(`cond (input 1) must be a one-element bool tensor, got ${cond.tensorType.dtype}[${cond.tensorType.shape.join(', ')}]`);
  const carried = ctx.node.inputs.slice(2).map((_, i) => ctx.input(2 + i));
  const proto = ctx.graphAttribute('body');
  const nBodyOut = proto.output?.length ?? 0;
  if (nBodyOut < 1 + carried.length) ctx.bad(`body has ${nBodyOut} outputs; it must give the condition and the ${carried.length} carried values`);
  if (ctx.node.outputs.length > nBodyOut - 1) ctx.bad(`the node has ${ctx.node.outputs.length} outputs, its body gives ${nBodyOut - 1}`);
  // Carried values may be sequences and optionals too (an exporter's list built in a loop).
  let body = ctx.subgraph('body', [ITERATION, CONDITION, ...carried.map((v) => v.type)]);
  const widened = carriedTypes(ctx, carried.map((v) => v.type), () => body.graph.outputs.slice(1, 1 + carried.length).map((v) => v.type));
  if (widened !== null) body = ctx.subgraph('body', [ITERATION, CONDITION, ...widened]);
  return ctx.call('trt.loop', { max_trip_count: m, cond, carried, captured: body.captured }, { body: body.graph }).outputs;
});

/**
 * Scan before opset 9: input 0 is sequence_lens, and every state and scan input has a batch
 * axis first (the scan axis is then 1). With the batch static and sequence_lens absent or every
 * entry the full length, each batch item is a Scan of today's form over its own slices (one
 * trt.scan each, sharing the body), and the results are stacked back on the batch axis.
 */
function scanWithBatch(ctx: OnnxContext): Value[] {
  const nScan = ctx.attrInt('num_scan_inputs');
  const all = ctx.node.inputs.slice(1).map((_, i) => ctx.input(1 + i));
  const nStates = all.length - nScan;
  if (nScan < 1 || nStates < 0) ctx.bad(`num_scan_inputs is ${nScan}, but the node has ${all.length} inputs after sequence_lens`);
  const batch = all[0]!.tensorType.shape[0];
  if (typeof batch !== 'number') return ctx.unsupported('Scan before opset 9 needs a static batch size');
  const length = all[nStates]!.tensorType.shape[1];
  if (ctx.hasInput(0)) {
    const lens = ctx.constant(0);
    if (ctx.inputType(0).dtype !== 'int64') ctx.bad(`sequence_lens (input 0) must be int64, got ${ctx.inputType(0).dtype}`);
    if (lens === null || typeof length !== 'number' || !lens.toArray().every((n) => n === length)) ctx.unsupported('Scan before opset 9 with sequence_lens shorter than the scan inputs (or computed at run time) is not supported');
  }
  const directions = ctx.attrInts('directions', new Array<number>(nScan).fill(0));
  if (directions.length !== nScan) ctx.bad(`directions must have ${nScan} entries (num_scan_inputs)`);
  const drop = (t: TensorType, axes: number): TensorType => tensorType(t.dtype, t.shape.slice(axes));
  const body = ctx.subgraph('body', [...all.slice(0, nStates).map((v) => drop(v.tensorType, 1)), ...all.slice(nStates).map((v) => drop(v.tensorType, 2))]);
  const nOut = body.graph.outputs.length - nStates;
  const perItem = Array.from({ length: batch }, (_, b) => {
    const item = all.map((v) => ctx.emit('aten.select.int', { self: v, dim: 0, index: b }));
    return ctx.call(
      'trt.scan',
      {
        initial: item.slice(0, nStates),
        scan_inputs: item.slice(nStates),
        captured: body.captured,
        scan_input_axes: new Array<number>(nScan).fill(0),
        scan_input_directions: directions,
        scan_output_axes: new Array<number>(nOut).fill(0),
        scan_output_directions: new Array<number>(nOut).fill(0),
      },
      { body: body.graph },
    ).outputs;
  });
  return perItem[0]!.map((_, k) => ctx.emit('aten.stack.default', { tensors: perItem.map((outs) => outs[k]!), dim: 0 }));
}

defineOnnxOp('Scan', (ctx) => {
  if (ctx.opset < 9) return scanWithBatch(ctx);
  const nScan = ctx.attrInt('num_scan_inputs');
  const all = ctx.node.inputs.map((_, i) => ctx.input(i));
  const nStates = all.length - nScan;
  if (nScan < 1 || nStates < 0) ctx.bad(`num_scan_inputs is ${nScan}, but the node has ${all.length} inputs`);
  const states = all.slice(0, nStates);
  const scans = all.slice(nStates);
  const proto = ctx.graphAttribute('body');
  const nOut = (proto.output?.length ?? 0) - nStates;
  if (nOut < 0) ctx.bad(`body has ${proto.output?.length ?? 0} outputs, fewer than its ${nStates} states`);
  const zeros = (n: number): number[] => new Array<number>(n).fill(0);
  const inAxes = ctx.attrInts('scan_input_axes', zeros(nScan));
  const inDirs = ctx.attrInts('scan_input_directions', zeros(nScan));
  const outAxes = ctx.attrInts('scan_output_axes', zeros(nOut));
  const outDirs = ctx.attrInts('scan_output_directions', zeros(nOut));
  if (inAxes.length !== nScan || inDirs.length !== nScan) ctx.bad(`scan_input_axes and scan_input_directions must have ${nScan} entries (num_scan_inputs)`);
  if (outAxes.length !== nOut || outDirs.length !== nOut) ctx.bad(`scan_output_axes and scan_output_directions must have ${nOut} entries (the body's scan outputs)`);
  const slices = scans.map((v, j) => {
    const t = v.tensorType;
    const axis = inAxes[j]! < 0 ? inAxes[j]! + t.shape.length : inAxes[j]!;
    if (axis < 0 || axis >= t.shape.length) ctx.bad(`scan_input_axes[${j}] = ${inAxes[j]} is outside the rank ${t.shape.length} of scan input ${j}`);
    return tensorType(t.dtype, t.shape.filter((_, k) => k !== axis));
  });
  let body = ctx.subgraph('body', [...states.map((v) => v.tensorType), ...slices]);
  const widened = carriedTypes(ctx, states.map((v) => v.tensorType), () => body.graph.outputs.slice(0, nStates).map((v) => v.tensorType));
  if (widened !== null) body = ctx.subgraph('body', [...widened, ...slices]);
  return ctx.call(
    'trt.scan',
    {
      initial: states,
      scan_inputs: scans,
      captured: body.captured,
      scan_input_axes: inAxes,
      scan_input_directions: inDirs,
      scan_output_axes: outAxes,
      scan_output_directions: outDirs,
    },
    { body: body.graph },
  ).outputs;
});

// If's branches and a loop's carried values may be sequences and optionals (Scan's stay tensors).
takesAnyValues(['If', 'Loop']);
