/**
 * The run-time memory limit of a program (`maxTensorBytes`): no tensor a run allocates (an
 * input's copy, an intermediate, an output) may be larger. Sizes are checked from the shapes
 * before the bytes are allocated, so that a run that would need too much fails with a typed
 * E_RESOURCE_LIMIT naming the input, node or layer instead of exhausting the process; an
 * allocation that fails anyway (the process is short of memory below the limit) is reported
 * with the same error.
 */
import { InvalidArgumentError, ResourceLimitError, TensorRTNodeError } from '../errors';
import { dtypeInfo, type DType } from '../ir/dtype';
import type { Graph } from '../ir/graph';
import { evaluateDim, type Dim } from '../ir/symbolic';

/** 4 GiB: the largest typed array Node.js 20 can allocate. */
export const DEFAULT_MAX_TENSOR_BYTES = 2 ** 32;

/** The limits a program's runs are held to. */
export interface RunLimits {
  /** The largest tensor, in bytes, one run may allocate. */
  readonly maxTensorBytes: number;
}

export const DEFAULT_RUN_LIMITS: RunLimits = Object.freeze({ maxTensorBytes: DEFAULT_MAX_TENSOR_BYTES });

/**
 * The run limits from a `maxTensorBytes` option (compile settings, load options); undefined
 * gives the default.
 *
 * @throws {InvalidArgumentError} `E_INVALID_ARGUMENT` naming `where`: not a positive safe integer.
 */
export function runLimits(maxTensorBytes: unknown, where: string): RunLimits {
  if (maxTensorBytes === undefined) return DEFAULT_RUN_LIMITS;
  if (typeof maxTensorBytes !== 'number' || !Number.isSafeInteger(maxTensorBytes) || maxTensorBytes < 1) {
    throw new InvalidArgumentError(`${where}: maxTensorBytes must be a positive integer number of bytes, got ${JSON.stringify(maxTensorBytes) ?? String(maxTensorBytes)}`);
  }
  return Object.freeze({ maxTensorBytes });
}

/** Bytes of a tensor of `dtype` and `shape` (may exceed 2^53 for absurd shapes; only compared). */
export function tensorBytes(dtype: DType, shape: readonly number[]): number {
  let n = dtypeInfo(dtype).itemBytes;
  for (const d of shape) n *= d;
  return n;
}

/**
 * Refuses a tensor larger than the limit before it is allocated.
 *
 * @param what names it in the message (`input "x"`, `node mul_3 (aten.mul.Tensor) output %y`).
 * @throws {ResourceLimitError} `E_RESOURCE_LIMIT` naming `what`, its type and both sizes.
 */
export function checkTensorBytes(limits: RunLimits, dtype: DType, shape: readonly number[], what: string, details: Record<string, unknown> = {}): void {
  const bytes = tensorBytes(dtype, shape);
  if (bytes <= limits.maxTensorBytes) return;
  throw new ResourceLimitError(
    `${what} would be ${dtype}[${shape.join(', ')}], ${bytes} bytes, more than maxTensorBytes (${limits.maxTensorBytes}); raise maxTensorBytes in the compile or load options, or run smaller inputs`,
    { details: { ...details, dtype, shape: [...shape], bytes, maxTensorBytes: limits.maxTensorBytes } },
  );
}

/** One tensor a graph computes: its node's description, and its type. */
interface PlannedTensor {
  readonly what: string;
  readonly node: string;
  readonly dtype: DType;
  readonly shape: readonly Dim[];
}

/** The tensors a graph's nodes compute (constants excluded: they exist already). */
export function plannedTensors(graph: Graph): PlannedTensor[] {
  const out: PlannedTensor[] = [];
  for (const node of graph.nodes) {
    if (node.kind !== 'call') continue;
    for (const v of node.outputs) {
      if (v.type.kind !== 'tensor') continue;
      out.push({ what: `node ${node.name} (${node.target}) output %${v.name}`, node: node.name, dtype: v.type.dtype, shape: v.type.shape });
    }
  }
  return out;
}

/**
 * Checks every tensor of `planned` whose shape the input symbols determine, before the graph
 * runs; shapes that depend on data (a symbol the inputs do not bind) are left to the
 * allocation itself (see {@link asResourceLimitError}).
 */
export function checkPlannedTensors(limits: RunLimits, planned: readonly PlannedTensor[], symbols: ReadonlyMap<string, number>, where: string): void {
  for (const p of planned) {
    const shape: number[] = [];
    for (const d of p.shape) {
      try {
        shape.push(evaluateDim(d, symbols));
      } catch {
        break;
      }
    }
    if (shape.length === p.shape.length) checkTensorBytes(limits, p.dtype, shape, `${where}: ${p.what}`, { node: p.node });
  }
}

/** What V8 throws when a typed array, ArrayBuffer or array cannot be allocated. */
const ALLOCATION_FAILURE = /Array buffer allocation failed|Invalid typed array length|Invalid array buffer length|Invalid array length/;

/** The allocation failure in `error` or its causes, if any. */
function allocationFailure(error: unknown): RangeError | undefined {
  for (let e = error, depth = 0; e instanceof Error && depth < 8; e = e.cause, depth++) {
    if (e instanceof RangeError && ALLOCATION_FAILURE.test(e.message)) return e;
  }
  return undefined;
}

/**
 * `error` as E_RESOURCE_LIMIT when it is (or wraps) a failed allocation, keeping its message
 * (which names the node or layer); any other error is returned as it is.
 */
export function asResourceLimitError(error: unknown): unknown {
  if (error instanceof TensorRTNodeError && error.code === 'E_RESOURCE_LIMIT') return error;
  const failure = allocationFailure(error);
  if (failure === undefined) return error;
  const message = (error as Error).message;
  return new ResourceLimitError(`out of memory: ${message}${message.includes(failure.message) ? '' : ` (${failure.message})`}`, {
    cause: error,
    details: { ...(error instanceof TensorRTNodeError ? error.details : {}), allocation: failure.message },
  });
}
