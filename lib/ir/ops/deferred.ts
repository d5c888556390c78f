/**
 * A frontend node whose import waits for the run: an op that needs some of its inputs known at
 * import (a Reshape's shape, a Slice's starts, a TopK's K...) and gets them computed from
 * tensor data instead. The frontend records the node as the model wrote it (`node`, in the
 * frontend's own encoding) with the types of its outputs (dtype and rank from the op's rules;
 * sizes are data-dependent symbols named after `key`, or an input's shape where the op keeps
 * it); the interpreter hands the node and its run-time inputs back to the frontend, which
 * imports it with those inputs as constants and runs it (lib/interpreter/ops/deferred.ts).
 * No converter takes it: compile() runs it, and what reads its outputs, in fallback segments.
 */
import { dtypeInfo, isDType, type DType } from '../dtype';
import { tensorType, Value, type ValueType } from '../graph';
import { keyedDataDependentSymbol } from './data-dependent';
import { defineOp } from './registry';

export const DEFERRED_NODE = 'trt.deferred_node';

// Output k: dtypes[k], and keep[k] >= 0: the shape of inputs[keep[k]]; else ranks[k] sizes,
// the next ranks[k] entries of `sizes` (outputs in order): a size known at import, or -1 for
// a data-dependent one.
defineOp(`${DEFERRED_NODE}(Tensor?[] inputs, str frontend, str node, int opset, str key, str[] dtypes, int[] ranks, int[] keep, int[] sizes) -> Tensor[]`, (ctx) => {
  const inputs = ctx.arg('inputs');
  const dtypes = ctx.arg('dtypes');
  if (!Array.isArray(inputs)) return ctx.fail('inputs must be a list');
  if (!Array.isArray(dtypes) || !dtypes.every((d) => typeof d === 'string')) return ctx.fail('dtypes must be a list of dtype names');
  const ranks = ctx.ints('ranks');
  const keep = ctx.ints('keep');
  const key = ctx.str('key');
  const sizes = ctx.ints('sizes');
  let next = 0;
  if (ranks.length !== dtypes.length || keep.length !== dtypes.length) ctx.fail(`dtypes, ranks and keep must have one entry per output (${dtypes.length}, ${ranks.length}, ${keep.length})`);
  // A null entry is an input the model left out.
  const inputTypes = inputs.map((v) => (v instanceof Value && v.type.kind === 'tensor' ? v.type : null));
  return (dtypes as readonly string[]).map((name, k): ValueType => {
    if (!isDType(name) || dtypeInfo(name).kind === 'complex') return ctx.fail(`output ${k}: ${JSON.stringify(name)} is not a real tensor dtype`);
    const dtype: DType = name;
    const from = keep[k]!;
    if (from >= 0) {
      const t = inputTypes[from];
      if (t === null || t === undefined) return ctx.fail(`output ${k} keeps the shape of input ${from}, which is not given`);
      return tensorType(dtype, t.shape);
    }
    const rank = ranks[k]!;
    if (!Number.isInteger(rank) || rank < 0 || rank > 8) ctx.fail(`output ${k}: rank ${rank} is outside [0, 8]`);
    const known = sizes.slice(next, (next += rank));
    if (known.length !== rank) ctx.fail(`sizes has fewer entries than the outputs' ranks`);
    return tensorType(dtype, known.map((n, d) => (n >= 0 ? n : keyedDataDependentSymbol(ctx, `${key}_o${k}_d${d}`, Infinity))));
  });
});
