/**
 * compile() settings: defaults, and validation that names the key and the value at fault.
 */
import { InvalidArgumentError } from '../errors';
import { isDType, type DType } from '../ir/dtype';
import type { Logger } from '../logger';

/** A static input shape for compilation (dynamic profiles come with dynamic-shape support). */
export interface InputSpec {
  /** Matches a graph input by name; without names, specs apply in input order. */
  name?: string;
  shape: number[];
  /** Checked against the model's input dtype when given. */
  dtype?: DType;
}

export type BackendChoice = 'auto' | 'reference' | 'tensorrt';

export interface CompileSettings {
  /** `auto` (default): TensorRT when usable here, else the CPU reference backend. */
  backend?: BackendChoice;
  /** Static shapes for the inputs; needed when the model has dynamic dims. */
  inputs?: InputSpec[] | Record<string, Omit<InputSpec, 'name'>>;
  /** Smallest TensorRT segment worth an engine (default 5 ops). */
  minBlockSize?: number;
  /** Ops (targets such as `aten.mul.Tensor`) or node names to run outside TensorRT. */
  torchExecutedOps?: string[];
  /** Fail, listing every op that cannot run in TensorRT, instead of falling back. */
  requireFullCompilation?: boolean;
  /** Compute float64 in float32 (TensorRT has no float64). Default false. */
  truncateDouble?: boolean;
  /** Receives progress and decisions (default: silent, or stderr when DEBUG=tensorrt-node). */
  logger?: Logger;
}

export interface ResolvedSettings {
  backend: BackendChoice;
  inputs: InputSpec[] | Record<string, Omit<InputSpec, 'name'>> | undefined;
  minBlockSize: number;
  torchExecutedOps: Set<string>;
  requireFullCompilation: boolean;
  truncateDouble: boolean;
  logger: Logger | undefined;
}

const KEYS = ['backend', 'inputs', 'minBlockSize', 'torchExecutedOps', 'requireFullCompilation', 'truncateDouble', 'logger'];

function bad(message: string): never {
  throw new InvalidArgumentError(`compile settings: ${message}`);
}

function checkShape(label: string, spec: unknown): void {
  if (typeof spec !== 'object' || spec === null) bad(`${label} must be an object with a shape`);
  const s = spec as Record<string, unknown>;
  for (const k of Object.keys(s)) if (!['name', 'shape', 'dtype'].includes(k)) bad(`${label} has an unknown key "${k}" (known: name, shape, dtype)`);
  if (!Array.isArray(s.shape) || !s.shape.every((d) => Number.isInteger(d) && (d as number) >= 0)) {
    bad(`${label}.shape must be a list of non-negative integers, got ${JSON.stringify(s.shape)}`);
  }
  if (s.dtype !== undefined && !isDType(s.dtype)) bad(`${label}.dtype ${JSON.stringify(s.dtype)} is not a dtype`);
}

/** Validates and fills defaults. Unknown keys and bad values are E_INVALID_ARGUMENT errors. */
export function resolveSettings(settings: CompileSettings = {}): ResolvedSettings {
  if (typeof settings !== 'object' || settings === null || Array.isArray(settings)) bad('must be an object');
  for (const key of Object.keys(settings)) {
    if (!KEYS.includes(key)) bad(`unknown key "${key}" (known: ${KEYS.join(', ')})`);
  }
  const s = settings;
  if (s.backend !== undefined && !['auto', 'reference', 'tensorrt'].includes(s.backend)) {
    bad(`backend must be "auto", "reference" or "tensorrt", got ${JSON.stringify(s.backend)}`);
  }
  if (s.minBlockSize !== undefined && !(Number.isInteger(s.minBlockSize) && s.minBlockSize >= 1)) {
    bad(`minBlockSize must be an integer >= 1, got ${JSON.stringify(s.minBlockSize)}`);
  }
  if (s.torchExecutedOps !== undefined && !(Array.isArray(s.torchExecutedOps) && s.torchExecutedOps.every((o) => typeof o === 'string'))) {
    bad('torchExecutedOps must be a list of op targets or node names');
  }
  for (const key of ['requireFullCompilation', 'truncateDouble'] as const) {
    if (s[key] !== undefined && typeof s[key] !== 'boolean') bad(`${key} must be a boolean, got ${JSON.stringify(s[key])}`);
  }
  if (s.logger !== undefined && typeof s.logger !== 'function') bad('logger must be a function (level, message) => void');
  if (s.inputs !== undefined) {
    if (Array.isArray(s.inputs)) s.inputs.forEach((spec, i) => checkShape(`inputs[${i}]`, spec));
    else if (typeof s.inputs === 'object' && s.inputs !== null) for (const [k, spec] of Object.entries(s.inputs)) checkShape(`inputs.${k}`, spec);
    else bad('inputs must be a list of {name?, shape, dtype?} or an object keyed by input name');
  }
  return {
    backend: s.backend ?? 'auto',
    inputs: s.inputs,
    minBlockSize: s.minBlockSize ?? 5,
    torchExecutedOps: new Set(s.torchExecutedOps ?? []),
    requireFullCompilation: s.requireFullCompilation ?? false,
    truncateDouble: s.truncateDouble ?? false,
    logger: s.logger,
  };
}
