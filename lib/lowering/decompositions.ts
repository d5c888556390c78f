/**
 * Decompositions: a table-driven pass that rewrites torch.export's default-IR forms (casts
 * spelled several ways, aliases of view/permute, identities such as eval-mode dropout) into
 * the core ops, so that later converters handle a smaller op set. A decomposition only
 * exists where it removes an op from what converters must handle; ops the op families
 * implement as core ops are kept (see DECOMPOSITIONS for the list and the canonical forms).
 *
 * Each entry builds its replacement through call() (so the new nodes are checked and typed),
 * the node's outputs are redirected with graph.replaceAllUses, new nodes are placed where the
 * old node was, and dead code is removed. Runs to a fixpoint (a rewrite may produce another
 * decomposable node: reshape → view → identity).
 */
import { BadModelError, InternalError, UnsupportedOpError } from '../errors';
import { composeEinsum, type EinsumBuilder } from '../ir/einsum';
import { call } from '../ir/builder';
import { isFloating, type DType } from '../ir/dtype';
import { Value, type Arg, type Graph, type Node } from '../ir/graph';
import { getOp } from '../ir/ops/registry';
import { SymMaterializer } from '../ir/sym-values';
import { formatDim, shapeEquals, symProduct, type Dim } from '../ir/symbolic';
import { readNumbers } from '../kernels/access';

export class DecompositionContext {
  constructor(
    readonly graph: Graph,
    readonly node: Node,
    private readonly sym: SymMaterializer,
    /** SymInt values defined before the node, by formatted expression (reused before new ones are built). */
    private readonly available: ReadonlyMap<string, Value> = new Map(),
  ) {}

  /** How the node is named in errors (keeps the frontend's provenance). */
  get where(): string {
    return typeof this.node.meta.where === 'string' ? this.node.meta.where : `node "${this.node.name}" (${this.node.target})`;
  }

  arg(name: string): Arg {
    return this.node.args[name] ?? null;
  }

  value(name: string): Value {
    const a = this.node.args[name];
    if (!(a instanceof Value)) throw new InternalError(`${this.where}: argument ${name} is not a value`);
    return a;
  }

  /** Whether the op is declared (a decomposition into an undeclared op must not apply). */
  has(target: string): boolean {
    return getOp(target) !== undefined;
  }

  /** Appends a call (the pass moves it to the decomposed node's place); keeps the node's provenance. */
  callNode(target: string, args: Readonly<Record<string, Arg>>, suffix = ''): Node {
    return call(this.graph, target, args, {
      name: `${this.node.name}${suffix}`,
      where: typeof this.node.meta.where === 'string' ? this.node.meta.where : undefined,
      meta: { ...this.node.meta, decomposedFrom: this.node.target },
    });
  }

  /** callNode for a single-output op: its value. */
  call(target: string, args: Readonly<Record<string, Arg>>, suffix = ''): Value {
    return this.callNode(target, args, suffix).output;
  }

  /** A SymInt argument for a dim: the number, an existing SymInt value, or a value computing it from the graph inputs. */
  dim(d: Dim): Value | number {
    if (typeof d === 'number') return d;
    return this.available.get(formatDim(d)) ?? this.sym.arg(d);
  }

  dims(ds: readonly Dim[]): (Value | number)[] {
    return ds.map((d) => this.dim(d));
  }

  /** `v` cast to `dtype` (itself when it already is). */
  cast(v: Value, dtype: DType | null): Value {
    if (dtype === null || v.tensorType.dtype === dtype) return v;
    return this.call('aten._to_copy.default', { self: v, dtype }, '_cast');
  }
}

/** Returns the values replacing the node's outputs, or null to keep the node as it is. */
export type Decomposition = (ctx: DecompositionContext) => Value[] | null;

const identity: Decomposition = (ctx) => [ctx.value('self')];

const castTo =
  (dtypeOf: (ctx: DecompositionContext) => DType | null): Decomposition =>
  (ctx) =>
    ctx.has('aten._to_copy.default') ? [ctx.cast(ctx.value('self'), dtypeOf(ctx))] : null;

const dtypeArg = (ctx: DecompositionContext): DType | null => (ctx.arg('dtype') as DType | null) ?? null;

/** `view(self, size)` with the output's inferred shape (no -1), or self when the shape is unchanged. */
function viewAs(ctx: DecompositionContext, self: Value, shape: readonly Dim[]): Value {
  if (shapeEquals(self.tensorType.shape, shape)) return self;
  return ctx.call('aten.view.default', { self, size: ctx.dims(shape) });
}

