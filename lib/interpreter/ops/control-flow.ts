/**
 * If, Loop and Scan (lib/ir/ops/control-flow.ts): each runs its subgraphs through the
 * interpreter itself. A loop is bounded: past `maxLoopIterations` iterations, or when a
 * carried value or a stacked scan output would pass `maxTensorBytes`, it fails with
 * E_RESOURCE_LIMIT (interpret() names the node) instead of running on.
 */
import { BadInputError, InternalError, ResourceLimitError } from '../../errors';
import type { Graph, Node } from '../../ir/graph';
import { evaluateDim } from '../../ir/symbolic';
import { Tensor } from '../../ir/tensor';
import { concat, slice, squeeze, unsqueeze } from '../../kernels/shape';
import { DEFAULT_CONTROL_FLOW_LIMITS, interpret, interpretValues } from '../interpret';
import { graphValueBytes, OptionalValue, StringTensor, TensorSequence, type GraphValue } from '../../ir/values';
import { defineImpl, type ControlFlowLimits, type ImplContext, type RuntimeArg } from '../registry';

function subgraph(node: Node, role: string): Graph {
  const g = node.subgraphs?.[role];
  if (g === undefined) throw new InternalError(`node ${node.name} (${node.target}) has no subgraph ${role}`);
  return g;
}

/** A list argument's values: tensors, string tensors, sequences or optionals (If's inputs, a loop's carried values). */
function values(a: RuntimeArg | undefined): GraphValue[] {
  if (!Array.isArray(a)) throw new InternalError('control flow: expected a list of values');
  return a.map((t) => {
    if (!(t instanceof Tensor) && !(t instanceof StringTensor) && !(t instanceof TensorSequence) && !(t instanceof OptionalValue)) throw new InternalError('control flow: expected a list of values');
    return t;
  });
}

function tensors(a: RuntimeArg | undefined): Tensor[] {
  if (!Array.isArray(a)) throw new InternalError('control flow: expected a list of tensors');
  return a.map((t) => {
    if (!(t instanceof Tensor)) throw new InternalError('control flow: expected a list of tensors');
    return t;
  });
}

function truth(t: Tensor): boolean {
  return Number(t.toArray()[0]) !== 0;
}

function limitsOf(ctx: ImplContext): ControlFlowLimits {
  return ctx.limits ?? DEFAULT_CONTROL_FLOW_LIMITS;
}

function checkBytes(limits: ControlFlowLimits, bytes: number, what: string): void {
  if (bytes > limits.maxTensorBytes) {
    throw new ResourceLimitError(`${what} would grow to ${bytes} bytes, more than maxTensorBytes (${limits.maxTensorBytes})`, {
      details: { bytes, maxTensorBytes: limits.maxTensorBytes },
    });
  }
}

/** Slices stacked on a new `axis` (reversed first when `reverse`); an empty stack takes its other dims from the node's type. */
function stack(slices: Tensor[], axis: number, reverse: boolean, node: Node, output: number, symbols: ReadonlyMap<string, number>): Tensor {
  if (slices.length === 0) {
    const type = node.outputs[output]!.tensorType;
    const shape = type.shape.map((d) => {
      try {
        return evaluateDim(d, symbols);
      } catch {
        return 0; // a size only an iteration would have told: the stack is empty anyway
      }
    });
    shape[axis] = 0;
    return new Tensor(type.dtype, shape);
  }
  const ordered = reverse ? [...slices].reverse() : slices;
  return concat(ordered.map((s) => unsqueeze(s, axis)), axis);
}

defineImpl('trt.if', (args, ctx) => {
  const then = truth(args.cond as Tensor);
  const branch = subgraph(ctx.node, then ? 'then_branch' : 'else_branch');
  return interpretValues(branch, values(then ? args.then_inputs : args.else_inputs), { limits: limitsOf(ctx) });
});

