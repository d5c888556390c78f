/**
 * Pointwise fusion: a pointwise layer whose only reader is a pointwise layer or a copy
 * (bias add → ReLU, residual add → ReLU, the pieces of a decomposed GELU or SiLU, the products
 * of a complex multiply, a bias add → the heads' transpose) runs inside that reader's kernel
 * instead of writing its output to memory and launching again. Two parts:
 *
 * - {@link planPointwiseFusion} (before the memory plan) picks the producer → consumer pairs
 *   from the layers alone; the producer's inputs must then stay live until the consumer runs,
 *   since its work moves there.
 * - {@link fuseMaps} (while lowering) joins the two map launches (../layers/map.ts) into one
 *   kernel whose per-element function calls the producer's, rounds its result to the
 *   intermediate's storage dtype exactly as the store and load between two kernels would, and
 *   passes it to the consumer's: the fused kernel computes bit for bit what the two did. The
 *   producer's operands are re-expressed over the consumer's box ({@link throughDense}), so the
 *   consumer may read the intermediate broadcast, permuted or reshaped. When the two cannot be
 *   joined, nothing is fused and both run as before — the intermediate still has its memory,
 *   so that is always correct.
 *
 * Views are the other half: a slice inside its input or a transpose lowers to a strided copy,
 * and when every reader of its output is a map, the readers read the copy's source through
 * composed strides instead ({@link planViews}, {@link readThrough}): the copy never runs.
 * RoPE's complex multiply reads each half of q and k, and of the frequencies, this way.
 *
 * Kernel source depends on the two specs only (never on dims), as every lowering's must.
 */
import { createHash } from 'node:crypto';

import type { Layer } from '../../../network';
import { tensorReaders } from '../../../network/live-layers';
import type { BufferSlice, KernelArg } from '../../../gpu/plan';
import type { KernelLaunch } from '../layers';
import { denseStrides, sameList, sameSlice, volume } from '../layers/kernel';
import { coalesce, isCopy, mapOpParams, mapSpecLaunch, renamedParam, type MapLaunchInfo, type MapOperand, type MapSpec } from '../layers/map';
import { BYTES, DTYPES } from '../layers/prelude';

/** Layer kinds whose lowering is one map launch (../layers/pointwise.ts). */
const POINTWISE = new Set(['elementwise', 'unary', 'activation', 'cast', 'select']);
/**
 * Layer kinds that lower to strided copies (../layers/data.ts): a transpose, a slice inside its
 * input, one copy per concatenated input. A pointwise producer computes in the copy's place,
 * writing where the copy would (a bias add writes its heads transposed, a RoPE half its slot of
 * the pair); a view is read through by a copy as by any map.
 */
const COPIES = new Set(['shuffle', 'slice', 'concat']);
/** Whether a layer of `kind` reads its inputs as a map does (pointwise, or a copy): a view of its input can be read through by it. */
export const readsAsMap = (kind: string): boolean => POINTWISE.has(kind) || COPIES.has(kind);

/** Row layers whose kernels take a pointwise producer of their data input as a prologue (../layers/prologue.ts). */
const ROWS = new Set(['softmax', 'normalization', 'reduce']);

export interface TensorFacts {
  shape: readonly number[];
  /** An intermediate of the arena (not a network input or output, a constant or a host value). */
  intermediate: boolean;
}

export interface FusionOptions {
  /** Layers that only reinterpret their input's bytes (a reshape the memory plan lays onto its input): fusion looks through them. */
  reinterprets?: (position: number) => boolean;
  /** Layers whose copy may never run (planViews): not fusion consumers, since their readers read their source. */
  views?: ReadonlyMap<number, readonly number[]>;
}

/**
 * Producer → consumer pairs to fuse, as device-layer positions: a pointwise producer with one
 * output, an intermediate, read by exactly one device layer (through any reshapes that only
 * reinterpret its bytes), which is pointwise, a copy, or a row kernel reading it as its data
 * input only. A view (whose copy may never run) is no consumer; when one copy alone reads the
 * view, that copy is, reading the producer's output through the view (an input's cast into the
 * concat that widens its channels). A consumer may take several producers
 * (re = ar·br − ai·bi takes both products), and chains (a → b → c) fuse link by link. Whether
 * the consumer reads the intermediate element for element, broadcast or permuted is settled
 * while lowering ({@link fuseMaps}), where a pair that cannot fuse runs as two launches. Pure.
 */
