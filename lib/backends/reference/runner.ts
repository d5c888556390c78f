/**
 * Runs a loaded reference engine: checks the inputs against the network's inputs and
 * optimization profiles, runs the layers that reach an output in network order, frees each
 * intermediate tensor after its last use, and asserts after every layer that its outputs
 * have exactly the dtypes and shapes inferLayer gives for the concrete inputs (a mismatch is
 * an InternalError naming the layer: the executor and TensorRT's rules disagree).
 */
import { BadInputError, InternalError, InvalidArgumentError, ShapeOutOfRangeError, TensorRTNodeError } from '../../errors';
import type { TypedArray } from '../../ir/dtype';
import { inferLayer, liveLayers, shapesDoNotFit, type Layer, type NetTensor, type Network, type TensorInfo, type TrtDType } from '../../network';
import { checkTensorBytes, DEFAULT_RUN_LIMITS, type RunLimits } from '../../engine/resource-limits';
import { Tensor } from '../../ir/tensor';
import { executeLayer } from '../../network/evaluate';

const fmt = (dtype: string, shape: readonly number[]): string => `${dtype}[${shape.map((d) => (d < 0 ? '?' : d)).join(', ')}]`;
const describe = (t: Tensor | null): string => (t === null ? '∅' : fmt(t.dtype, t.shape));

/** What inferLayer needs of a concrete tensor: dtype, shape and, for small integer tensors, the values. */
function runtimeInfo(t: Tensor): TensorInfo {
  const small = (t.dtype === 'int32' || t.dtype === 'int64') && t.rank <= 1 && t.size <= 64;
  return { dtype: t.dtype as TrtDType, shape: t.shape, value: small ? t.toArray() : undefined };
}

/** Every Tensor in a layer's parameters (weights the engine owns). */
function paramTensors(value: unknown, out: Tensor[]): Tensor[] {
  if (value instanceof Tensor) out.push(value);
  else if (Array.isArray(value)) value.forEach((v) => paramTensors(v, out));
  else if (value !== null && typeof value === 'object') Object.values(value).forEach((v) => paramTensors(v, out));
  return out;
}

export class ReferenceRunner {
  readonly inputNames: readonly string[];
  readonly outputNames: readonly string[];
  private network: Network | null;
  /** The layers that reach an output, in order. */
  private readonly steps: readonly Layer[];
  /** Tensor ids to drop after each step. */
  private readonly freeAfter: readonly number[][];
  /** Storage the engine owns, which outputs must not hand out. */
  private readonly engineData = new Set<TypedArray>();

  constructor(network: Network) {
    this.network = network;
    this.inputNames = network.inputs.map((i) => i.name);
    this.outputNames = network.outputs.map((o) => o.name);
    this.steps = liveLayers(network);
    const lastUse = new Map<number, number>();
    this.steps.forEach((layer, step) => {
      for (const id of [...layer.inputs, ...layer.outputs]) if (id !== null) lastUse.set(id, step);
    });
    for (const o of network.outputs) lastUse.delete(o.tensor);
    this.freeAfter = this.steps.map(() => []);
    for (const [id, step] of lastUse) (this.freeAfter[step] as number[]).push(id);
    for (const layer of this.steps) for (const t of paramTensors(layer.params, [])) this.engineData.add(t.data);
  }

  /** The layers a run executes, in order (what {@link run}'s `onLayer` is called with). */
  get liveLayers(): readonly Layer[] {
    return this.steps;
  }

