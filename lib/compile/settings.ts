/**
 * compile() settings: defaults, and validation that names the key and the value at fault.
 */
import * as path from 'node:path';
import { InvalidArgumentError } from '../errors';
import type { Graph } from '../ir/graph';
import '../ir/ops';
import { opNames } from '../ir/ops/registry';
import { BACKEND_NAMES, isBackendName, type BackendName } from '../engine/backend';
import { BUILD_SETTING_KEYS, resolveBuildConfig, type BuildConfig, type BuildSettings } from '../engine/build-config';
import type { Logger } from '../logger';
import type { ProgressCallback } from './progress';
import { closeMatches } from './suggest';
import { runLimits, type RunLimits } from '../engine/resource-limits';
import { collectivesPolicyProblem, type CollectivesPolicy } from '../runtime/tensor-parallel/collectives-policy';
import { checkInputSpecForm } from './input-shapes';
import { checkMaxProgramBytes } from './memory-plan';
import type { InputSpec, NamedInputSpec } from './input-spec';
import { resolveDeviceSetting, type DeviceSetting, type ResolvedDeviceSetting } from './device-target';

export type { InputSpec, NamedInputSpec, ProfilesInputSpec, RangeInputSpec, ShapeRange, StaticInputSpec } from './input-spec';

export type BackendChoice = 'auto' | BackendName;

export interface CompileSettings extends BuildSettings {
  /**
   * `auto` (default): the first usable backend by priority, tensorrt > cuda > onnxruntime >
   * reference (program.backendRefusals keeps why each one before it was not usable); a
   * named backend that is not usable fails listing why: E_TENSORRT_MISSING for tensorrt,
   * E_BACKEND_UNAVAILABLE for the others; `auto` landing on the reference backend because
   * onnxruntime-node is missing warns once per process. Build knobs
   * (docs/backends.md): `precisions` (kernel precisions allowed besides fp32: "tf32",
   * "fp16", "bf16"), `workspaceBytes` (builder workspace limit), `timingCache` (a file path
   * read and written back, or bytes read), `hardwareCompatibility` ("none" or "ampere+"),
   * `optimizationLevel` (0-5, default 3). The reference backend accepts them and ignores
   * them: it computes in the network's own dtypes. A knob the chosen backend does not use is
   * warned about once, at `warn` (./ineffective-settings.ts).
   */
  backend?: BackendChoice;
  /**
   * Shapes, ranges or optimization profiles of the inputs (see {@link InputSpec}); needed
   * for dims the model leaves unbounded (ONNX dim_param).
   */
  inputs?: InputSpec[] | Record<string, NamedInputSpec>;
  /**
   * Ops whose int arguments depend on a dynamic dim but that have no shape-tensor (`_dyn`)
   * variant: false (default) fails with one E_DYNAMIC_UNSUPPORTED listing them all and the
   * argument at fault; true runs them in fallback segments (the report says why).
   */
  dynamicFallback?: boolean;
  /** Smallest engine segment worth building (default 5 ops). */
  minBlockSize?: number;
  /**
   * Ops (targets such as `aten.mul.Tensor`) or node names to keep out of engine segments
   * (they run in fallback segments). A target the op table does not know, or a name that is
   * neither a known target nor a node of the model, is an E_INVALID_ARGUMENT error listing
   * close matches.
   */
  torchExecutedOps?: string[];
  /** Fail, listing every op that cannot be converted, instead of falling back. */
  requireFullCompilation?: boolean;
  /**
   * Compute float64 in float32 inside engine segments (their Networks follow TensorRT's
   * types, which have no float64). Default false. The program still takes and returns
   * float64 tensors, and fallback segments get the float64 values their graphs expect
   * (lib/runtime/execute.ts casts at the boundaries).
   */
  truncateDouble?: boolean;
  /**
   * Complex ops with no rewrite into real arithmetic (lib/lowering/complex/): false (default)
   * fails listing them all (E_UNSUPPORTED_OP); true runs them in fallback segments, with
   * their complex operands converted from and to real carriers at the segment boundary.
   */
  complexFallback?: boolean;
  /** Receives progress and decisions (default: silent, or stderr when DEBUG=tensorrt-node). */
  logger?: Logger;
  /**
   * Called as each stage of the compile starts and ends (import, lowering, partitioning, and
   * each engine build with its index and total), with the elapsed time; see
   * lib/compile/progress.ts. Errors it throws propagate.
   */
  onProgress?: ProgressCallback;
  /**
   * Stops the compile: compile() then rejects with AbortedError (`E_ABORTED`). Checked between
   * stages and engines; a tensorrt backend build stops at its next step (TensorRT's
   * IProgressMonitor.stepComplete answers false).
   */
  signal?: AbortSignal;
  /**
   * The folder an ONNX model's external data files (weights stored beside the .onnx) are read
   * from. Default: the model file's folder; needed when compiling the bytes of a model whose
   * weights are external. Not allowed with a .pt2 archive or a Graph, which have none.
   */
  baseDir?: string;
  /** Target device of the engines (default: the current GPU); a CPU backend's engines record that they need none. */
  device?: DeviceSetting;
  /**
   * The largest tensor, in bytes, one run of the program may allocate (an input, an
   * intermediate or an output); a run that would need a larger one fails with
   * E_RESOURCE_LIMIT naming it, before allocating it. Default 4 GiB (2^32). Not saved in
   * program files: give it to loadProgram too.
   */
  maxTensorBytes?: number;
  /**
   * The most bytes of tensors a run of the program may hold at once (weights, inputs and
   * the intermediates live together), planned from the graph at compile time with dynamic
   * dims at the top of their ranges (lib/compile/memory-plan.ts): a program over it fails to
   * compile with E_RESOURCE_LIMIT naming the tensors at its peak. Default: the memory where the
   * tensors live, the target GPU's for the cuda and tensorrt backends, the machine's
   * (os.totalmem()) for the CPU backends.
   */
  maxProgramBytes?: number;
}