export function planPointwiseFusion(layers: readonly Layer[], tensor: (id: number) => TensorFacts, options: FusionOptions = {}): Map<number, number> {
  const readers = tensorReaders(layers);
  const into = new Map<number, number>();
  /** The one layer reading `id`, through reinterpreting layers, and the tensor it reads; or undefined. */
  const onlyReader = (id: number): { j: number; read: number } | undefined => {
    const r = new Set(readers.get(id));
    if (r.size !== 1) return undefined;
    const j = [...r][0]!;
    const layer = layers[j]!;
    if (options.reinterprets?.(j) !== true || layer.outputs.length !== 1) return { j, read: id };
    const out = layer.outputs[0]!;
    return tensor(out).intermediate ? onlyReader(out) : undefined;
  };
  layers.forEach((layer, i) => {
    if (!POINTWISE.has(layer.params.kind) || layer.outputs.length !== 1) return;
    if (!tensor(layer.outputs[0]!).intermediate) return;
    // One reader layer (which may read it in several slots, as x·x does).
    let reader = onlyReader(layer.outputs[0]!);
    if (reader === undefined || reader.j <= i) return;
    const behind = options.views?.get(reader.j);
    if (behind !== undefined) {
      // A view read by one copy (an input's transpose read by the concat that widens it): the
      // copy reads the producer's output through the view, so the producer can compute in the
      // copy's place. Behind a view read by maps the producer stays a launch.
      const only = behind.length === 1 ? layers[behind[0]!]! : undefined;
      if (only === undefined || !COPIES.has(only.params.kind) || options.views?.has(behind[0]!) === true) return;
      reader = { j: behind[0]!, read: layer.outputs[0]! };
    }
    const consumer = layers[reader.j]!;
    if (consumer.outputs.length !== 1) return;
    const kind = consumer.params.kind;
    // A row kernel computes it while loading its data input (../layers/prologue.ts), read there only.
    const prologue = ROWS.has(kind) && consumer.inputs.every((t, k) => (t === reader.read) === (k === 0));
    if (POINTWISE.has(kind) || COPIES.has(kind) || (prologue && behind === undefined)) into.set(i, reader.j);
  });
  return into;
}

/** Row layers whose kernels also store a prologue's output (../layers/prologue.ts): later layers read it. */
const STORING_ROWS = new Set(['normalization']);

/**
 * Producer → row consumer pairs for stored prologues, as device-layer positions: a pointwise
 * producer with one output, an intermediate, not fused otherwise (`into`), read by several
 * layers the first of which is a normalization reading it as its data input only. The row
 * kernel computes the producer while loading its row and also writes the output there, so the
 * producer's launch, and one read of the row, go away (Llama's residual sum before each RMSNorm,
 * read again by the next residual sum). The later readers run after the row kernel, so the
 * output is in memory when they read it. Pure.
 */
export function planStoredPrologues(layers: readonly Layer[], tensor: (id: number) => TensorFacts, into: ReadonlyMap<number, number>): Map<number, number> {
  const readers = tensorReaders(layers);
  const stored = new Map<number, number>();
  layers.forEach((layer, i) => {
    if (into.has(i) || !POINTWISE.has(layer.params.kind) || layer.outputs.length !== 1) return;
    const out = layer.outputs[0]!;
    if (!tensor(out).intermediate) return;
    const r = [...new Set(readers.get(out))].sort((a, b) => a - b);
    if (r.length < 2 || r[0]! <= i) return;
    const row = layers[r[0]!]!;
    if (!STORING_ROWS.has(row.params.kind) || row.outputs.length !== 1) return;
    if (row.inputs.every((t, k) => (t === out) === (k === 0))) stored.set(i, r[0]!);
  });
  return stored;
}

/** The device-layer position each layer's inputs must stay live until: its fusion chain's last consumer. */
export function fusionChainEnds(into: ReadonlyMap<number, number>, count: number): number[] {
  const end = Array.from({ length: count }, (_, i) => i);
  for (let i = count - 1; i >= 0; i--) {
    const j = into.get(i);
    if (j !== undefined) end[i] = end[j]!;
  }
  return end;
}

/** Layer kinds that may lower to one strided copy (../layers/data.ts): a slice inside its input, a transpose. */
const VIEWS = new Set(['slice', 'shuffle']);