defineImpl('trt.loop', (args, ctx) => {
  const limits = limitsOf(ctx);
  const body = subgraph(ctx.node, 'body');
  const m = args.max_trip_count instanceof Tensor ? args.max_trip_count.toArray()[0]! : undefined;
  const tripLimit = m === undefined ? Infinity : Number(m);
  const useCond = args.cond instanceof Tensor;
  let cond = useCond ? truth(args.cond as Tensor) : true;
  let carried = values(args.carried);
  const captured = values(args.captured);
  const nScan = body.outputs.length - 1 - carried.length;
  const scans: Tensor[][] = Array.from({ length: nScan }, () => []);
  const scanBytes = new Array<number>(nScan).fill(0);
  let i = 0;
  for (; i < tripLimit && cond; i++) {
    if (i >= limits.maxLoopIterations) {
      throw new ResourceLimitError(
        `the loop has run ${limits.maxLoopIterations} iterations without ending (max_trip_count ${m === undefined ? 'not given' : String(m)}, ` +
          `the condition${useCond ? '' : ' (not given)'} still true); a loop is cut there as one that does not end`,
        { details: { iterations: limits.maxLoopIterations, maxLoopIterations: limits.maxLoopIterations } },
      );
    }
    const outs = interpretValues(body, [Tensor.scalar('int64', i), Tensor.from('bool', [], [cond ? 1 : 0]), ...carried, ...captured], { limits });
    // The body's condition is honoured with or without a condition input, as onnxruntime does.
    cond = truth(outs[0] as Tensor);
    // An optional carried value given back as a plain one is that value, present (lib/ir/ops/control-flow.ts).
    carried = outs.slice(1, 1 + carried.length).map((v, k) => (body.inputs[2 + k]!.type.kind === 'optional' && !(v instanceof OptionalValue) ? new OptionalValue(v as Tensor) : v));
    carried.forEach((t, k) => checkBytes(limits, graphValueBytes(t), `loop-carried value ${k} at iteration ${i}`));
    (outs.slice(1 + carried.length) as Tensor[]).forEach((t, k) => {
      scanBytes[k] += t.data.byteLength;
      checkBytes(limits, scanBytes[k]!, `scan output ${k} after ${i + 1} iterations`);
      scans[k]!.push(t);
    });
  }
  // An optional carried value the body gives back plain is plain after the loop (as ONNX types
  // it): a loop that ran no iteration gives the initial optional's value.
  const final = carried.map((v, k) => {
    if (ctx.node.outputs[k]!.type.kind === 'optional' || !(v instanceof OptionalValue)) return v;
    if (v.value === null) throw new BadInputError(`the loop ran no iteration and its carried value ${k}, an empty optional, has no value to give`);
    return v.value;
  });
  return [...final, ...scans.map((s, k) => stack(s, 0, false, ctx.node, carried.length + k, ctx.symbols))];
});

defineImpl('trt.scan', (args, ctx) => {
  const limits = limitsOf(ctx);
  const body = subgraph(ctx.node, 'body');
  let states = tensors(args.initial);
  const inputs = tensors(args.scan_inputs);
  const captured = tensors(args.captured);
  const inAxes = (args.scan_input_axes as number[]).map((a, j) => (a < 0 ? a + inputs[j]!.rank : a));
  const inDirs = args.scan_input_directions as number[];
  const outAxes = args.scan_output_axes as number[];
  const outDirs = args.scan_output_directions as number[];
  const n = inputs[0]!.shape[inAxes[0]!]!;
  inputs.forEach((t, j) => {
    if (t.shape[inAxes[j]!] !== n) throw new InternalError(`scan input ${j} has ${t.shape[inAxes[j]!]} iterations along its axis, scan input 0 has ${n}`);
  });
  const nOut = body.outputs.length - states.length;
  const scans: Tensor[][] = Array.from({ length: nOut }, () => []);
  const scanBytes = new Array<number>(nOut).fill(0);
  for (let t = 0; t < n; t++) {
    const slices = inputs.map((x, j) => {
      const at = inDirs[j] === 1 ? n - 1 - t : t;
      return squeeze(slice(x, inAxes[j]!, at, at + 1), inAxes[j]!);
    });
    const outs = interpret(body, [...states, ...slices, ...captured], { limits });
    states = outs.slice(0, states.length);
    states.forEach((s, k) => checkBytes(limits, s.data.byteLength, `scan state ${k} at iteration ${t}`));
    outs.slice(states.length).forEach((s, k) => {
      scanBytes[k] += s.data.byteLength;
      checkBytes(limits, scanBytes[k]!, `scan output ${k} after ${t + 1} iterations`);
      scans[k]!.push(s);
    });
  }
  return [
    ...states,
    ...scans.map((s, k) => {
      const rank = body.outputs[states.length + k]!.tensorType.shape.length + 1;
      const axis = outAxes[k]! < 0 ? outAxes[k]! + rank : outAxes[k]!;
      return stack(s, axis, outDirs[k] === 1, ctx.node, states.length + k, ctx.symbols);
    }),
  ];
});
