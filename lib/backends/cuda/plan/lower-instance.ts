/**
 * An instantiated network (instantiate.ts) with its memory plan (memory-plan.ts) turned into
 * lowered steps: every device layer's tensors are bound to buffer slices and handed to the
 * layer lowerings (../layers/index.ts), one layer at a time.
 *
 * The plan's buffers, by index (what ../run/runner.ts binds them to):
 *   0 the arena (intermediates, then one scratch region every layer reuses in turn: layers run
 *     one after the other on one stream, so scratch never needs two owners at once),
 *   1 the weights (uploaded once per engine),
 *   2 the host values the device needs (uploaded once per instantiation),
 *   3… the network inputs, then the network outputs, in network order,
 *   then, when a layer registered a run-time check, the status word (./run-checks.ts).
 * Pure: `lower` is a parameter so tests drive this with a fake lowering.
 */
import { InternalError } from '../../../errors';
import { dtypeInfo } from '../../../ir/dtype';
import type { BufferSlice, KernelArg } from '../../../gpu/plan';
import type { Layer, Network } from '../../../network';
import type { Tensor } from '../../../ir/tensor';
import type { Instance } from './instantiate';
import { fuseMaps, fusionChainEnds, planPointwiseFusion, planStoredPrologues, planViews, readThrough, type TensorFacts } from './fuse-pointwise';
import { lowerLayer, type BoundTensor, type KernelLaunch, type LoweredStep, type LoweringContext } from '../layers';
import { denseStrides, sameList, sameSlice } from '../layers/kernel';
import { isCopy, mapLaunchInfo, type MapLaunchInfo } from '../layers/map';
import { mergeRowBlocks } from '../layers/row-blocks';
import { alignUp, planMemory, type MemoryRequest } from './memory-plan';
import { clearStatus, type RunCheck } from './run-checks';

export const ARENA_BUFFER = 0;
export const WEIGHTS_BUFFER = 1;
export const VALUES_BUFFER = 2;
export const FIRST_IO_BUFFER = 3;

export type LayerLowerer = (ctx: LoweringContext) => LoweredStep[];

/** Where each weight tensor of the engine lives in the weights buffer. */
export type WeightLocator = (tensor: Tensor, layer: Layer) => BufferSlice;

/** The layer a plan step was lowered from. */
export interface StepLayer {
  readonly name: string;
  readonly kind: string;
  /**
   * The bytes the layer (or fused layers) must read and write at least, once each: its inputs'
   * and outputs' sizes. Set only where the layer lowered to this one step, so that a profile
   * can state the step's achieved bandwidth; never for a gather (it reads only the rows it picks).
   */
  readonly bytes?: number;
}

export interface LoweredInstance {
  /** Every step, in order (each layer's steps, then copies of host-known outputs). */
  readonly steps: readonly LoweredStep[];
  /** The layer each step belongs to (parallel to `steps`): what a profile reports. */
  readonly stepLayers: ReadonlyArray<StepLayer>;
  /** The arena's size: intermediates plus the largest scratch any layer asked for. */
  readonly arenaBytes: number;
  /** The bytes of buffer 2 (host values the device reads), ready to upload. */
  readonly values: Uint8Array;
  /** Every tensor the plan touches, bound (by tensor id). */
  readonly bound: ReadonlyArray<BoundTensor | undefined>;
  /** Buffer index of each network input and output, by name. */
  readonly inputBuffers: ReadonlyMap<string, number>;
  readonly outputBuffers: ReadonlyMap<string, number>;
  /** Tensors that share their donor's bytes (in-place reuse). */
  readonly aliases: ReadonlyMap<number, number>;
  /** The run-time checks the layers registered (code k is checks[k - 1]); empty: the plan has no status word. */
  readonly checks: readonly RunCheck[];
  /** The buffer index of the status word (the one after the I/O buffers), used when `checks` is not empty. */
  readonly statusBuffer: number;
}


/** A fused producer's launch, held until its consumer (a device-layer position) is lowered. */
interface Waiting {
  consumer: number;
  /** A stored prologue: the consumer also writes the output, which later layers read. */
  store: boolean;
  launch: KernelLaunch;
  info: MapLaunchInfo;
  name: string;
  kind: string;
  output: BufferSlice;
  outputId: number;
  touched: ReadonlySet<number>;
}

