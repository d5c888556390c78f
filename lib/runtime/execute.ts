/**
 * Runs a program's segments in order. Used by the worker thread; pure and synchronous, so it
 * is also the single place that defines what running a program means. The tensor-parallel
 * executor (./tensor-parallel/execute.ts) runs each rank with the same pieces.
 *
 * Float widths at segment boundaries (truncateDouble): TensorRT has no float64, so a
 * TensorRT segment computes the graph's float64 values in float32. Every value is kept at
 * the dtype its consumer expects: a float64 value entering an engine is cast to float32;
 * an engine's float32 result read by a fallback graph that types it float64, or returned as
 * a float64 program output, is cast back to float64.
 */
import { getBackend } from '../backends';
import type { Runner } from '../backends/types';
import { InternalError } from '../errors';
import { dtypeInfo, type DType } from '../ir/dtype';
import type { Graph } from '../ir/graph';
import { deserializeGraphFromBuffer } from '../ir/serialize';
import { interpret } from '../interpreter';
import { bindShapes } from '../interpreter/bind-inputs';
import { Tensor } from '../tensor';
import { fromCarrier, toCarrier } from './complex-io';
import { checkPlannedTensors, checkTensorBytes, DEFAULT_RUN_LIMITS, plannedTensors, type RunLimits } from './resource-limits';
import type { ProgramData, ProgramIO, ProgramSegment } from './segments';

/**
 * A segment ready to run: an engine runner, or a fallback graph with the dtypes its inputs
 * must have and the tensors it computes (checked against the run limits before it runs).
 */
export type LoadedSegment =
  | { kind: 'tensorrt'; runner: Runner; inputs: string[]; outputs: string[] }
  | { kind: 'fallback'; graph: Graph; inputs: string[]; outputs: string[]; inputDTypes: DType[]; planned: ReturnType<typeof plannedTensors> };

/** Loads one segment: creates its engine runner, or deserializes its fallback graph. */
export function loadSegment(s: ProgramSegment): LoadedSegment {
  if (s.kind === 'tensorrt') return { kind: 'tensorrt', runner: getBackend(s.backend).createRunner(s.engine), inputs: s.inputs, outputs: s.outputs };
  const graph = deserializeGraphFromBuffer(s.graph);
  return { kind: 'fallback', graph, inputs: s.inputs, outputs: s.outputs, inputDTypes: graph.inputs.map((v) => v.tensorType.dtype), planned: plannedTensors(graph) };
}

/** Releases the engine runners of loaded segments (only TensorRT segments have one). */
export function disposeSegments(segments: ReadonlyArray<{ kind: string; runner?: Runner }>): void {
  for (const s of segments) s.runner?.dispose();
}

/** The program's constant outputs as tensors over their own copies of the bytes. */
export function loadConstants(data: ProgramData): Map<string, Tensor> {
  const out = new Map<string, Tensor>();
  for (const [name, c] of Object.entries(data.constants)) {
    const info = dtypeInfo(c.dtype);
    const copy = c.data.slice();
    out.set(name, new Tensor(c.dtype, c.shape, new info.storage(copy.buffer, 0, copy.byteLength / (info.itemBytes / info.lanes))));
  }
  return out;
}

/**
 * `t` as `dtype` when they differ only in float width (a float64 value computed in float32
 * by a TensorRT segment, or going into one); any other `t` is returned as it is.
 */
export function floatWidthAs(t: Tensor, dtype: DType): Tensor {
  if (t.dtype === dtype) return t;
  if (t.dtype === 'float32' && dtype === 'float64') return new Tensor('float64', t.shape, Float64Array.from(t.data as Float32Array));
  if (t.dtype === 'float64' && dtype === 'float32') return new Tensor('float32', t.shape, Float32Array.from(t.data as Float64Array));
  return t;
}

/** The dtype a program output's value has inside the program: its carrier's for a complex output. */
const innerDType = (io: ProgramIO): DType => io.complex?.carrier ?? io.dtype;

/** The values of one run of one program (one rank): constants, inputs, and what segments compute. */
export class ProgramRun {
  private readonly env: Map<string, Tensor>;

  /**
   * @param constants the program's constants (loadConstants()).
   * @param inputs in program input order.
   * @param where names the program in errors (`program`, `rank 1`).
   * @param limits what one run may allocate.
   */
  constructor(
    private readonly data: ProgramData,
    constants: ReadonlyMap<string, Tensor>,
    inputs: readonly Tensor[],
    private readonly where: string,
    private readonly limits: RunLimits = DEFAULT_RUN_LIMITS,
  ) {
    this.env = new Map<string, Tensor>(constants);
    data.inputs.forEach((io, i) => this.env.set(io.value, toCarrier(io, inputs[i]!)));
  }

  /** The value `name`, as some earlier segment (or the inputs) left it. */
  take(name: string): Tensor {
    const t = this.env.get(name);
    if (t === undefined) throw new InternalError(`${this.where}: value ${name} is needed before any segment computed it`);
    return t;
  }

  /** Sets the value `name`. */
  set(name: string, t: Tensor): void {
    this.env.set(name, t);
  }

  /** The value `name` at `dtype` (see floatWidthAs); a float64 copy of a float32 value is held to the run limits. */
  takeAs(name: string, dtype: DType): Tensor {
    const t = this.take(name);
    if (t.dtype === 'float32' && dtype === 'float64') checkTensorBytes(this.limits, dtype, t.shape, `${this.where}: value "${name}" as float64`, { value: name });
    return floatWidthAs(t, dtype);
  }

  /** Runs one segment on the values it reads and records what it computes. */
  runSegment(s: LoadedSegment): void {
    if (s.kind === 'tensorrt') {
      // Null prototype: a value named "__proto__" or "constructor" is an ordinary key.
      const feeds: Record<string, Tensor> = Object.create(null);
      for (const name of s.inputs) feeds[name] = this.takeAs(name, 'float32');
      const out = s.runner.run(feeds, this.limits);
      for (const name of s.outputs) this.env.set(name, Object.hasOwn(out, name) ? out[name]! : this.take(name));
    } else {
      const inputs = s.inputs.map((name, i) => this.takeAs(name, s.inputDTypes[i]!));
      checkPlannedTensors(this.limits, s.planned, bindShapes(s.graph, inputs), this.where);
      const out = interpret(s.graph, inputs);
      s.outputs.forEach((name, i) => this.env.set(name, out[i]!));
    }
  }

  /** The program outputs in declared order, at their declared dtypes. */
  outputs(): Tensor[] {
    return this.data.outputs.map((io) => fromCarrier(io, this.takeAs(io.value, innerDType(io))));
  }
}

/** Runs one program: its segments loaded once, then run in order for each set of inputs. */
export class ProgramExecutor {
  private readonly segments: LoadedSegment[];
  private readonly constants: Map<string, Tensor>;

  constructor(
    private readonly data: ProgramData,
    private readonly limits: RunLimits = DEFAULT_RUN_LIMITS,
  ) {
    this.segments = data.segments.map(loadSegment);
    this.constants = loadConstants(data);
  }

  /** Inputs in program input order; returns outputs in program output order. */
  run(inputs: readonly Tensor[]): Tensor[] {
    const run = new ProgramRun(this.data, this.constants, inputs, 'program', this.limits);
    for (const s of this.segments) run.runSegment(s);
    return run.outputs();
  }

  /** Releases the engine runners. */
  dispose(): void {
    disposeSegments(this.segments);
  }
}