/**
 * Views whose copy may never run: a slice or shuffle with one output, an intermediate, whose
 * readers are all maps (pointwise layers or copies) or reshapes laid onto its bytes
 * (`reinterprets`, themselves listed when all their readers are), by device-layer position of
 * the view → its readers' positions. While lowering, a reader whose reads of the view
 * {@link throughDense} can compose reads the view's source instead ({@link readThrough}): a
 * RoPE product reads the halves of q and the broadcast halves of the frequencies, a transpose
 * reads a repeated key through its expand. The copy runs only if some reader cannot
 * (lower-instance.ts). The view's inputs must stay live until its last reader (or that reader's
 * fusion chain end, or, where the reader is a view itself, its readers'). Pure.
 */
export function planViews(layers: readonly Layer[], tensor: (id: number) => TensorFacts, reinterprets: (position: number) => boolean = () => false): Map<number, number[]> {
  const readers = tensorReaders(layers);
  const views = new Map<number, number[]>();
  // From the last layer back, so a reinterpreting reader's own readers are settled first.
  for (let i = layers.length - 1; i >= 0; i--) {
    const layer = layers[i]!;
    if (!(VIEWS.has(layer.params.kind) || reinterprets(i)) || layer.outputs.length !== 1) continue;
    const out = layer.outputs[0]!;
    const r = [...new Set(readers.get(out))].sort((a, b) => a - b);
    if (!tensor(out).intermediate || r.length === 0) continue;
    const readable = (j: number): boolean => {
      const reader = layers[j]!;
      if (j <= i || reader.outputs.length !== 1) return false;
      return reinterprets(j) ? views.has(j) : readsAsMap(reader.params.kind);
    };
    if (r.every(readable)) views.set(i, r);
  }
  return new Map([...views].sort((a, b) => a[0] - b[0]));
}

/**
 * Strides over the box `dims` of an operand read at `operand` strides over the box `inner`, for
 * a reader that walks `dims` at `strides` through a tensor laid out densely over `inner`; or null
 * when that walk is not a strided walk of `inner`'s elements. Each dim of the walk must step
 * whole elements of one dim of `inner` (t = m·D[i], D the dense strides) without carrying into
 * the next: then the element reached is Σ digit_i·D[i] with every digit below inner[i], and the
 * operand is at Σ digit_i·operand[i]. That covers reading element for element, broadcast
 * (stride 0), permuted, and through a reshape that splits or merges dims. Pure.
 */
export function throughDense(dims: readonly number[], strides: readonly number[], inner: readonly number[], operand: readonly number[]): number[] | null {
  return throughDenseFrom(dims, strides, inner, operand, 0)?.strides ?? null;
}

/**
 * {@link throughDense} for a walk that starts `start` elements into the dense tensor and may
 * step backwards (a negative stride): the start splits into digits over `inner`, and every digit
 * must stay in [0, inner[i]) at both ends of the walk. The operand's walk starts `offset`
 * elements from its own start. A RoPE half read from q's slot of a wide projection (start 1,
 * stride −1 over the pairs) reads this way. Pure.
 */
export function throughDenseFrom(
  dims: readonly number[],
  strides: readonly number[],
  inner: readonly number[],
  operand: readonly number[],
  start: number,
): { strides: number[]; offset: number } | null {
  if (strides.length !== dims.length || operand.length !== inner.length) return null;
  const dense = denseStrides(inner);
  if (!Number.isInteger(start) || start < 0 || (start > 0 && start >= dense[0]! * inner[0]!)) return null;
  const digits = inner.map((n, i) => Math.floor(start / dense[i]!) % n);
  const up = inner.map(() => 0);
  const down = inner.map(() => 0);
  const out: number[] = [];
  for (let j = 0; j < dims.length; j++) {
    const t = strides[j]!;
    if (dims[j] === 1 || t === 0) {
      out.push(0);
      continue;
    }
    const size = Math.abs(t);
    if (!Number.isInteger(t)) return null;
    const i = inner.findIndex((n, k) => n > 1 && dense[k]! <= size && size < dense[k]! * n);
    if (i < 0 || size % dense[i]! !== 0) return null;
    const m = t / dense[i]!;
    if (m > 0) up[i] += m * (dims[j]! - 1);
    else down[i] -= m * (dims[j]! - 1);
    out.push(m * operand[i]!);
  }
  if (!digits.every((d, i) => d + up[i]! < inner[i]! && d - down[i]! >= 0)) return null;
  return { strides: out, offset: digits.reduce((sum, d, i) => sum + d * operand[i]!, 0) };
}