/**
 * `lowered` with every map launch that reads `at` (or, given `extent`, anywhere in its first
 * `extent` bytes) replaced by `rewrite`'s launches, or null when one of them cannot be rewritten,
 * a step is not a map launch (its reads are not known), or no step reads `at` (the layer reads it
 * otherwise: a reshape laid onto its bytes reads it later).
 */
function rewriteReads(lowered: readonly LoweredStep[], at: BufferSlice, rewrite: (info: MapLaunchInfo) => KernelLaunch[] | null, extent = 0): LoweredStep[] | null {
  const out: LoweredStep[] = [];
  let read = false;
  const base = at.offset ?? 0;
  const reads = (x: BufferSlice): boolean => sameSlice(x, at) || (x.buffer === at.buffer && (x.offset ?? 0) >= base && (x.offset ?? 0) < base + extent);
  for (const step of lowered) {
    const info = mapLaunchInfo(step);
    if (info === undefined) return null;
    if (!info.inputs.some((x) => reads(x.at))) {
      out.push(step);
      continue;
    }
    const replaced = rewrite(info);
    if (replaced === null) return null;
    out.push(...replaced);
    read = true;
  }
  return read ? out : null;
}

export const byteSize = (t: { dtype: string; shape: readonly number[] }): number =>
  t.shape.reduce((a, d) => a * d, dtypeInfo(t.dtype as Tensor['dtype']).itemBytes);

/** The input of a layer that only reinterprets its bytes (identity without a cast, a reshape without transposes). */
function reinterpretedInput(layer: Layer, instance: Instance): number | undefined {
  const p = layer.params;
  const plain = (perm: readonly number[] | undefined): boolean => perm === undefined || perm.every((v, i) => v === i);
  const pure = p.kind === 'identity' || (p.kind === 'shuffle' && plain(p.firstTranspose) && plain(p.secondTranspose));
  const input = layer.inputs[0];
  if (!pure || input === null || input === undefined) return undefined;
  return instance.tensors[input]?.dtype === instance.tensors[layer.outputs[0]!]?.dtype ? input : undefined;
}

function encodeValue(dtype: string, value: readonly number[]): Uint8Array {
  if (dtype === 'int64') return new Uint8Array(BigInt64Array.from(value, (v) => BigInt(v)).buffer);
  if (dtype === 'int32') return new Uint8Array(Int32Array.from(value).buffer);
  // Bool shape tensors (a comparison of size lists) are one byte each on the device, 0 or 1.
  if (dtype === 'bool') return Uint8Array.from(value, (v) => (v ? 1 : 0));
  throw new InternalError(`cuda backend: a host value of dtype ${dtype} cannot be uploaded`);
}