/** A reshape-like node → view.default of its inferred output shape (keeps SymInt values given as sizes). */
const toView =
  (sizeArg: string): Decomposition =>
  (ctx) => {
    if (!ctx.has('aten.view.default')) return null;
    const self = ctx.value('self');
    const out = ctx.node.output.tensorType.shape;
    if (shapeEquals(self.tensorType.shape, out)) return [self];
    const given = ctx.arg(sizeArg);
    if (ctx.node.target === 'aten.view.default' && !(Array.isArray(given) && given.includes(-1))) return null;
    // Reuse the given sizes (SymInt values included) where they are not -1.
    const size = Array.isArray(given) && given.length === out.length ? given.map((a, i) => (a === -1 ? ctx.dim(out[i]!) : a)) : ctx.dims(out);
    return [ctx.call('aten.view.default', { self, size })];
  };

/** meshgrid as a view and an expand per tensor (see the table entry). */
function meshgridAs(indexing: 'ij' | 'xy'): Decomposition {
  return (ctx) => {
    if (!ctx.has('aten.view.default') || !ctx.has('aten.expand.default')) return null;
    const tensors = ctx.node.args.tensors as Value[];
    const n = tensors.length;
    const grid = ctx.node.outputs[0]!.tensorType.shape;
    const at = (i: number): number => (indexing === 'xy' && n >= 2 && i < 2 ? 1 - i : i);
    return tensors.map((t, i) => {
      const along = grid.map((d, j) => (j === at(i) ? d : 1));
      const viewed = shapeEquals(t.tensorType.shape, along) ? t : ctx.call('aten.view.default', { self: t, size: ctx.dims(along) }, `_view${i}`);
      return shapeEquals(along, grid) ? viewed : ctx.call('aten.expand.default', { self: viewed, size: ctx.dims(grid) }, `_expand${i}`);
    });
  };
}

/** A view-like op (flatten, unflatten, squeeze...) → view of its inferred shape. */
const viewOfOutput: Decomposition = (ctx) => (ctx.has('aten.view.default') ? [viewAs(ctx, ctx.value('self'), ctx.node.output.tensorType.shape)] : null);

function permuteOf(ctx: DecompositionContext, self: Value, dims: number[]): Value[] | null {
  if (!ctx.has('aten.permute.default')) return null;
  if (dims.every((d, i) => d === i)) return [self];
  return [ctx.call('aten.permute.default', { self, dims })];
}

const norm = (axis: number, rank: number): number => (axis < 0 ? axis + rank : axis);

/** A fixed-length int list argument (`SymInt[2] stride=1` may hold one value for all). */
function listArg(ctx: DecompositionContext, name: string, n: number): Arg[] {
  const a = ctx.arg(name);
  return Array.isArray(a) ? (a.length === 1 && n > 1 ? new Array<Arg>(n).fill(a[0]!) : [...a]) : new Array<Arg>(n).fill(a);
}

/** convolution.default takes batched input only; conv2d also accepts an unbatched [C, H, W]. */
const batched = (ctx: DecompositionContext, n: number): boolean => ctx.value('input').tensorType.shape.length === n + 2;

/** The one convolution.default call the conv forms become; only padding and transposition differ. */
function convolution(ctx: DecompositionContext, n: number, padding: Arg[], transposed: boolean): Value[] {
  return [
    ctx.call('aten.convolution.default', {
      input: ctx.value('input'),
      weight: ctx.value('weight'),
      bias: ctx.arg('bias'),
      stride: listArg(ctx, 'stride', n),
      padding,
      dilation: listArg(ctx, 'dilation', n),
      transposed,
      output_padding: transposed ? listArg(ctx, 'output_padding', n) : new Array<number>(n).fill(0),
      groups: ctx.arg('groups'),
    }),
  ];
}

/** conv{1,2,3}d.default → convolution.default (transposed=False). */
const convNd =
  (n: number): Decomposition =>
  (ctx) =>
    ctx.has('aten.convolution.default') && batched(ctx, n) ? convolution(ctx, n, listArg(ctx, 'padding', n), false) : null;