  /**
   * Runs the network. `onLayer`, where given, is told each executed layer's wall-clock time
   * in ms (its checks against TensorRT's rules included): what a profile attributes to it.
   */
  run(inputs: Readonly<Record<string, Tensor>>, limits: RunLimits = DEFAULT_RUN_LIMITS, onLayer?: (layer: Layer, ms: number) => void): Record<string, Tensor> {
    const network = this.network;
    if (network === null) throw new InvalidArgumentError('this reference runner was disposed');
    const values = new Array<Tensor | undefined>(network.tensors.length);
    const borrowed = new Set(this.engineData);
    for (const [input, t] of this.bindInputs(network, inputs)) {
      values[input.id] = t;
      borrowed.add(t.data);
    }
    this.steps.forEach((layer, step) => {
      const ins = layer.inputs.map((id) => {
        if (id === null) return null;
        const t = values[id];
        if (t === undefined) throw new InternalError(`reference backend: layer "${layer.name}" reads tensor "${network.tensors[id]!.name}", which is not computed`);
        return t;
      });
      const t0 = onLayer === undefined ? 0 : performance.now();
      const outs = this.execute(network, layer, ins, limits);
      if (onLayer !== undefined) onLayer(layer, performance.now() - t0);
      layer.outputs.forEach((id, k) => (values[id] = outs[k]));
      for (const id of this.freeAfter[step]!) values[id] = undefined;
    });
    const result: Record<string, Tensor> = {};
    const handedOut = new Set<TypedArray>();
    for (const o of network.outputs) {
      let t = values[o.tensor]!;
      // Outputs belong to the caller: never hand out engine weights, an input or one buffer twice.
      if (borrowed.has(t.data) || handedOut.has(t.data)) t = new Tensor(t.dtype, t.shape, t.data.slice());
      handedOut.add(t.data);
      // defineProperty: an output named "__proto__" must be a plain key, not the prototype.
      Object.defineProperty(result, o.name, { value: t, enumerable: true, writable: true, configurable: true });
    }
    return result;
  }

  dispose(): void {
    this.network = null;
    this.engineData.clear();
  }

  /**
   * Runs one layer, wraps kernel complaints, and checks the outputs against TensorRT's rules;
   * outputs larger than the limits are refused before the layer runs.
   */
  private execute(network: Network, layer: Layer, ins: Array<Tensor | null>, limits: RunLimits): Tensor[] {
    const label = `layer "${layer.name}" (${layer.params.kind})`;
    const infer = (): TensorInfo[] =>
      inferLayer(
        layer.params,
        ins.map((t) => (t === null ? null : runtimeInfo(t))),
        layer.name,
      );
    let planned: TensorInfo[] | undefined;
    let unfit: unknown;
    try {
      planned = infer();
    } catch (e) {
      // Run-time data the layer refuses (a slice out of bounds): the executor says why, typed;
      // otherwise the inputs' shapes contradict each other at this layer (shapesDoNotFit).
      unfit = e;
    }
    planned?.forEach((want, k) => checkTensorBytes(limits, want.dtype, want.shape, `reference backend: ${label} output ${k}`, { layer: layer.name }));
    let outs: Tensor[];
    try {
      outs = executeLayer(layer, ins);
    } catch (e) {
      // Typed errors (bad run-time data, converter bugs found by an executor) pass through;
      // a kernel rejecting its arguments means the layer was built wrong.
      const typed = e instanceof TensorRTNodeError && e.code !== 'E_INVALID_ARGUMENT';
      if (unfit !== undefined && (!typed || e instanceof InternalError)) throw shapesDoNotFit('reference', layer.name, unfit);
      if (typed) throw e;
      throw new InternalError(`reference backend: ${label} failed on inputs ${ins.map(describe).join(', ')}: ${(e as Error).message}`, {
        cause: e,
        details: { layer: layer.name },
      });
    }
    if (planned === undefined) throw shapesDoNotFit('reference', layer.name, unfit);
    const expected = planned;
    const mismatch = (k: number, what: string): never => {
      throw new InternalError(
        `reference backend: ${label} output ${k} is ${describe(outs[k] ?? null)}, but ${what} (inputs ${ins.map(describe).join(', ')})`,
        { details: { layer: layer.name, output: k } },
      );
    };
    if (outs.length !== expected.length) {
      throw new InternalError(`reference backend: ${label} gave ${outs.length} outputs, TensorRT's rules give ${expected.length}`, { details: { layer: layer.name } });
    }
    outs.forEach((t, k) => {
      const want = expected[k]!;
      // A dim TensorRT's rules leave at -1 for concrete inputs is one only the data decides (a nonzero layer's count).
      if (!(t instanceof Tensor) || t.dtype !== want.dtype || t.rank !== want.shape.length || t.shape.some((d, i) => want.shape[i]! >= 0 && d !== want.shape[i])) {
        mismatch(k, `TensorRT's rules give ${fmt(want.dtype, want.shape)}`);
      }
      const declared: NetTensor = network.tensors[layer.outputs[k]!]!;
      if (t.rank !== declared.shape.length || t.shape.some((d, i) => declared.shape[i]! >= 0 && d !== declared.shape[i])) {
        mismatch(k, `the network declares ${fmt(declared.dtype, declared.shape)}`);
      }
    });
    return outs;
  }