/** Settings of a tensor-parallel compile: compile() then returns a TensorParallelProgram (lib/compile/tensor-parallel.ts). */
export interface TensorParallelSettings extends CompileSettings {
  /** Split the model's Llama-style blocks across this many ranks (an integer >= 1; rank r targets GPU r). */
  tensorParallel: number;
  /**
   * Where the ranks' all-reduces run: `auto` (default: NCCL when every rank's tensors are on a
   * GPU of its own, else the host), `nccl` (required: `E_NCCL` at run time otherwise) or `host`.
   */
  collectives?: CollectivesPolicy;
}

export interface ResolvedSettings {
  backend: BackendChoice;
  /** The validated build knobs every engine build gets. */
  build: BuildConfig;
  inputs: InputSpec[] | Record<string, NamedInputSpec> | undefined;
  dynamicFallback: boolean;
  minBlockSize: number;
  torchExecutedOps: Set<string>;
  requireFullCompilation: boolean;
  truncateDouble: boolean;
  complexFallback: boolean;
  logger: Logger | undefined;
  onProgress: ProgressCallback | undefined;
  /** Stays on the calling thread: the compile worker gets its own, aborted by message (./compile-thread.ts). */
  signal: AbortSignal | undefined;
  device: ResolvedDeviceSetting;
  /** Ranks of a tensor-parallel compile; undefined for an ordinary one. */
  tensorParallel: number | undefined;
  /** The program's run limits (maxTensorBytes). */
  limits: RunLimits;
  /** The caller's maxProgramBytes; undefined: the default of the backend's device (./memory-plan.ts). */
  maxProgramBytes: number | undefined;
  /** Absolute folder for ONNX external data, when given. */
  baseDir: string | undefined;
}

const KEYS = [...BUILD_SETTING_KEYS, 'backend', 'inputs', 'minBlockSize', 'torchExecutedOps', 'requireFullCompilation', 'truncateDouble', 'complexFallback', 'logger', 'onProgress', 'signal', 'device', 'dynamicFallback', 'tensorParallel', 'collectives', 'maxTensorBytes', 'maxProgramBytes', 'baseDir'];

function bad(message: string): never {
  throw new InvalidArgumentError(`compile settings: ${message}`);
}

function checkShape(label: string, spec: unknown): void {
  const problem = checkInputSpecForm(label, spec);
  if (problem !== null) bad(problem);
}

