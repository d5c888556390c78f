/**
 * Pointwise fusion: a pointwise layer whose only reader is another pointwise layer over the
 * same box (bias add → ReLU, residual add → ReLU, the pieces of a decomposed GELU or SiLU)
 * runs inside that reader's kernel instead of writing its output to memory and launching
 * again. Two parts:
 *
 * - {@link planPointwiseFusion} (before the memory plan) picks the producer → consumer pairs
 *   from the layers alone; the producer's inputs must then stay live until the consumer runs,
 *   since its work moves there.
 * - {@link fuseMaps} (while lowering) joins the two map launches (lowering/map.ts) into one
 *   kernel whose per-element function calls the producer's, rounds its result to the
 *   intermediate's storage dtype exactly as the store and load between two kernels would, and
 *   passes it to the consumer's: the fused kernel computes bit for bit what the two did.
 *   When either launch is not a plain map (or the boxes differ), nothing is fused and both run
 *   as before — the intermediate still has its memory, so that is always correct.
 *
 * Views are the other half: a slice inside its input or a transpose lowers to a strided copy,
 * and when every reader of its output is a pointwise map over the same box, the readers read
 * the copy's source through its strides instead ({@link planViews}, {@link readThrough}): the
 * copy never runs. RoPE's complex multiply reads each half of q and k this way.
 *
 * Kernel source depends on the two specs only (never on dims), as every lowering's must.
 */
import { createHash } from 'node:crypto';

import type { Layer } from '../../network';
import { tensorReaders } from '../../network/live-layers';
import type { BufferSlice, KernelArg } from '../../gpu/plan';
import type { KernelLaunch } from './lowering';
import { denseStrides } from './lowering/kernel';
import { mapSpecLaunch, type MapLaunchInfo, type MapOperand, type MapSpec } from './lowering/map';
import { DTYPES } from './lowering/prelude';

/** Layer kinds whose lowering is one map launch (lowering/pointwise.ts). */
const POINTWISE = new Set(['elementwise', 'unary', 'activation', 'cast']);

export interface TensorFacts {
  shape: readonly number[];
  /** An intermediate of the arena (not a network input or output, a constant or a host value). */
  intermediate: boolean;
}

/**
 * Producer → consumer pairs to fuse, as device-layer positions: a pointwise producer with one
 * output, read by exactly one device layer, a pointwise consumer whose output has the
 * intermediate's shape (so the intermediate is read element for element, never broadcast).
 * A consumer takes at most one producer; chains (a → b → c) fuse link by link. Pure.
 */