  /** Checks the caller's inputs (names, dtypes, ranks, static dims, profile ranges) and pairs them with the input tensors. */
  private bindInputs(network: Network, inputs: Readonly<Record<string, Tensor>>): Array<[NetTensor, Tensor]> {
    if (inputs === null || typeof inputs !== 'object') throw new BadInputError('run() takes an object of input tensors keyed by input name');
    const names = new Set(this.inputNames);
    for (const name of Object.keys(inputs)) {
      if (!names.has(name)) {
        throw new BadInputError(`unknown input "${name}"; the engine's inputs are ${this.inputNames.map((n) => `"${n}"`).join(', ')}`, { details: { input: name } });
      }
    }
    const bound: Array<[NetTensor, Tensor]> = [];
    for (const input of network.inputs) {
      const declared = network.tensor(input.tensor);
      const t = Object.hasOwn(inputs, input.name) ? inputs[input.name] : undefined;
      const want = fmt(declared.dtype, declared.shape);
      if (t === undefined) throw new BadInputError(`missing input "${input.name}" (${want})`, { details: { input: input.name } });
      if (!(t instanceof Tensor)) throw new BadInputError(`input "${input.name}" must be a Tensor, got ${t === null ? 'null' : typeof t}`, { details: { input: input.name } });
      if (t.dtype !== declared.dtype) {
        throw new BadInputError(`input "${input.name}" is ${t.dtype}, the engine takes ${want}`, {
          details: { input: input.name, expected: declared.dtype, actual: t.dtype },
        });
      }
      if (t.rank !== declared.shape.length) {
        throw new BadInputError(`input "${input.name}" has shape [${t.shape.join(', ')}] (rank ${t.rank}), the engine takes ${want}`, {
          details: { input: input.name, expected: declared.shape, actual: t.shape },
        });
      }
      declared.shape.forEach((d, i) => {
        if (d >= 0 && t.shape[i] !== d) {
          throw new BadInputError(`input "${input.name}" dim ${i} is ${t.shape[i]}, the engine was built for ${d} (${want})`, {
            details: { input: input.name, dim: i, value: t.shape[i], expected: d },
          });
        }
      });
      bound.push([declared, t]);
    }
    this.checkProfiles(network, bound);
    return bound;
  }

  /** Dynamic dims must lie within [min, max] of one optimization profile (the first that fits every input). */
  private checkProfiles(network: Network, bound: Array<[NetTensor, Tensor]>): void {
    const count = Math.max(0, ...network.inputs.map((i) => i.profiles.length));
    if (count === 0) return;
    const violations: Array<{ input: string; dim: number; value: number; min: number; max: number; profile: number }> = [];
    for (let p = 0; p < count; p++) {
      const violation = network.inputs
        .map((input, k) => {
          const profile = input.profiles[p];
          if (profile === undefined) return undefined;
          const shape = bound[k]![1].shape;
          const dim = shape.findIndex((d, i) => d < profile.min[i]! || d > profile.max[i]!);
          return dim < 0 ? undefined : { input: input.name, dim, value: shape[dim]!, min: profile.min[dim]!, max: profile.max[dim]!, profile: p };
        })
        .find((v) => v !== undefined);
      if (violation === undefined) return;
      violations.push(violation);
    }
    const first = violations[0]!;
    const others =
      violations.length > 1
        ? ` (no optimization profile fits: ${violations.map((v) => `profile ${v.profile} needs "${v.input}" dim ${v.dim} in [${v.min}, ${v.max}]`).join('; ')})`
        : '';
    throw new ShapeOutOfRangeError(
      `input "${first.input}" dim ${first.dim} is ${first.value}, outside the optimization profile's range [${first.min}, ${first.max}]${others}`,
      { details: { ...first } },
    );
  }
}
