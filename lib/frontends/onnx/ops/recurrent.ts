/**
 * ONNX RNN, GRU and LSTM unrolled over their (static) sequence length into matrix products
 * and pointwise IR ops, gate by gate as the ONNX operator definitions write them. A
 * sequence_lens input masks the steps past each batch entry's length (forward direction
 * only): the state holds and Y is zero there.
 */
import { isFloating } from '../../../ir/dtype';
import type { Value } from '../../../ir/graph';
import { isStatic } from '../../../ir/symbolic';
import { Tensor } from '../../../ir/tensor';
import type { OnnxContext, OnnxResult } from '../context';
import { defineOnnxOp } from '../registry';

type Kind = 'RNN' | 'GRU' | 'LSTM';
const GATES: Record<Kind, number> = { RNN: 1, GRU: 3, LSTM: 4 };
const DEFAULT_ACTIVATIONS: Record<Kind, string[]> = { RNN: ['Tanh'], GRU: ['Sigmoid', 'Tanh'], LSTM: ['Sigmoid', 'Tanh', 'Tanh'] };
const ACTIVATIONS: Record<string, string> = { Sigmoid: 'aten.sigmoid.default', Tanh: 'aten.tanh.default', Relu: 'aten.relu.default' };

function recurrent(ctx: OnnxContext, kind: Kind): OnnxResult[] {
  const layout = ctx.attrInt('layout', 0);
  let x = ctx.input(0);
  const dtype = x.tensorType.dtype;
  if (!isFloating(dtype)) ctx.unsupported(`only floating-point inputs are supported, got ${dtype}`);
  if (layout === 1) x = ctx.emit('aten.transpose.int', { self: x, dim0: 0, dim1: 1 });
  const [steps, batch] = x.tensorType.shape;
  if (x.tensorType.shape.length !== 3 || !isStatic(steps!)) ctx.unsupported('X must be 3-D with a static sequence length');
  const direction = ctx.attrString('direction', 'forward');
  if (!['forward', 'reverse', 'bidirectional'].includes(direction)) ctx.bad(`unknown direction ${JSON.stringify(direction)}`);
  const dirs = direction === 'bidirectional' ? 2 : 1;
  const hidden = ctx.attrInt('hidden_size');
  const g = GATES[kind];
  const names = ctx.attrStrings('activations', []);
  const perDir = DEFAULT_ACTIVATIONS[kind].length;
  const activations = names.length === 0 ? [...DEFAULT_ACTIVATIONS[kind], ...DEFAULT_ACTIVATIONS[kind]] : names;
  if (activations.length < perDir * dirs) ctx.bad(`activations must list ${perDir * dirs} functions`);
  if (ctx.has('activation_alpha') || ctx.has('activation_beta')) ctx.unsupported('activation_alpha/activation_beta are not supported');
  const targets = activations.map((a) => ACTIVATIONS[a] ?? ctx.unsupported(`activation ${a} is not supported (Sigmoid, Tanh and Relu are)`));
  const clip = ctx.has('clip') ? ctx.attrFloat('clip') : null;
  if (kind === 'LSTM' && ctx.attrInt('input_forget', 0) !== 0) ctx.unsupported('input_forget=1 is not supported');
  const linearBeforeReset = kind === 'GRU' && ctx.attrInt('linear_before_reset', 0) !== 0;

  const emit = ctx.emit.bind(ctx);
  const add = (a: Value, b: Value): Value => emit('aten.add.Tensor', { self: a, other: b });
  const mul = (a: Value, b: Value): Value => emit('aten.mul.Tensor', { self: a, other: b });
  const pick = (v: Value, dim: number, i: number): Value => emit('aten.select.int', { self: v, dim, index: i });
  const part = (v: Value, k: number): Value => emit('aten.slice.Tensor', { self: v, dim: -1, start: k * hidden, end: (k + 1) * hidden, step: 1 });
  const state = (i: number, d: number): Value | null => {
    if (!ctx.hasInput(i)) return null;
    const v = ctx.input(i);
    return pick(layout === 1 ? emit('aten.transpose.int', { self: v, dim0: 0, dim1: 1 }) : v, 0, d);
  };
  const zeros = ctx.constantValue(new Tensor(dtype, [1, hidden]), 'zeros');
  const lens = ctx.optInput(4);
  if (lens !== null && direction !== 'forward') ctx.unsupported('sequence_lens is supported in the forward direction only');
  const masks = lens === null ? null : Array.from({ length: steps as number }, (_, t) => ctx.cast(emit('aten.unsqueeze.default', { self: emit('aten.gt.Scalar', { self: lens, other: t }), dim: 1 }), dtype));

  const ys: Value[][] = [];
  const finals: Value[] = [];
  const cells: Value[] = [];
  for (let d = 0; d < dirs; d++) {
    const reverse = direction === 'reverse' || d === 1;
    const w = emit('aten.t.default', { self: pick(ctx.input(1), 0, d) });
    const r = emit('aten.t.default', { self: pick(ctx.input(2), 0, d) });
    const bias = ctx.hasInput(3) ? pick(ctx.input(3), 0, d) : null;
    const wb = bias === null ? null : emit('aten.slice.Tensor', { self: bias, dim: 0, start: 0, end: g * hidden, step: 1 });
    const rb = bias === null ? null : emit('aten.slice.Tensor', { self: bias, dim: 0, start: g * hidden, end: 2 * g * hidden, step: 1 });
    const peep = kind === 'LSTM' && ctx.hasInput(7) ? pick(ctx.input(7), 0, d) : null;
    const f = (k: number) => (v: Value): Value => emit(targets[d * perDir + k]!, { self: clip === null ? v : emit('aten.clamp.default', { self: v, min: -clip, max: clip }) });
    let h = state(5, d) ?? zeros;
    let c = kind === 'LSTM' ? (state(6, d) ?? zeros) : null;
    const out: Value[] = new Array<Value>(steps as number);
    for (let s = 0; s < (steps as number); s++) {
      const t = reverse ? (steps as number) - 1 - s : s;
      const xw = emit('aten.matmul.default', { self: pick(x, 0, t), other: w });
      const xg = wb === null ? xw : add(xw, wb);
      const hr = emit('aten.matmul.default', { self: h, other: r });
      const hg = rb === null ? hr : add(hr, rb);
      let next: Value;
      let nextC: Value | null = null;
      if (kind === 'RNN') {
        next = f(0)(add(xg, hg));
      } else if (kind === 'GRU') {
        const z = f(0)(add(part(xg, 0), part(hg, 0)));
        const reset = f(0)(add(part(xg, 1), part(hg, 1)));
        const candidate = linearBeforeReset
          ? add(part(xg, 2), mul(reset, part(hg, 2)))
          : (() => {
              const rh = emit('aten.matmul.default', { self: mul(reset, h), other: emit('aten.slice.Tensor', { self: r, dim: 1, start: 2 * hidden, end: 3 * hidden, step: 1 }) });
              return add(part(xg, 2), rb === null ? rh : add(rh, part(rb, 2)));
            })();
        const ht = f(1)(candidate);
        // (1 − z) ⊙ h̃ + z ⊙ H = h̃ + z ⊙ (H − h̃)
        next = add(ht, mul(z, emit('aten.sub.Tensor', { self: h, other: ht })));
      } else {
        const gate = (k: number, p: number, cell: Value): Value => {
          const pre = add(part(xg, k), part(hg, k));
          return peep === null ? pre : add(pre, mul(part(peep, p), cell));
        };
        const i = f(0)(gate(0, 0, c!));
        const fg = f(0)(gate(2, 2, c!));
        const cand = f(1)(add(part(xg, 3), part(hg, 3)));
        nextC = add(mul(fg, c!), mul(i, cand));
        const o = f(0)(gate(1, 1, nextC));
        next = mul(o, f(2)(nextC));
      }
      if (masks !== null) {
        const m = masks[t]!;
        const hold = (fresh: Value, old: Value): Value => add(old, mul(m, emit('aten.sub.Tensor', { self: fresh, other: old })));
        out[t] = mul(m, next);
        next = hold(next, h);
        if (nextC !== null) nextC = hold(nextC, c!);
      } else {
        out[t] = next;
      }
      h = next;
      c = nextC;
    }
    // A batch of 1 broadcast from the zero state: make Y_h [batch, hidden].
    const full = (v: Value): Value => emit('aten.expand.default', { self: v, size: [ctx.dimArg(batch!), hidden] });
    ys.push(out);
    finals.push(full(h));
    if (c !== null) cells.push(full(c));
  }
  const stack = (vs: Value[], dim: number): Value => emit('aten.stack.default', { tensors: vs, dim });
  // Y [T, dirs, B, H]; Y_h, Y_c [dirs, B, H] (layout 1: batch first).
  let y = stack(
    Array.from({ length: steps as number }, (_, t) => stack(ys.map((o) => o[t]!), 0)),
    0,
  );
  let yh = stack(finals, 0);
  let yc = cells.length > 0 ? stack(cells, 0) : null;
  if (layout === 1) {
    y = emit('aten.permute.default', { self: y, dims: [2, 0, 1, 3] });
    yh = emit('aten.transpose.int', { self: yh, dim0: 0, dim1: 1 });
    if (yc !== null) yc = emit('aten.transpose.int', { self: yc, dim0: 0, dim1: 1 });
  }
  return (yc === null ? [y, yh] : [y, yh, yc]).slice(0, Math.max(1, ctx.node.outputs.length));
}

for (const kind of ['RNN', 'GRU', 'LSTM'] as const) defineOnnxOp(kind, (ctx) => recurrent(ctx, kind));