/** Lowers every device layer of `instance`; `lower` defaults to the real lowerings. */
export function lowerInstance(
  network: Network,
  instance: Instance,
  weight: WeightLocator,
  lower: LayerLowerer = lowerLayer,
  options: { tf32?: boolean; fuse?: boolean } = {},
): LoweredInstance {
  const bound = new Array<BoundTensor | undefined>(network.tensors.length);
  const bind = (id: number, at: BufferSlice): void => {
    const t = instance.tensors[id]!;
    bound[id] = { dtype: t.dtype, shape: t.shape, at };
  };
  const inputBuffers = new Map<string, number>();
  const outputBuffers = new Map<string, number>();
  let next = FIRST_IO_BUFFER;
  for (const input of network.inputs) {
    inputBuffers.set(input.name, next);
    bind(input.tensor, { buffer: next++, offset: 0 });
  }
  const extraOutputs: Array<{ id: number; buffer: number }> = [];
  for (const output of network.outputs) {
    outputBuffers.set(output.name, next);
    if (bound[output.tensor] === undefined && !instance.uploads.includes(output.tensor)) bind(output.tensor, { buffer: next, offset: 0 });
    else extraOutputs.push({ id: output.tensor, buffer: next });
    next++;
  }

  // Host values the device reads: packed into buffer 2.
  let valuesBytes = 0;
  const valueParts: Array<{ offset: number; bytes: Uint8Array }> = [];
  for (const id of instance.uploads) {
    const t = instance.tensors[id]!;
    const bytes = encodeValue(t.dtype, t.value!);
    valueParts.push({ offset: valuesBytes, bytes });
    bind(id, { buffer: VALUES_BUFFER, offset: valuesBytes });
    valuesBytes = alignUp(valuesBytes + bytes.byteLength);
  }
  const values = new Uint8Array(valuesBytes);
  for (const part of valueParts) values.set(part.bytes, part.offset);

  // Constants are already on the device, in the weights buffer (uploaded once at load, never
  // written): their consumers read them there, and the constant layer's copy onto itself is
  // dropped by assemble(), instead of copying every constant into the arena on every run.
  const constants = new Map<number, Tensor>();
  for (const layer of instance.deviceLayers) {
    const p = layer.params;
    const id = layer.outputs[0]!;
    if (p.kind !== 'constant' || p.weights.dtype !== instance.tensors[id]!.dtype) continue;
    constants.set(id, p.weights);
    if (bound[id] === undefined) bind(id, weight(p.weights, layer));
  }
  const statusBuffer = next;
  const checks: RunCheck[] = [];

  // A reshape or identity of something the plan never writes (a weight, a host value) reads
  // it where it is: its copy onto the same slice is dropped by assemble(), where it would
  // otherwise copy the weight into the arena on every run.
  for (const layer of instance.deviceLayers) {
    const donor = reinterpretedInput(layer, instance);
    const out = layer.outputs[0]!;
    const at = donor === undefined ? undefined : bound[donor]?.at;
    if (at !== undefined && bound[out] === undefined && (at.buffer === WEIGHTS_BUFFER || at.buffer === VALUES_BUFFER)) bind(out, at);
  }

  // Slices and transposes whose readers read through them, and pointwise producers that run
  // inside their reader's kernel (fuse-pointwise.ts). A view's inputs are read where its last
  // reader runs: that reader's fusion chain's end, or, for a view read by a view, its readers'.
  const facts = (id: number): TensorFacts => ({ shape: instance.tensors[id]!.shape, intermediate: bound[id] === undefined });
  const fuse = options.fuse !== false;
  const reinterprets = (position: number): boolean => reinterpretedInput(instance.deviceLayers[position]!, instance) !== undefined;
  const views = fuse ? planViews(instance.deviceLayers, facts, reinterprets) : new Map<number, number[]>();
  const fuseInto = fuse ? planPointwiseFusion(instance.deviceLayers, facts, { reinterprets, views }) : new Map<number, number>();
  // Producers a normalization computes while loading its row and also stores (later layers read them).
  const storeInto = fuse ? planStoredPrologues(instance.deviceLayers, facts, fuseInto) : new Map<number, number>();
  const chainEnd = fusionChainEnds(new Map([...fuseInto, ...storeInto]), instance.deviceLayers.length);
  const readEnd = [...chainEnd];
  for (let i = readEnd.length - 1; i >= 0; i--) for (const j of views.get(i) ?? []) readEnd[i] = Math.max(readEnd[i]!, readEnd[j]!);

  // Liveness of the intermediates, in device-layer steps; a fused producer's inputs are read
  // where its chain's last consumer runs.
  const first = new Map<number, number>();
  const last = new Map<number, number>();
  instance.deviceLayers.forEach((layer, step) => {
    for (const id of layer.outputs) if (bound[id] === undefined) first.set(id, step);
    for (const id of layer.outputs) if (first.has(id)) last.set(id, Math.max(last.get(id) ?? step, step));
    for (const id of layer.inputs) if (id !== null && first.has(id)) last.set(id, Math.max(last.get(id) ?? step, readEnd[step]!));
  });
  const requests: MemoryRequest[] = [];
  instance.deviceLayers.forEach((layer) => {
    const donor = reinterpretedInput(layer, instance);
    for (const id of layer.outputs) {
      if (!first.has(id)) continue;
      const request: MemoryRequest = { id, bytes: byteSize(instance.tensors[id]!), first: first.get(id)!, last: last.get(id)! };
      requests.push(donor !== undefined && first.has(donor) ? { ...request, reuse: donor } : request);
    }
  });
  const memory = planMemory(requests);
  for (const [id, offset] of memory.offsets) bind(id, { buffer: ARENA_BUFFER, offset });

  const scratchBase = memory.arenaBytes;
  let scratchBytes = 0;
  const steps: LoweredStep[] = [];
  const stepLayers: StepLayer[] = [];
  // Views not copied yet, by output tensor id: each reader reads through them while it can.
  // `touched`: the tensors the step reads or writes (a fused step: both layers', less the intermediate).
  const pendingViews = new Map<number, { launch: KernelLaunch; info: MapLaunchInfo; name: string; kind: string; touched: ReadonlySet<number> }>();
  // Fused producers waiting for their consumer, by the tensor they write.
  const waiting = new Map<number, Waiting>();
  const emit = (lowered: readonly LoweredStep[], name: string, kind: string, touched: ReadonlySet<number>): void => {
    steps.push(...lowered);
    // A gather reads only the rows it picks, so its table's size is no lower bound.
    const bytes = kind === 'gather' ? undefined : [...touched].reduce((sum, id) => sum + byteSize(instance.tensors[id]!), 0);
    for (let i = 0; i < lowered.length; i++) stepLayers.push(lowered.length === 1 && bytes !== undefined ? { name, kind, bytes } : { name, kind });
  };
  /** A held producer runs as its own launch, now. */
  const release = (id: number): void => {
    const w = waiting.get(id)!;
    waiting.delete(id);
    emit([w.launch], w.name, w.kind, w.touched);
  };
  for (const [position, layer] of instance.deviceLayers.entries()) {
    let used = 0;
    // A producer of the data input, offered to a row kernel to compute while loading it.
    const data = layer.inputs[0];
    const offered = data === null || data === undefined ? undefined : [...waiting.values()].find((w) => w.consumer === position && sameSlice(w.output, bound[data]!.at));
    const prologue = offered === undefined ? undefined : { producer: offered.info, input: 0, store: offered.store, taken: false };
    const ctx: LoweringContext = {
      prologue,
      layer,
      inputs: layer.inputs.map((id) => (id === null ? null : bound[id]!)),
      outputs: layer.outputs.map((id) => bound[id]!),
      values: layer.inputs.map((id) => (id === null ? undefined : instance.tensors[id]!.value)),
      tf32: options.tf32 === true,
      scratch(bytes: number): BufferSlice {
        if (!Number.isSafeInteger(bytes) || bytes < 0) throw new InternalError(`cuda backend: layer "${layer.name}" asked for ${bytes} bytes of scratch`);
        const at = { buffer: ARENA_BUFFER, offset: scratchBase + used };
        used = alignUp(used + Math.max(bytes, 1));
        scratchBytes = Math.max(scratchBytes, used);
        return at;
      },
      weight: (tensor) => weight(tensor, layer),
      constants: layer.inputs.map((id) => (id === null ? undefined : constants.get(id))),
      check(what: string): KernelArg[] {
        checks.push({ layer: layer.name, kind: layer.params.kind, what });
        return [{ pointer: { buffer: statusBuffer, offset: 0 } }, { scalar: 'u32', value: checks.length }];
      },
    };
    let lowered = lower(ctx);
    let name = layer.name;
    let touched = new Set([...layer.inputs, ...layer.outputs].filter((id): id is number => id !== null && instance.tensors[id] !== undefined));
    const names = [layer.name];
    if (offered !== undefined && prologue?.taken === true) {
      waiting.delete(offered.outputId);
      names.unshift(offered.name);
      touched = new Set([...offered.touched, ...touched].filter((t) => offered.store || t !== offered.outputId));
    }
    const inputs = new Set(layer.inputs.filter((id): id is number => id !== null));

    // A producer waiting for another layer, read here: it runs now, unless this layer only lays
    // a reshape onto the producer's bytes (its copy onto itself is dropped), or is a view whose
    // reader computes the producer (held: it runs below if the view is copied here after all).
    const heldForView: number[] = [];
    for (const id of inputs) {
      const w = waiting.get(id);
      if (w === undefined || w.consumer === position) continue;
      const out = layer.outputs[0];
      if (reinterprets(position) && out !== undefined && sameSlice(bound[out]!.at, w.output)) continue;
      if (views.get(position)?.includes(w.consumer) === true) heldForView.push(id);
      else release(id);
    }

    for (const id of inputs) {
      const view = pendingViews.get(id);
      if (view === undefined) continue;
      const out = layer.outputs[0];
      if (lowered.length === 0 && reinterprets(position) && out !== undefined && sameSlice(bound[out]!.at, bound[id]!.at)) {
        // A reshape laid onto the view's bytes: its readers walk the same dense bytes, so they
        // read through the view as its own readers would.
        pendingViews.set(out, view);
        continue;
      }
      // A reader may read the view from inside it (a slice of it at an offset): any read within its bytes counts.
      const through = rewriteReads(lowered, bound[id]!.at, (info) => readThrough(info, bound[id]!.at, view.info.dims, view.info.inputs[0]!, dtypeInfo(instance.tensors[id]!.dtype).itemBytes), byteSize(instance.tensors[id]!));
      if (through === null) {
        // The copy reads the view's source: a producer held for a reader behind the view runs first.
        for (const wid of [...waiting.keys()].filter((wid) => view.touched.has(wid))) release(wid);
        emit([view.launch], view.name, view.kind, view.touched);
        for (const [key, v] of pendingViews) if (v === view) pendingViews.delete(key);
      } else {
        lowered = through;
        touched.delete(id);
        for (const t of view.touched) if (t !== id) touched.add(t);
      }
    }

    const viewInfo = views.has(position) && lowered.length === 1 ? mapLaunchInfo(lowered[0]!) : undefined;
    const viewShape = instance.tensors[layer.outputs[0]!]?.shape ?? [];
    if (viewInfo !== undefined && isCopy(viewInfo) && sameList(viewInfo.dims, viewShape) && sameList(viewInfo.out.strides, denseStrides(viewShape))) {
      // Its readers read its source instead; the copy runs only before a reader that cannot.
      pendingViews.set(layer.outputs[0]!, { launch: lowered[0] as KernelLaunch, info: viewInfo, name, kind: layer.params.kind, touched });
      continue;
    }
    // The view's copy runs here (its lowering is not one dense copy): what it reads must be written first.
    for (const id of heldForView) release(id);

    // Producers computed inside this layer's launches, in their order; one that cannot join runs first.
    for (const [id, w] of [...waiting].filter(([, w]) => w.consumer === position)) {
      waiting.delete(id);
      // A stored prologue not taken writes its output for later readers: it runs first, as is.
      const fused = w.store ? null : rewriteReads(lowered, w.output, (info) => fuseMaps(w.info, info, w.output));
      if (fused === null) emit([w.launch], w.name, w.kind, w.touched);
      else {
        lowered = fused;
        names.splice(names.length - 1, 0, w.name);
        // The producer's output never reaches memory: the fused kernel keeps it in registers.
        touched = new Set([...w.touched, ...touched].filter((t) => t !== w.outputId));
      }
    }
    name = names.join('+');

    const consumer = fuseInto.get(position) ?? storeInto.get(position);
    const info = consumer !== undefined && lowered.length === 1 ? mapLaunchInfo(lowered[0]!) : undefined;
    // A producer that used scratch must run where it is (a later layer reuses the scratch).
    if (consumer !== undefined && info !== undefined && used === 0) {
      const outputId = layer.outputs[0]!;
      waiting.set(outputId, { consumer, store: storeInto.has(position), launch: lowered[0] as KernelLaunch, info, name, kind: layer.params.kind, output: bound[outputId]!.at, outputId, touched });
    } else {
      // A concatenation into short rows: its blocks (their producers fused) as one launch.
      const merged = layer.params.kind === 'concat' && fuse ? mergeRowBlocks(lowered) : null;
      emit(merged === null ? lowered : [merged], name, layer.params.kind, touched);
    }
  }
  // A consumer always follows its producer, so nothing is left waiting.
  if (waiting.size > 0) throw new InternalError(`cuda backend: fused layers ${[...waiting.values()].map((w) => w.name).join(', ')} have no consumer`);
  for (const { id, buffer } of extraOutputs) {
    const bytes = byteSize(instance.tensors[id]!);
    if (bytes === 0) continue;
    steps.push({ kind: 'copy', dst: { buffer, offset: 0 }, src: bound[id]!.at, bytes });
    stepLayers.push({ name: network.tensors[id]!.name, kind: 'output copy', bytes: 2 * bytes });
  }
  if (checks.length > 0) {
    steps.unshift(clearStatus(statusBuffer));
    stepLayers.unshift({ name: '(run checks)', kind: 'status' });
  }
  return { steps, stepLayers, arenaBytes: scratchBase + scratchBytes, values, bound, inputBuffers, outputBuffers, aliases: memory.aliases, checks, statusBuffer };
}
