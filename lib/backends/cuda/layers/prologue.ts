/**
 * Row prologues: a pointwise producer of a row kernel's input computed as the row is loaded,
 * instead of in a map kernel of its own (a residual sum before BERT's LayerNorm, attention's
 * scale and mask before its softmax). The backend's fusion plan (../plan/fuse-pointwise.ts)
 * offers the producer's map launch in `ctx.prologue`; a lowering that can take it
 * ({@link rowPrologue}) reads the producer's operands where it would have read its input, and
 * applies the producer's per-element function, rounding to the intermediate's storage dtype as
 * a store would — the same bits as the two kernels. The block and thread forms take any such
 * producer; the warp form takes one whose operands it can read in its chunks, and otherwise
 * declines, and the producer then runs as its own launch.
 *
 * A stored prologue is one whose output later layers read too (Llama's residual sum, read by the
 * RMSNorm after it and by the next residual sum): the row kernel also writes the rounded values
 * it loads, where the producer would have, so the map launch and a read of the row go away.
 * Only a lowering that says it can (`canStore`) takes one.
 */
import { createHash } from 'node:crypto';

import type { KernelArg } from '../../../gpu/plan';
import { denseStrides, ptr, sameList, sameSlice } from './kernel';
import { renamedParam } from './map';
import { BYTES, DTYPES } from './prelude';
import { outerOffsets, prologueCall, splitRows, type RowPrologue, type WarpForm } from './rows';
import type { LoweringContext } from './types';

export { prologueCall, prologueLambda, type RowPrologue } from './rows';

/**
 * A prologue a lowering has taken: the kernel's description, and the operands' pointers (the
 * stored output's first, `px`, for a stored prologue), strides (over the input's box) and extra
 * arguments.
 */
export interface TakenPrologue {
  readonly prologue: RowPrologue;
  readonly pointers: readonly KernelArg[];
  readonly strides: ReadonlyArray<readonly number[]>;
  readonly extra: readonly KernelArg[];
}

/**
 * Takes the producer of input 0 offered in `ctx.prologue` for a row kernel over `ctx.inputs[0]`'s
 * own box reduced along `axes`, or null (and leaves it) where it does not fit: a raw producer,
 * or one over another box or not writing the input densely; and for the warp form (`form`), an
 * operand that neither walks the row nor stays on it, or one a chunk of `form.vector` elements
 * cannot be read from in one aligned access. A stored offer is taken only with `canStore`.
 */
export function rowPrologue(ctx: LoweringContext, axes: readonly number[], form: WarpForm | null, canStore = false): TakenPrologue | null {
  const offer = ctx.prologue;
  const x = ctx.inputs[0];
  if (offer === undefined || offer.input !== 0 || !x) return null;
  const stores = offer.store === true;
  if (stores && (!canStore || form === null)) return null;
  const info = offer.producer;
  if (info.spec.raw || !sameSlice(info.out.at, x.at) || !sameList(info.dims, x.shape) || !sameList(info.out.strides, denseStrides(x.shape))) return null;
  const split = splitRows(x.shape, axes, info.inputs.map((o) => o.strides));
  const walks: boolean[] = [];
  for (const [n, [outer, inner]] of split.strides.entries()) {
    // The block and thread forms read every operand at its own strides (prologueAt).
    if (form === null) {
      walks.push(inner.length === 1 && inner[0] === 1);
      continue;
    }
    if (inner.length !== 1 || (inner[0] !== 0 && inner[0] !== 1)) return null;
    const walk = inner[0] === 1;
    if (walk && form.vector > 1) {
      const bytes = BYTES[info.spec.inputs[n]!];
      if ((info.inputs[n]!.at.offset ?? 0) % (form.vector * bytes) !== 0) return null;
      if (outer.some((st, d) => split.outerDims[d] !== 1 && st % form.vector !== 0)) return null;
    }
    walks.push(walk);
  }
  offer.taken = true;
  return {
    prologue: { spec: info.spec, walks, stores },
    pointers: [...(stores ? [ptr(info.out.at)] : []), ...info.inputs.map((o) => ptr(o.at))],
    strides: info.inputs.map((o) => o.strides),
    extra: info.extra,
  };
}

/** The row-stride names of a prologue's operands (`p0`, `p1`, …), for rowParams; none without one. */
export const prologueNames = (p: RowPrologue | undefined): string[] => (p ? p.spec.inputs.map((_, n) => `p${n}`) : []);

/** The kernel-key part naming a prologue (hashed: a fused spec's key is long). */
export function prologueKey(p: RowPrologue): string {
  const text = `${p.spec.key}|${p.walks.map((w) => (w ? 1 : 0)).join('')}${p.stores ? '|stored' : ''}`;
  return `pro${createHash('sha256').update(text).digest('hex').slice(0, 16)}`;
}

/**
 * The kernel parameters a prologue adds in place of the input's pointer: where a stored one
 * writes its output (`px`), its operands' pointers, then its spec's extra parameters (prefixed `p_`).
 */
export function prologueParams(p: RowPrologue): string {
  const pointers = [...(p.stores ? [`${DTYPES[p.spec.output].storage}* px`] : []), ...p.spec.inputs.map((d, n) => `const ${DTYPES[d].storage}* p${n}`)];
  return [...pointers, ...(p.spec.extra ?? []).map((d) => renamedParam(d, 'p_').decl)].join(', ');
}

/**
 * C, inside the row loop: each operand's row pointer `pr<n>`, `base`, the offset of the row in
 * the tensor the kernel writes, and `off_<name>` for each of `others` (row tensors of the kernel's
 * own, such as a normalization's scale and bias). All through one strided_n: the outer index
 * divides once per outer dim, not once per tensor, which a short row cannot hide.
 */
export function prologueRows(p: RowPrologue, others: readonly string[] = []): string {
  const names = [...p.spec.inputs.map((_, n) => `p${n}`), 'x', ...others];
  return [
    outerOffsets(names),
    ...p.spec.inputs.map((d, n) => `const ${DTYPES[d].storage}* pr${n} = p${n} + off_p${n};`),
    'const i64 base = off_x;',
  ].join('\n    ');
}

/** C: the producer's value at inner index `j` of the row, each operand read at its own inner strides (the block and thread forms). */
export const prologueAt = (p: RowPrologue, j: string): string =>
  prologueCall(p, p.spec.inputs.map((d, n) => DTYPES[d].load(`pr${n}[row_at(${j}, irank, idims, i_p${n})]`)));
