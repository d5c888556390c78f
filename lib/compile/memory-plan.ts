/**
 * The program-level memory budget (`maxProgramBytes`): what a run of the compiled graph holds
 * at its peak, planned from the graph before anything is built or run. `maxTensorBytes`
 * bounds one tensor; a model of many tensors just under that bound (a kilobyte of ONNX that
 * expands a constant to 1 GiB and carries it through five ops) would still take gigabytes.
 * compile() refuses typed, naming the tensors at the peak, a program whose plan exceeds the
 * budget.
 *
 * The plan walks the nodes in graph order and keeps a value live from its producer (graph
 * inputs and constants: from the start) to its last reader (graph outputs: to the end), with
 * dynamic dims at the top of their ranges: the most any run within the compiled ranges holds
 * at once. It counts tensors, not a backend's scratch space or the memory a backend saves by
 * running ops in place.
 */
import * as os from 'node:os';

import { InvalidArgumentError, ResourceLimitError } from '../errors';
import { dtypeInfo } from '../ir/dtype';
import type { Graph, Value } from '../ir/graph';
import { dimBounds, formatDim } from '../ir/symbolic';

/** One tensor of the plan: the value and its bytes at the top of its dims' ranges. */
export interface PlannedTensor {
  readonly value: string;
  readonly dtype: string;
  readonly shape: readonly (number | string)[];
  readonly bytes: number;
}

export interface MemoryPlan {
  /** The most bytes live at once: constants, inputs and intermediates of the busiest step. */
  readonly peakBytes: number;
  /** Bytes of the constants (weights): live for the whole run. */
  readonly constantBytes: number;
  /** The node at whose output the peak happens (null: the inputs and constants alone). */
  readonly peakNode: string | null;
  /** The largest tensors live at the peak, largest first (at most 3). */
  readonly largestAtPeak: readonly PlannedTensor[];
  /** Values whose size has no finite bound (a dim without an upper bound): not counted. */
  readonly unbounded: readonly string[];
}

/** Bytes of `v` with its dims at the top of their ranges; Infinity when a dim has no bound. */
function plannedBytes(v: Value, graph: Graph): number {
  if (v.type.kind !== 'tensor') return 0;
  const t = v.tensorType;
  let bytes = dtypeInfo(t.dtype).itemBytes;
  for (const d of t.shape) bytes *= typeof d === 'number' ? d : Math.max(dimBounds(d, graph.symbols).max, 0);
  return bytes;
}

function describe(v: Value, bytes: number): PlannedTensor {
  return { value: v.name, dtype: v.tensorType.dtype, shape: v.tensorType.shape.map((d) => (typeof d === 'number' ? d : formatDim(d))), bytes };
}

/** The memory plan of `graph` (see the top of this file). Pure: the graph is not changed. */
export function planMemory(graph: Graph): MemoryPlan {
  const nodes = graph.calls();
  const lastUse = new Map<Value, number>();
  nodes.forEach((node, step) => {
    for (const v of node.inputValues()) lastUse.set(v, step);
  });
  const outputs = new Set(graph.outputs);
  const sizes = new Map<Value, number>();
  const unbounded: string[] = [];
  const size = (v: Value): number => {
    let bytes = sizes.get(v);
    if (bytes === undefined) {
      bytes = plannedBytes(v, graph);
      if (!Number.isFinite(bytes)) {
        unbounded.push(v.name);
        bytes = 0;
      }
      sizes.set(v, bytes);
    }
    return bytes;
  };
  const live = new Set<Value>();
  let liveBytes = 0;
  const add = (v: Value): void => {
    if (live.has(v)) return;
    live.add(v);
    liveBytes += size(v);
  };
  let constantBytes = 0;
  for (const node of graph.nodes) {
    if (node.kind !== 'constant' || node.outputs.length === 0) continue;
    const v = node.outputs[0]!;
    if (!lastUse.has(v) && !outputs.has(v)) continue; // dead: not kept by any backend
    add(v);
    constantBytes += size(v);
  }
  for (const v of graph.inputs) add(v);
  let peakBytes = liveBytes;
  let peakNode: string | null = null;
  let peakSet = new Set(live);
  nodes.forEach((node, step) => {
    for (const v of node.outputs) add(v);
    if (liveBytes > peakBytes) {
      peakBytes = liveBytes;
      peakNode = node.name;
      peakSet = new Set(live);
    }
    // Inputs read for the last time and outputs nobody reads are freed after the node.
    for (const v of [...node.inputValues(), ...node.outputs]) {
      const last = lastUse.get(v);
      if (outputs.has(v) || v.producer.kind === 'constant' || (last !== undefined && last > step)) continue;
      if (live.delete(v)) liveBytes -= size(v);
    }
  });
  const largestAtPeak = [...peakSet]
    .filter((v) => v.type.kind === 'tensor')
    .map((v) => ({ v, bytes: size(v) }))
    .sort((a, b) => b.bytes - a.bytes)
    .slice(0, 3)
    .map(({ v, bytes }) => describe(v, bytes));
  return { peakBytes, constantBytes, peakNode, largestAtPeak, unbounded };
}