/** conv{1,2,3}d.padding ("valid", or "same" when it pads both sides equally) → convolution.default. */
const convNdPadding =
  (n: number): Decomposition =>
  (ctx) => {
    if (!ctx.has('aten.convolution.default') || !batched(ctx, n)) return null;
    const dilation = listArg(ctx, 'dilation', n);
    const kernel = ctx.value('weight').tensorType.shape.slice(2);
    let padding: number[] = new Array<number>(n).fill(0);
    if (ctx.arg('padding') === 'same') {
      if (!kernel.every((k) => typeof k === 'number') || !dilation.every((d) => typeof d === 'number')) return null;
      const total = kernel.map((k, i) => (dilation[i] as number) * ((k as number) - 1));
      if (total.some((t) => t % 2 !== 0)) return null; // asymmetric: convolution cannot express it
      padding = total.map((t) => t / 2);
    }
    return convolution(ctx, n, padding, false);
  };

/** conv_transpose{1,2,3}d → convolution.default (transposed=True). */
const convTransposeNd =
  (n: number): Decomposition =>
  (ctx) =>
    ctx.has('aten.convolution.default') && batched(ctx, n) ? convolution(ctx, n, listArg(ctx, 'padding', n), true) : null;

const fillAsMaskedFill =
  (target: string): Decomposition =>
  (ctx) => {
    const self = ctx.value('self');
    const mask = ctx.call('aten.ones_like.default', { self, dtype: 'bool' }, '_mask');
    return [ctx.call(target, { self, mask, value: ctx.arg('value') })];
  };

const dropoutIdentity: Decomposition = (ctx) => (ctx.arg('train') === true && ctx.arg('p') !== 0 ? null : [ctx.value('input')]);

/** The number a one-element constant holds, or undefined (not a constant, or more elements). */
function oneElementConstant(v: Arg): number | undefined {
  if (!(v instanceof Value) || v.producer.kind !== 'constant') return undefined;
  const t = v.producer.tensor!;
  return t.size === 1 ? readNumbers(t)[0] : undefined;
}

/**
 * PyTorch's `.tensor` overloads of the per-tensor Q/DQ ops take their scale and zero point as
 * one-element tensors and call the `.default` op with their item()s
 * (torch/ao/quantization/fx/_decomposed.py): the `.default` op here too where both are
 * constants (convert_pt2e's static quantization), so the converters' per-tensor path takes it.
 * Scales computed at run time (dynamic quantization) stay: the interpreter runs them.
 */
const perTensorItems =
  (target: string): Decomposition =>
  (ctx) => {
    const scale = oneElementConstant(ctx.arg('scale'));
    const zeroPoint = oneElementConstant(ctx.arg('zero_point'));
    if (scale === undefined || zeroPoint === undefined) return null;
    return [ctx.call(target, { ...ctx.node.args, scale, zero_point: zeroPoint })];
  };

/**
 * The decomposition table: target → rewrite. Canonical forms: casts are `aten._to_copy.default`
 * (with a dtype; a cast to the same dtype is removed), reshapes are `aten.view.default`,
 * axis swaps are `aten.permute.default`, softmax is `aten._softmax.default`.
 */