/**
 * The extents each dim of the box `dims` splits into (outer first) so that every resulting dim
 * walks, at `strides`, within one dim of a tensor laid out densely over `inner` (as
 * {@link throughDense} needs); or null. A dim splits where its walk carries into the next dim of
 * `inner` at a whole number of steps: the heads of a GQA repeat (a dim of 4 walking a repeat of
 * 2 and 2 kv heads), or RoPE's pairs merged into the head dim (64 pairs of 2 read as 128). Pure.
 */
export function splitForDense(dims: readonly number[], strides: readonly number[], inner: readonly number[]): number[][] | null {
  const dense = denseStrides(inner);
  const within = (t: number): number => inner.findIndex((n, k) => n > 1 && dense[k]! <= t && t < dense[k]! * n);
  const parts: number[][] = [];
  for (let j = 0; j < dims.length; j++) {
    let rest = dims[j]!;
    let t = strides[j]!;
    const split: number[] = [];
    while (rest > 1 && t !== 0) {
      const i = within(Math.abs(t));
      if (!Number.isInteger(t) || i < 0 || t % dense[i]! !== 0) return null;
      const m = Math.abs(t) / dense[i]!;
      if (m * (rest - 1) < inner[i]!) break;
      // A backward walk that carries is not split (throughDenseFrom then refuses it).
      if (t < 0) return null;
      // Whole runs of dim i: k steps of m each fill it, then the walk carries into the next dim.
      const k = inner[i]! / m;
      if (!Number.isInteger(k) || rest % k !== 0) return null;
      split.unshift(k);
      rest /= k;
      t *= k;
    }
    parts.push([rest, ...split]);
  }
  return parts;
}

/** Strides over the box refined by `parts` ({@link splitForDense}) of an operand at `strides` over the original box. */
export const refinedStrides = (strides: readonly number[], parts: readonly number[][]): number[] =>
  strides.flatMap((s, j) => parts[j]!.map((_, r) => s * parts[j]!.slice(r + 1).reduce((a, n) => a * n, 1)));

/** A refined box the map kernel can still walk: at most 8 dims once coalesced. */
function walkable(dims: readonly number[], operands: ReadonlyArray<readonly number[]>): boolean {
  return coalesce(dims, operands).dims.length <= 8;
}

/**
 * `consumer` reading `source` (an operand over the view's box `dims`, `bytes` a element) wherever
 * it read the view at `view`, or null when some read of the view is not a strided walk of it
 * (then the copy must run). A read may start inside the view (a slice of it at an offset, even
 * stepping backwards): it then reads the source from the element that offset reaches. The kernel
 * is the consumer's: only operands change.
 */
export function readThrough(consumer: MapLaunchInfo, view: BufferSlice, dims: readonly number[], source: MapOperand, bytes: number): KernelLaunch[] | null {
  const base = view.offset ?? 0;
  const end = base + volume(dims) * bytes;
  // Element offsets into the view of the operands that read it (null: not a read of the view).
  // A read inside the view in another element size or off its elements cannot be re-expressed (NaN: the copy runs).
  const starts = consumer.inputs.map((x, k) => {
    const at = x.at.offset ?? 0;
    if (x.at.buffer !== view.buffer || at < base || at >= end) return null;
    return BYTES[consumer.spec.inputs[k]!] === bytes && (at - base) % bytes === 0 ? (at - base) / bytes : Number.NaN;
  });
  const positions = starts.flatMap((e, k) => (e === null ? [] : [k]));
  if (positions.length === 0 || positions.some((k) => Number.isNaN(starts[k]))) return null;
  // Split the box where a read from the view's start carries; a read from inside it or backwards must not need to.
  const parts = splitForDense(consumer.dims, consumer.inputs[positions[0]!]!.strides, dims);
  if (parts === null) return null;
  const split = parts.some((p) => p.length > 1);
  const box = parts.flat();
  const inputs: MapOperand[] = [];
  for (const [k, x] of consumer.inputs.entries()) {
    const refined = refinedStrides(x.strides, parts);
    const start = starts[k];
    if (start === null || start === undefined) {
      inputs.push({ at: x.at, strides: refined });
      continue;
    }
    if (split && (start !== 0 || refined.some((t) => t < 0))) return null;
    const through = throughDenseFrom(box, refined, dims, source.strides, start);
    if (through === null) return null;
    const at = (source.at.offset ?? 0) + through.offset * bytes;
    if (at < 0) return null;
    inputs.push({ at: { ...source.at, offset: at }, strides: through.strides });
  }
  const out = { at: consumer.out.at, strides: refinedStrides(consumer.out.strides, parts) };
  if (!walkable(box, [out.strides, ...inputs.map((x) => x.strides)])) return null;
  return mapSpecLaunch(consumer.spec, box, out, inputs, consumer.extra);
}