/**
 * The default budget, tied to the machine: the memory where a run's tensors live. A GPU
 * backend's tensors live on the device (`deviceBytes`: the target device's total memory);
 * a CPU backend's in the process, which may use what the machine has (os.totalmem()).
 */
export function defaultMaxProgramBytes(deviceBytes?: number): number {
  return deviceBytes !== undefined && deviceBytes > 0 ? deviceBytes : os.totalmem();
}

/**
 * Checks a `maxProgramBytes` setting.
 *
 * @throws {InvalidArgumentError} `E_INVALID_ARGUMENT`: not a positive safe integer.
 */
export function checkMaxProgramBytes(value: unknown, where: string): number | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 1) {
    throw new InvalidArgumentError(`${where}: maxProgramBytes must be a positive integer number of bytes, got ${JSON.stringify(value) ?? String(value)}`);
  }
  return value;
}

/** Bytes for a message: bytes, KiB, MiB or GiB, whichever reads best. */
function sizeText(bytes: number): string {
  if (bytes < 1024) return `${bytes} bytes`;
  const [unit, scale] = bytes < 2 ** 20 ? ['KiB', 2 ** 10] : bytes < 2 ** 30 ? ['MiB', 2 ** 20] : ['GiB', 2 ** 30];
  return `${(bytes / scale).toFixed(1)} ${unit}`;
}

/**
 * Refuses a plan over the budget.
 *
 * @param explicit whether the budget was the caller's (the message says how to raise it either way).
 * @throws {ResourceLimitError} `E_RESOURCE_LIMIT` naming the peak's node and its largest tensors.
 */
export function checkMemoryPlan(plan: MemoryPlan, maxProgramBytes: number, explicit: boolean): void {
  if (plan.peakBytes <= maxProgramBytes) return;
  const where = plan.peakNode === null ? 'with its inputs and constants alone' : `at node ${plan.peakNode}`;
  const largest = plan.largestAtPeak.map((t) => `%${t.value} ${t.dtype}[${t.shape.join(', ')}] (${sizeText(t.bytes)})`).join(', ');
  const budget = explicit ? 'maxProgramBytes' : 'the default maxProgramBytes (the memory of the machine or device)';
  throw new ResourceLimitError(
    `the program would hold ${sizeText(plan.peakBytes)} of tensors at once ${where} (${sizeText(plan.constantBytes)} of them constants), more than ${budget}: ${sizeText(maxProgramBytes)}; largest live tensors: ${largest}. Compile with smaller input shapes or ranges, or raise maxProgramBytes`,
    {
      details: {
        plannedBytes: plan.peakBytes,
        constantBytes: plan.constantBytes,
        maxProgramBytes,
        node: plan.peakNode,
        largest: plan.largestAtPeak.map((t) => ({ ...t, shape: [...t.shape] })),
      },
    },
  );
}