export const DECOMPOSITIONS: Readonly<Record<string, Decomposition>> = {
  // Casts → _to_copy (device, layout and memory format do not matter to a functional graph).
  'aten.to.dtype': castTo(dtypeArg),
  'aten.to.dtype_layout': castTo(dtypeArg),
  'aten.to.device': castTo(dtypeArg),
  'aten.to.other': castTo((ctx) => ctx.value('other').tensorType.dtype),
  'aten.type_as.default': castTo((ctx) => ctx.value('other').tensorType.dtype),
  'aten._to_copy.default': (ctx) => {
    const dtype = dtypeArg(ctx);
    if (dtype === null || dtype === ctx.value('self').tensorType.dtype) return [ctx.value('self')];
    // Canonical: only the dtype (layout/device/memory format dropped).
    const extra = ['layout', 'device', 'pin_memory', 'memory_format'].some((k) => ctx.arg(k) !== null) || ctx.arg('non_blocking') === true;
    return extra ? [ctx.call('aten._to_copy.default', { self: ctx.value('self'), dtype })] : null;
  },

  // Identities in a functional, inference graph.
  // fill = masked_fill under an all-true mask (its converters and rewrites exist already).
  'aten.fill.Scalar': fillAsMaskedFill('aten.masked_fill.Scalar'),
  'aten.fill.Tensor': fillAsMaskedFill('aten.masked_fill.Tensor'),
  'aten.contiguous.default': identity,
  'aten.clone.default': identity,
  'aten.alias.default': identity,
  'aten.detach.default': identity,
  'aten.lift_fresh_copy.default': identity,
  'aten.dropout.default': dropoutIdentity,
  'aten.feature_dropout.default': dropoutIdentity,
  'aten.alpha_dropout.default': dropoutIdentity,
  'aten.feature_alpha_dropout.default': dropoutIdentity,
  // Covering slices and same-shape expands copy nothing.
  'aten.slice.Tensor': (ctx) =>
    ctx.arg('step') === 1 && shapeEquals(ctx.value('self').tensorType.shape, ctx.node.output.tensorType.shape) ? [ctx.value('self')] : null,
  'aten.expand.default': (ctx) => (shapeEquals(ctx.value('self').tensorType.shape, ctx.node.output.tensorType.shape) ? [ctx.value('self')] : null),

  // Reshapes → view.default.
  'aten.reshape.default': toView('shape'),
  'aten._unsafe_view.default': toView('size'),
  'aten.view.default': toView('size'),
  'aten.flatten.using_ints': viewOfOutput,
  'aten.unflatten.int': viewOfOutput,
  'aten.squeeze.default': viewOfOutput,
  'aten.squeeze.dim': viewOfOutput,
  'aten.squeeze.dims': viewOfOutput,
  'aten.unsqueeze.default': viewOfOutput,

  // Axis swaps → permute.default.
  'aten.transpose.int': (ctx) => {
    const self = ctx.value('self');
    const rank = self.tensorType.shape.length;
    if (rank === 0) return [self];
    const a = norm(ctx.arg('dim0') as number, rank);
    const b = norm(ctx.arg('dim1') as number, rank);
    const dims = [...Array(rank).keys()];
    dims[a] = b;
    dims[b] = a;
    return permuteOf(ctx, self, dims);
  },
  // swapaxes / swapdims: NumPy's names for transpose.
  'aten.swapaxes.default': (ctx) => [ctx.call('aten.transpose.int', { self: ctx.value('self'), dim0: ctx.arg('axis0'), dim1: ctx.arg('axis1') })],
  'aten.swapdims.default': (ctx) => [ctx.call('aten.transpose.int', { self: ctx.value('self'), dim0: ctx.arg('dim0'), dim1: ctx.arg('dim1') })],
  'aten.t.default': (ctx) => {
    const self = ctx.value('self');
    return self.tensorType.shape.length < 2 ? [self] : permuteOf(ctx, self, [1, 0]);
  },

  'aten.numpy_T.default': (ctx) => {
    const self = ctx.value('self');
    return permuteOf(ctx, self, self.tensorType.shape.map((_, i) => self.tensorType.shape.length - 1 - i));
  },

  // baddbmm(self, b1, b2, beta, alpha) = alpha * bmm(b1, b2) + beta * self; beta 0 ignores self
  // (NaN included), as PyTorch does. Float only: a float alpha on integers would promote.
  'aten.baddbmm.default': (ctx) => {
    const { beta, alpha } = ctx.node.args;
    const self = ctx.value('self');
    if (typeof beta !== 'number' || typeof alpha !== 'number' || !isFloating(self.tensorType.dtype) || !ctx.has('aten.bmm.default')) return null;
    let product = ctx.call('aten.bmm.default', { self: ctx.value('batch1'), mat2: ctx.value('batch2') }, '_bmm');
    if (alpha !== 1) product = ctx.call('aten.mul.Scalar', { self: product, other: alpha }, '_alpha');
    if (beta === 0) return [product];
    const bias = beta === 1 ? self : ctx.call('aten.mul.Scalar', { self, other: beta }, '_beta');
    return [ctx.call('aten.add.Tensor', { self: product, other: bias, alpha: 1 }, '_add')];
  },

  // copy(self, src): src broadcast to self's shape, in self's dtype (the functional form of an
  // in-place copy_, which the .pt2 importer writes back to what self named).
  'aten.copy.default': (ctx) => {
    if (!ctx.has('aten.expand.default')) return null;
    const self = ctx.value('self');
    const src = ctx.cast(ctx.value('src'), self.tensorType.dtype);
    if (shapeEquals(src.tensorType.shape, self.tensorType.shape)) return [src];
    return [ctx.call('aten.expand.default', { self: src, size: ctx.dims(self.tensorType.shape) }, '_expand')];
  },

  // meshgrid: each tensor viewed along its grid dim, then expanded over the grid (the node's
  // output shape; "xy" swaps the first two dims).
  'aten.meshgrid.default': meshgridAs('ij'),
  'aten.meshgrid.indexing': (ctx) => meshgridAs(ctx.node.args.indexing === 'xy' ? 'xy' : 'ij')(ctx),

  // expand_as(self, other) = expand(self, other.shape).
  'aten.expand_as.default': (ctx) =>
    ctx.has('aten.expand.default') ? [ctx.call('aten.expand.default', { self: ctx.value('self'), size: ctx.dims(ctx.value('other').tensorType.shape) })] : null,

  // softmax.int(self, dim, dtype) = _softmax(self.to(dtype), dim, half_to_float=False).
  'aten.softmax.int': (ctx) =>
    ctx.has('aten._softmax.default')
      ? [ctx.call('aten._softmax.default', { self: ctx.cast(ctx.value('self'), dtypeArg(ctx)), dim: ctx.arg('dim'), half_to_float: false })]
      : null,
  'aten.log_softmax.int': (ctx) =>
    ctx.has('aten._log_softmax.default')
      ? [ctx.call('aten._log_softmax.default', { self: ctx.cast(ctx.value('self'), dtypeArg(ctx)), dim: ctx.arg('dim'), half_to_float: false })]
      : null,

  // Convolutions → convolution.default.
  'aten.conv1d.default': convNd(1),
  'aten.conv2d.default': convNd(2),
  'aten.conv3d.default': convNd(3),
  'aten.conv1d.padding': convNdPadding(1),
  'aten.conv2d.padding': convNdPadding(2),
  'aten.conv3d.padding': convNdPadding(3),
  'aten.conv_transpose1d.default': convTransposeNd(1),
  'aten.conv_transpose2d.input': convTransposeNd(2),
  'aten.conv_transpose3d.input': convTransposeNd(3),

  // Normalizations → their native (core ATen) forms, first output.
  'aten.batch_norm.default': (ctx) => {
    const mean = ctx.arg('running_mean');
    const variance = ctx.arg('running_var');
    if (ctx.arg('training') === true || !(mean instanceof Value) || !(variance instanceof Value)) return null;
    if (!ctx.has('aten._native_batch_norm_legit_no_training.default')) return null;
    const n = ctx.callNode('aten._native_batch_norm_legit_no_training.default', {
      input: ctx.value('input'),
      weight: ctx.arg('weight'),
      bias: ctx.arg('bias'),
      running_mean: mean,
      running_var: variance,
      momentum: ctx.arg('momentum'),
      eps: ctx.arg('eps'),
    });
    return [n.outputs[0]!];
  },
  'aten.layer_norm.default': (ctx) => {
    if (!ctx.has('aten.native_layer_norm.default')) return null;
    const n = ctx.callNode('aten.native_layer_norm.default', {
      input: ctx.value('input'),
      normalized_shape: ctx.arg('normalized_shape'),
      weight: ctx.arg('weight'),
      bias: ctx.arg('bias'),
      eps: ctx.arg('eps'),
    });
    return [n.outputs[0]!];
  },
  'aten.group_norm.default': (ctx) => {
    if (!ctx.has('aten.native_group_norm.default')) return null;
    const input = ctx.value('input');
    const shape = input.tensorType.shape;
    if (shape.length < 2) return null;
    const n = ctx.callNode('aten.native_group_norm.default', {
      input,
      weight: ctx.arg('weight'),
      bias: ctx.arg('bias'),
      N: ctx.dim(shape[0]!),
      C: ctx.dim(shape[1]!),
      HxW: ctx.dim(symProduct(shape.slice(2))),
      group: ctx.arg('num_groups'),
      eps: ctx.arg('eps'),
    });
    return [n.outputs[0]!];
  },

  // Pooling aliases.
  'aten.adaptive_avg_pool2d.default': (ctx) =>
    ctx.has('aten._adaptive_avg_pool2d.default')
      ? [ctx.call('aten._adaptive_avg_pool2d.default', { self: ctx.value('self'), output_size: listArg(ctx, 'output_size', 2) })]
      : null,
  'aten.adaptive_avg_pool3d.default': (ctx) =>
    ctx.has('aten._adaptive_avg_pool3d.default')
      ? [ctx.call('aten._adaptive_avg_pool3d.default', { self: ctx.value('self'), output_size: listArg(ctx, 'output_size', 3) })]
      : null,
  ...Object.fromEntries(
    [1, 2, 3].map((n): [string, Decomposition] => [
      `aten.max_pool${n}d.default`,
      (ctx) => {
        const target = `aten.max_pool${n}d_with_indices.default`;
        if (!ctx.has(target)) return null;
        const args = { ...ctx.node.args } as Record<string, Arg>;
        return [ctx.callNode(target, args).outputs[0]!];
      },
    ]),
  ),

  // One-sided clamps → clamp.
  'aten.clamp_min.default': (ctx) => [ctx.call('aten.clamp.default', { self: ctx.value('self'), min: ctx.arg('min'), max: null })],
  'aten.clamp_max.default': (ctx) => [ctx.call('aten.clamp.default', { self: ctx.value('self'), min: null, max: ctx.arg('max') })],
  'aten.clamp_min.Tensor': (ctx) => [ctx.call('aten.clamp.Tensor', { self: ctx.value('self'), min: ctx.arg('min'), max: null })],
  'aten.clamp_max.Tensor': (ctx) => [ctx.call('aten.clamp.Tensor', { self: ctx.value('self'), min: null, max: ctx.arg('max') })],

  // Constant fills → full / full_like (the default dtype made explicit: full(size, 0) alone would be int64).
  'aten.zeros.default': (ctx) => fill(ctx, 'aten.full.default', 0),
  'aten.ones.default': (ctx) => fill(ctx, 'aten.full.default', 1),
  'aten.zeros_like.default': (ctx) => fill(ctx, 'aten.full_like.default', 0),
  'aten.ones_like.default': (ctx) => fill(ctx, 'aten.full_like.default', 1),

  // diff(self, n, dim, prepend, append) = n times (x[1:] - x[:-1]) along dim of cat(prepend, self,
  // append); xor for bool.
  'aten.diff.default': (ctx) => {
    const self = ctx.value('self');
    const dim = norm(ctx.arg('dim') as number, self.tensorType.shape.length);
    const parts = [ctx.arg('prepend'), self, ctx.arg('append')].filter((v): v is Value => v instanceof Value);
    let x = parts.length === 1 ? self : ctx.call('aten.cat.default', { tensors: parts, dim }, '_joined');
    for (let k = 0; k < (ctx.arg('n') as number); k++) {
      const next = ctx.call('aten.slice.Tensor', { self: x, dim, start: 1, end: null, step: 1 }, `_next${k}`);
      const prev = ctx.call('aten.slice.Tensor', { self: x, dim, start: 0, end: -1, step: 1 }, `_prev${k}`);
      x = self.tensorType.dtype === 'bool' ? ctx.call('aten.logical_xor.default', { self: next, other: prev }, `_${k}`) : ctx.call('aten.sub.Tensor', { self: next, other: prev, alpha: 1 }, `_${k}`);
    }
    return [x];
  },

  // einsum → permutes, unsqueezes, a product and a sum (lib/ir/einsum.ts).
  'aten.einsum.default': (ctx) => {
    const fail = (message: string): never => {
      throw new BadModelError(`${ctx.where}: ${message}`, { details: { op: 'aten.einsum.default' } });
    };
    const builder: EinsumBuilder<Value> = {
      emit: (target, args) => ctx.call(target, args as Record<string, Arg>),
      constant: (t, hint) => ctx.graph.addConstant(ctx.graph.uniqueName(`${ctx.node.name}_${hint}`), t),
      shape: (v) => v.tensorType.shape,
      dtype: (v) => v.tensorType.dtype,
      cast: (v, dtype) => ctx.cast(v, dtype),
      bad: fail,
      unsupported: (message) => {
        throw new UnsupportedOpError(`${ctx.where}: ${message}`, { details: { op: 'aten.einsum.default' } });
      },
    };
    return [composeEinsum(builder, ctx.arg('equation') as string, (ctx.arg('tensors') as Value[]) ?? [])];
  },

  // zero (what an in-place zero_ becomes) = full_like(self, 0).
  'aten.zero.default': (ctx) => fill(ctx, 'aten.full_like.default', 0),

  // & | ^ of bool tensors = logical and/or/xor (the declarations take bool only).
  ...Object.fromEntries(
    (['and', 'or', 'xor'] as const).flatMap((op) =>
      [`aten.__${op}__.Tensor`, `aten.bitwise_${op}.Tensor`].map((target): [string, Decomposition] => [
        target,
        (ctx) => [ctx.call(`aten.logical_${op}.default`, { self: ctx.value('self'), other: ctx.value('other') })],
      ]),
    ),
  ),

  'quantized_decomposed.quantize_per_tensor.tensor': perTensorItems('quantized_decomposed.quantize_per_tensor.default'),
  'quantized_decomposed.dequantize_per_tensor.tensor': perTensorItems('quantized_decomposed.dequantize_per_tensor.default'),

  // narrow(dim, start, length) = slice(dim, start, start + length).
  'aten.narrow.default': (ctx) => {
    const start = ctx.arg('start');
    const length = ctx.arg('length');
    const end = typeof start === 'number' && typeof length === 'number' ? start + length : ctx.call('sym.add', { a: start, b: length }, '_end');
    return [ctx.call('aten.slice.Tensor', { self: ctx.value('self'), dim: ctx.arg('dim'), start, end, step: 1 })];
  },
};