/** Validates and fills defaults. Unknown keys and bad values are E_INVALID_ARGUMENT errors. */
export function resolveSettings(settings: CompileSettings = {}): ResolvedSettings {
  if (typeof settings !== 'object' || settings === null || Array.isArray(settings)) bad('must be an object');
  for (const key of Object.keys(settings)) {
    if (!KEYS.includes(key)) bad(`unknown key "${key}" (known: ${KEYS.join(', ')})`);
  }
  const s = settings;
  if (s.backend !== undefined && s.backend !== 'auto' && !isBackendName(s.backend)) {
    bad(`backend must be "auto" or one of ${BACKEND_NAMES.map((n) => `"${n}"`).join(', ')}, got ${JSON.stringify(s.backend)}`);
  }
  if (s.minBlockSize !== undefined && !(Number.isInteger(s.minBlockSize) && s.minBlockSize >= 1)) {
    bad(`minBlockSize must be an integer >= 1, got ${JSON.stringify(s.minBlockSize)}`);
  }
  if (s.torchExecutedOps !== undefined && !(Array.isArray(s.torchExecutedOps) && s.torchExecutedOps.every((o) => typeof o === 'string'))) {
    bad('torchExecutedOps must be a list of op targets or node names');
  }
  for (const key of ['requireFullCompilation', 'truncateDouble', 'complexFallback', 'dynamicFallback'] as const) {
    if (s[key] !== undefined && typeof s[key] !== 'boolean') bad(`${key} must be a boolean, got ${JSON.stringify(s[key])}`);
  }
  if (s.baseDir !== undefined && !(typeof s.baseDir === 'string' && s.baseDir.length > 0)) bad(`baseDir must be a folder path, got ${JSON.stringify(s.baseDir)}`);
  if (s.logger !== undefined && typeof s.logger !== 'function') bad('logger must be a function (level, message) => void');
  if (s.onProgress !== undefined && typeof s.onProgress !== 'function') bad('onProgress must be a function (event) => void');
  // Duck-typed: an AbortSignal of another realm (a vm context, jest) is still one.
  if (s.signal !== undefined && !(typeof s.signal === 'object' && s.signal !== null && typeof s.signal.aborted === 'boolean' && typeof s.signal.addEventListener === 'function')) {
    bad('signal must be an AbortSignal (new AbortController().signal)');
  }
  if (s.torchExecutedOps !== undefined) checkOpTargets(s.torchExecutedOps);
  const tensorParallel = (s as Partial<TensorParallelSettings>).tensorParallel;
  if (tensorParallel !== undefined && !(Number.isSafeInteger(tensorParallel) && tensorParallel >= 1)) {
    bad(`tensorParallel must be an integer >= 1, got ${JSON.stringify(tensorParallel)}`);
  }
  const collectives = (s as Partial<TensorParallelSettings>).collectives;
  if (collectives !== undefined) {
    if (tensorParallel === undefined) bad('collectives applies to tensor-parallel programs only: set tensorParallel too');
    const problem = collectivesPolicyProblem(collectives, 'collectives');
    if (problem !== null) bad(problem);
  }
  if (s.inputs !== undefined) {
    if (Array.isArray(s.inputs)) s.inputs.forEach((spec, i) => checkShape(`inputs[${i}]`, spec));
    else if (typeof s.inputs === 'object' && s.inputs !== null) for (const [k, spec] of Object.entries(s.inputs)) checkShape(`inputs.${k}`, spec);
    else bad('inputs must be a list of {name?, shape | min/opt/max | profiles, dtype?} or an object keyed by input name');
  }
  return {
    backend: s.backend ?? 'auto',
    build: resolveBuildConfig(s),
    inputs: s.inputs,
    dynamicFallback: s.dynamicFallback ?? false,
    minBlockSize: s.minBlockSize ?? 5,
    torchExecutedOps: new Set(s.torchExecutedOps ?? []),
    requireFullCompilation: s.requireFullCompilation ?? false,
    truncateDouble: s.truncateDouble ?? false,
    complexFallback: s.complexFallback ?? false,
    logger: s.logger,
    onProgress: s.onProgress,
    signal: s.signal,
    device: resolveDeviceSetting(s.device),
    tensorParallel,
    limits: runLimits(s.maxTensorBytes, 'compile settings'),
    maxProgramBytes: checkMaxProgramBytes(s.maxProgramBytes, 'compile settings'),
    // Resolved here, on the caller's thread, so a relative path means what the caller meant.
    baseDir: s.baseDir === undefined ? undefined : path.resolve(s.baseDir),
  };
}

/** Namespaces of the op table (`aten`, `prims`, `trt`, ...): an entry starting with one names an op target. */
function opNamespaces(): Set<string> {
  return new Set(opNames().map((n) => n.slice(0, n.indexOf('.'))));
}

function unknownOp(entry: string, what: string, candidates: Iterable<string>): never {
  const near = closeMatches(entry, candidates);
  bad(`torchExecutedOps: ${what} ${JSON.stringify(entry)}${near.length > 0 ? `; did you mean ${near.join(', ')}?` : ''}`);
}

/** Entries that look like op targets (a known namespace, then a dot) must be in the op table. */
function checkOpTargets(entries: readonly string[]): void {
  const namespaces = opNamespaces();
  const known = new Set(opNames());
  for (const e of entries) {
    const dot = e.indexOf('.');
    if (dot > 0 && namespaces.has(e.slice(0, dot)) && !known.has(e)) unknownOp(e, 'unknown op', known);
  }
}

/**
 * Entries that are not op targets must name a node of `graph` (checked once the model is
 * loaded; the candidates are the graph's node names and the op table's targets).
 *
 * @throws {InvalidArgumentError} `E_INVALID_ARGUMENT` listing close matches.
 */
export function checkTorchExecutedOps(entries: ReadonlySet<string>, graph: Graph): void {
  if (entries.size === 0) return;
  const known = new Set(opNames());
  const nodes = graph.calls();
  const names = new Set(nodes.map((n) => n.name));
  for (const e of entries) {
    if (known.has(e) || names.has(e)) continue;
    unknownOp(e, 'no op target or node of the model is named', [...names, ...nodes.map((n) => n.target), ...known]);
  }
}