export function planPointwiseFusion(layers: readonly Layer[], tensor: (id: number) => TensorFacts): Map<number, number> {
  const readers = tensorReaders(layers);
  const into = new Map<number, number>();
  const taken = new Set<number>();
  layers.forEach((layer, i) => {
    if (!POINTWISE.has(layer.params.kind) || layer.outputs.length !== 1) return;
    const out = layer.outputs[0]!;
    const facts = tensor(out);
    // One reader layer (which may read it in several slots, as x·x does).
    const r = new Set(readers.get(out));
    if (!facts.intermediate || r.size !== 1) return;
    const j = [...r][0]!;
    const consumer = layers[j]!;
    if (j <= i || taken.has(j) || !POINTWISE.has(consumer.params.kind) || consumer.outputs.length !== 1) return;
    if (tensor(consumer.outputs[0]!).shape.join() !== facts.shape.join()) return;
    into.set(i, j);
    taken.add(j);
  });
  return into;
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

/** Layer kinds that may lower to one strided copy (lowering/data.ts): a slice inside its input, a transpose. */
const VIEWS = new Set(['slice', 'shuffle']);

/**
 * Views whose copy may never run: a slice or shuffle with one output, an intermediate, whose
 * readers are all pointwise layers with outputs of the view's own shape (each reads it element
 * for element), by device-layer position of the view → its readers' positions. While lowering,
 * a reader whose launch is a map reads the view's source through the copy's strides instead
 * ({@link readThrough}); the copy runs only if some reader cannot (lower-instance.ts). The view's
 * inputs must stay live until its last reader (or that reader's fusion chain end). Pure.
 */
export function planViews(layers: readonly Layer[], tensor: (id: number) => TensorFacts): Map<number, number[]> {
  const readers = tensorReaders(layers);
  const views = new Map<number, number[]>();
  layers.forEach((layer, i) => {
    if (!VIEWS.has(layer.params.kind) || layer.outputs.length !== 1) return;
    const out = layer.outputs[0]!;
    const facts = tensor(out);
    const r = [...new Set(readers.get(out))].sort((a, b) => a - b);
    if (!facts.intermediate || r.length === 0) return;
    const readable = (j: number): boolean =>
      j > i && POINTWISE.has(layers[j]!.params.kind) && layers[j]!.outputs.length === 1 && tensor(layers[j]!.outputs[0]!).shape.join() === facts.shape.join();
    if (r.every(readable)) views.set(i, r);
  });
  return views;
}

/**
 * `consumer` reading `source` (an operand over the view's box `dims`) wherever it read the
 * view at `view`, or null when it reads the view other than element for element over the
 * same box (then the copy must run). The kernel is the consumer's: only operands change.
 */
export function readThrough(consumer: MapLaunchInfo, view: BufferSlice, dims: readonly number[], source: MapOperand): KernelLaunch[] | null {
  if (!sameList(consumer.dims, dims)) return null;
  const dense = denseStrides(dims);
  const positions = consumer.inputs.flatMap((x, k) => (sameSlice(x.at, view) ? [k] : []));
  if (positions.length === 0 || positions.some((k) => !sameList(consumer.inputs[k]!.strides, dense))) return null;
  return mapSpecLaunch(consumer.spec, consumer.dims, consumer.out, consumer.inputs.map((x, k) => (positions.includes(k) ? source : x)), consumer.extra);
}

const sameSlice = (a: BufferSlice, b: BufferSlice): boolean => a.buffer === b.buffer && (a.offset ?? 0) === (b.offset ?? 0);
const sameList = (a: readonly number[], b: readonly number[]): boolean => a.length === b.length && a.every((v, i) => v === b[i]);

/** `decl` ("float alpha") with its name prefixed. */
function renamed(decl: string, prefix: string): { decl: string; name: string } {
  const name = decl.trim().split(/\s+/).pop()!;
  return { decl: `${decl.trim().slice(0, -name.length)}${prefix}${name}`, name: `${prefix}${name}` };
}

/** The parameter list mapKernel gives a spec's per-element function. */
const opParams = (spec: MapSpec): string => [...spec.inputs.map((d, k) => `${DTYPES[d].compute} x${k}`), ...(spec.extra ?? [])].join(', ');

/** A key short enough for a file name, stable for the same two specs and operand positions. */
function fusedKey(a: MapSpec, positions: readonly number[], b: MapSpec): string {
  const text = `fused(${a.key}>${positions.join('.')}>${b.key})`;
  return text.length <= 96 ? text : `fused.${createHash('sha256').update(text).digest('hex').slice(0, 24)}`;
}

/**
 * One launch computing `consumer` with `producer`'s output (`intermediate`) computed in place,
 * or null when the two cannot be joined (a raw map, different boxes, the intermediate read
 * through strides other than the consumer's own).
 */
export function fuseMaps(producer: MapLaunchInfo, consumer: MapLaunchInfo, intermediate: BufferSlice): KernelLaunch[] | null {
  const a = producer.spec;
  const b = consumer.spec;
  if (a.raw || b.raw || !sameList(producer.dims, consumer.dims) || !sameSlice(producer.out.at, intermediate)) return null;
  if (!sameList(producer.out.strides, consumer.out.strides)) return null;
  const positions = consumer.inputs.flatMap((x, k) => (sameSlice(x.at, intermediate) ? [k] : []));
  if (positions.length === 0 || positions.some((k) => !sameList(consumer.inputs[k]!.strides, consumer.out.strides))) return null;

  const rest = consumer.inputs.map((_, k) => k).filter((k) => !positions.includes(k));
  const aExtra = (a.extra ?? []).map((d) => renamed(d, 'p_'));
  const bExtra = (b.extra ?? []).map((d) => renamed(d, 'c_'));
  const mid = DTYPES[a.output];
  const aArgs = [...a.inputs.map((_, k) => `x${k}`), ...aExtra.map((e) => e.name)];
  const bArgs = [...b.inputs.map((_, k) => (positions.includes(k) ? 'mid' : `x${a.inputs.length + rest.indexOf(k)}`)), ...bExtra.map((e) => e.name)];
  const body = `  auto producer = [&](${opParams(a)}) -> ${mid.compute} {
${a.body}
  };
  auto consumer = [&](${opParams(b)}) -> ${DTYPES[b.output].compute} {
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
  return mapSpecLaunch(spec, consumer.dims, consumer.out, [...producer.inputs, ...rest.map((k) => consumer.inputs[k]!)], extra);
}