function fill(ctx: DecompositionContext, target: 'aten.full.default' | 'aten.full_like.default', value: number): Value[] | null {
  if (!ctx.has(target)) return null;
  const args: Record<string, Arg> = { ...ctx.node.args, fill_value: value };
  if (target === 'aten.full.default') args.dtype = ctx.arg('dtype') ?? 'float32';
  else args.dtype = ctx.arg('dtype') ?? ctx.value('self').tensorType.dtype;
  return [ctx.call(target, args)];
}

/** Moves the nodes appended since `start` to just before `anchor` (keeps topological order). */
function placeBefore(graph: Graph, start: number, anchor: Node): void {
  const added = graph.nodes.splice(start);
  if (added.length === 0) return;
  const at = graph.nodes.indexOf(anchor);
  graph.nodes.splice(at, 0, ...added);
}

/**
 * Rewrites every node whose target has an entry in `table` (default DECOMPOSITIONS) until none
 * applies, then removes dead code. Returns how many nodes were rewritten.
 */
export function decompose(graph: Graph, table: Readonly<Record<string, Decomposition>> = DECOMPOSITIONS): number {
  let total = 0;
  const declined = new Set<Node>();
  for (let round = 0; round < 16; round++) {
    const sym = new SymMaterializer(graph);
    for (const v of graph.inputs) sym.addSources(v);
    let changed = 0;
    const available = new Map<string, Value>();
    for (const node of [...graph.nodes]) {
      const rule = node.kind === 'call' && !declined.has(node) ? table[node.target] : undefined;
      if (rule === undefined) {
        for (const v of node.outputs) if (v.type.kind === 'symint' && !available.has(formatDim(v.type.expr))) available.set(formatDim(v.type.expr), v);
        continue;
      }
      const start = graph.nodes.length;
      let replacement: Value[] | null;
      try {
        replacement = rule(new DecompositionContext(graph, node, sym, available));
      } catch (error) {
        // A size no graph input carries cannot be rebuilt: keep the node.
        if (error instanceof InternalError && /carries symbol/.test(error.message)) {
          graph.nodes.splice(start);
          declined.add(node);
          continue;
        }
        throw error;
      }
      if (replacement === null) {
        graph.nodes.splice(start); // nothing should have been added, but never leave strays
        declined.add(node);
        continue;
      }
      if (replacement.length !== node.outputs.length) {
        throw new InternalError(`decomposition of ${node.target} gave ${replacement.length} values for ${node.outputs.length} outputs`);
      }
      const added = new Set(graph.nodes.slice(start));
      placeBefore(graph, start, node);
      node.outputs.forEach((v, i) => {
        const r = replacement![i]!;
        if (r === v) return;
        graph.replaceAllUses(v, r);
        // The new node takes over the old one's name (`view_3` stays `view_3` after reshape → view).
        if (added.has(r.producer) && r.producer.outputs.length === 1 && v.type.kind === r.type.kind) {
          [v.name, r.name] = [r.name, v.name];
          [node.name, r.producer.name] = [r.producer.name, node.name];
          added.delete(r.producer);
        }
      });
      for (const n of added) for (const v of n.outputs) if (v.type.kind === 'symint') available.set(formatDim(v.type.expr), v);
      changed++;
    }
    graph.eliminateDeadCode();
    total += changed;
    if (changed === 0) break;
  }
  return total;
}