/** A key short enough for a file name, stable for the same two specs and operand positions. */
function fusedKey(a: MapSpec, positions: readonly number[], b: MapSpec): string {
  const text = `fused(${a.key}>${positions.join('.')}>${b.key})`;
  return text.length <= 96 ? text : `fused.${createHash('sha256').update(text).digest('hex').slice(0, 24)}`;
}

/**
 * One launch computing `consumer` with `producer`'s output (`intermediate`) computed in place,
 * or null when the two cannot be joined: a raw producer, an intermediate the producer does not
 * write densely, or one the consumer reads in two different ways or other than as a strided walk
 * ({@link throughDense}). The producer's operands are re-expressed over the consumer's box, so
 * the consumer may read the intermediate broadcast (an RMSNorm's 1/rms over its row), permuted or
 * reshaped (a bias add read by the heads' transpose). A consumer that only copies (a transpose,
 * a concat's block) runs the producer's own kernel, writing where the copy would.
 */
export function fuseMaps(producer: MapLaunchInfo, consumer: MapLaunchInfo, intermediate: BufferSlice): KernelLaunch[] | null {
  const a = producer.spec;
  const b = consumer.spec;
  if (a.raw || !sameSlice(producer.out.at, intermediate) || !sameList(producer.out.strides, denseStrides(producer.dims))) return null;
  const positions = consumer.inputs.flatMap((x, k) => (sameSlice(x.at, intermediate) ? [k] : []));
  if (positions.length === 0) return null;
  const read = consumer.inputs[positions[0]!]!.strides;
  if (positions.some((k) => !sameList(consumer.inputs[k]!.strides, read))) return null;
  const parts = splitForDense(consumer.dims, read, producer.dims);
  if (parts === null) return null;
  const box = parts.flat();
  const operands: MapOperand[] = [];
  for (const x of producer.inputs) {
    const strides = throughDense(box, refinedStrides(read, parts), producer.dims, x.strides);
    if (strides === null) return null;
    operands.push({ at: x.at, strides });
  }
  const out = { at: consumer.out.at, strides: refinedStrides(consumer.out.strides, parts) };
  const others = consumer.inputs.map((x) => ({ at: x.at, strides: refinedStrides(x.strides, parts) }));
  if (!walkable(box, [out.strides, ...operands.map((x) => x.strides), ...others.map((x) => x.strides)])) return null;
  if (isCopy(consumer)) return mapSpecLaunch(a, box, out, operands, producer.extra);
  if (b.raw) return null;

  const rest = consumer.inputs.map((_, k) => k).filter((k) => !positions.includes(k));
  const aExtra = (a.extra ?? []).map((d) => renamedParam(d, 'p_'));
  const bExtra = (b.extra ?? []).map((d) => renamedParam(d, 'c_'));
  const mid = DTYPES[a.output];
  const aArgs = [...a.inputs.map((_, k) => `x${k}`), ...aExtra.map((e) => e.name)];
  const bArgs = [...b.inputs.map((_, k) => (positions.includes(k) ? 'mid' : `x${a.inputs.length + rest.indexOf(k)}`)), ...bExtra.map((e) => e.name)];
  const body = `  auto producer = [&](${mapOpParams(a)}) -> ${mid.compute} {
${a.body}
  };
  auto consumer = [&](${mapOpParams(b)}) -> ${DTYPES[b.output].compute} {
${b.body}
  };
  // Rounded to the intermediate's storage and back, as a store and a load would.
  ${mid.compute} mid = ${mid.load(mid.store(`producer(${aArgs.join(', ')})`))};
  return consumer(${bArgs.join(', ')});`;
  const spec: MapSpec = {
    key: fusedKey(a, positions, b),
    inputs: [...a.inputs, ...rest.map((k) => b.inputs[k]!)],
    output: b.output,
    body,
    extra: [...aExtra.map((e) => e.decl), ...bExtra.map((e) => e.decl)],
  };
  const extra: KernelArg[] = [...producer.extra, ...consumer.extra];
  return mapSpecLaunch(spec, box, out, [...operands, ...rest.map((k) => others[k]!)], extra);
}
