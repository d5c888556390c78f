/**
 * The PROGRAM|MODEL argument of `run`, `bench` and `inspect`: a `.trtp` program file is
 * loaded; a model (`.onnx`, `.pt2`) is compiled with the command's flags. Flags are checked
 * against the model's inputs first, so mistakes are reported in flag terms before any work.
 */
import { compile, dryRun, type CompileSettings } from '../compile';
import { loadModel } from '../compile/load-model';
import type { NamedInputSpec } from '../compile/settings';
import type { Graph } from '../ir/graph';
import { formatShape, isStatic, symbolsOf } from '../ir/symbolic';
import type { PartitionReport } from '../partitioning/partition';
import type { Program } from '../runtime/program';
import { loadProgram } from '../runtime/program-file';
import { checkGivenInputs, type DeclaredInput } from './inputs';
import type { Progress } from './progress';
import { parseInteger, UsageError } from './usage';
import { cliLogger } from './log';
import { PRECISIONS, type Precision } from '../engine/build-config';

/** Flags of every command that may compile a model. */
export interface ModelOptions {
  shape?: string[];
  backend?: CompileSettings['backend'];
  /** `--rebuild auto|never`: program files only (loadProgram's `rebuild`). */
  rebuild?: 'auto' | 'never';
  minBlockSize?: string;
  torchExecutedOps?: string;
  requireFullCompilation?: boolean;
  maxProgramBytes?: string;
  /** `--fp16`, `--bf16`, `--tf32`, `--precision a,b`: kernel precisions allowed besides fp32 (the `precisions` setting). */
  fp16?: boolean;
  bf16?: boolean;
  tf32?: boolean;
  precision?: string;
  /** `--device N` (or `cuda:N`): the GPU to build for (`device.gpuId`), or to load a program file's engines on. */
  device?: string;
  /** `--verbose`: the library's info and debug lines on stderr (./log.ts). */
  verbose?: boolean;
  quiet?: boolean;
  progress?: boolean;
}

// --backend applies to both: the backend to compile for, or the one a program file's engines run on.
const COMPILE_FLAGS: ReadonlyArray<[keyof ModelOptions, string]> = [
  ['minBlockSize', '--min-block-size'],
  ['torchExecutedOps', '--torch-executed-ops'],
  ['requireFullCompilation', '--require-full-compilation'],
  ['maxProgramBytes', '--max-program-bytes'],
  ['fp16', '--fp16'],
  ['bf16', '--bf16'],
  ['tf32', '--tf32'],
  ['precision', '--precision'],
];

/** The precision flags as the `precisions` setting (fp32 first, as resolveBuildConfig orders them); undefined without any. */
export function precisionsOf(options: Pick<ModelOptions, 'fp16' | 'bf16' | 'tf32' | 'precision'>): Precision[] | undefined {
  const chosen = new Set<string>();
  if (options.precision !== undefined) {
    for (const p of options.precision.split(',').map((s) => s.trim().toLowerCase())) {
      if (!(PRECISIONS as readonly string[]).includes(p)) {
        throw new UsageError(`--precision ${options.precision}: unknown precision ${JSON.stringify(p)} (known: ${PRECISIONS.join(', ')}; write them separated by commas, e.g. fp16,tf32)`);
      }
      chosen.add(p);
    }
  }
  for (const flag of ['fp16', 'bf16', 'tf32'] as const) if (options[flag] === true) chosen.add(flag);
  return chosen.size === 0 ? undefined : PRECISIONS.filter((p) => chosen.has(p));
}

/** `--device N` or `--device cuda:N` as a CUDA ordinal; undefined without the flag. */
export function deviceOf(options: Pick<ModelOptions, 'device'>): number | undefined {
  if (options.device === undefined) return undefined;
  const m = /^(?:cuda:)?(\d+)$/.exec(options.device);
  const n = m === null ? NaN : Number(m[1]);
  if (!Number.isSafeInteger(n)) throw new UsageError(`--device ${options.device}: expected a CUDA device ordinal (0, 1, ... or cuda:1; \`tensorrt-node devices\` lists them)`);
  return n;
}

/** A `.trtp` path is a program file; anything else is a model. */
export function isProgramFile(file: string): boolean {
  return /\.trtp$/i.test(file);
}

/** The model's inputs, for checking flags against. */
export function declaredInputs(graph: Graph): DeclaredInput[] {
  return graph.inputs.map((v) => ({ name: v.name, dtype: v.tensorType.dtype, shape: v.tensorType.shape }));
}

/**
 * Every input with a dim the model leaves unbounded gets a shape from `specs`, or shares
 * that symbol with an input that has one; otherwise the usage error says which `--shape` to add.
 */
export function checkShapesCovered(graph: Graph, specs: ReadonlyMap<string, NamedInputSpec>): void {
  checkGivenInputs(declaredInputs(graph), new Map(), specs);
  const bound = new Set<string>();
  for (const v of graph.inputs) if (specs.has(v.name)) for (const d of v.tensorType.shape) symbolsOf(d, bound);
  for (const v of graph.inputs) {
    if (specs.has(v.name)) continue;
    const shape = v.tensorType.shape;
    const open = shape.flatMap((d) => [...symbolsOf(d)]).filter((s) => !bound.has(s) && (graph.symbols.get(s)?.max ?? Infinity) === Infinity);
    if (open.length === 0) continue;
    const example = shape.map((d) => (isStatic(d) ? d : 1));
    const big = shape.map((d) => (isStatic(d) ? d : 8));
    const max = shape.map((d) => (isStatic(d) ? d : 32));
    throw new UsageError(
      `input "${v.name}" has dynamic dims ${formatShape(shape)} (${open.join(', ')} unbounded in the model): add --shape ${v.name}=${example.join('x')}` +
        ` (or a min:opt:max range, e.g. --shape ${v.name}=${example.join('x')}:${big.join('x')}:${max.join('x')})`,
      { details: { input: v.name } },
    );
  }
}

/** compile() settings from the flags, with `specs` as the input shapes. */
export function compileSettings(options: ModelOptions, specs: ReadonlyMap<string, NamedInputSpec>, progress: Progress): CompileSettings {
  const settings: CompileSettings = { onProgress: (e) => progress.onCompile(e), logger: cliLogger(options) };
  const precisions = precisionsOf(options);
  if (precisions !== undefined) settings.precisions = precisions;
  const device = deviceOf(options);
  if (device !== undefined) settings.device = { gpuId: device };
  if (options.backend) settings.backend = options.backend;
  if (options.minBlockSize !== undefined) settings.minBlockSize = parseInteger('--min-block-size', options.minBlockSize, 1);
  if (options.torchExecutedOps !== undefined) {
    const ops = options.torchExecutedOps.split(',').map((s) => s.trim());
    if (ops.some((o) => o.length === 0)) throw new UsageError(`--torch-executed-ops ${options.torchExecutedOps}: an empty entry (write op targets or node names separated by commas)`);
    settings.torchExecutedOps = ops;
  }
  if (options.requireFullCompilation) settings.requireFullCompilation = true;
  if (options.maxProgramBytes !== undefined) settings.maxProgramBytes = parseInteger('--max-program-bytes', options.maxProgramBytes, 1);
  if (specs.size > 0) settings.inputs = Object.fromEntries(specs);
  return settings;
}

/** Compile-only flags make no sense with a program file (it is already compiled). */
export function refuseCompileFlags(file: string, options: ModelOptions): void {
  for (const [key, flag] of COMPILE_FLAGS) {
    if (options[key] !== undefined) throw new UsageError(`${flag} applies when compiling a model; ${file} is a compiled program file`, { details: { flag, file } });
  }
}

/** A loaded program file, or a model ready to compile once the run's input shapes are known. */
export type Source =
  | { kind: 'program'; file: string; declared: readonly DeclaredInput[]; program: Program }
  | { kind: 'model'; file: string; declared: readonly DeclaredInput[]; graph: Graph };

/** Opens PROGRAM|MODEL: loads a `.trtp` (refusing compile flags), or imports a model. */
export async function openSource(file: string, options: ModelOptions, progress: Progress): Promise<Source> {
  if (isProgramFile(file)) {
    refuseCompileFlags(file, options);
    const device = deviceOf(options);
    progress.note(`loading ${file}`);
    const program = await loadProgram(file, {
      logger: cliLogger(options),
      ...(device === undefined ? {} : { device }),
      ...(options.backend === undefined ? {} : { backend: options.backend }),
      ...(options.rebuild === undefined ? {} : { rebuild: options.rebuild }),
    });
    return { kind: 'program', file, declared: program.inputs, program };
  }
  if (options.rebuild !== undefined) throw new UsageError(`--rebuild applies to program files (.trtp); ${file} is a model, compiled here`, { details: { flag: '--rebuild', file } });
  return openModel(file);
}

/** Imports a model (`.onnx`, `.pt2`, or a file of either format). */
export function openModel(file: string): Source & { kind: 'model' } {
  const graph = loadModel(file);
  return { kind: 'model', file, declared: declaredInputs(graph), graph };
}

/** The program of a source: the loaded one, or the model compiled for `specs`. */
export async function programOf(source: Source, options: ModelOptions, specs: ReadonlyMap<string, NamedInputSpec>, progress: Progress): Promise<Program> {
  if (source.kind === 'program') return source.program;
  checkShapesCovered(source.graph, specs);
  try {
    return await compile(source.graph, compileSettings(options, specs, progress));
  } finally {
    progress.stop();
  }
}

/** The support report of a model for `specs` (compile --dry-run). */
export async function dryRunOf(source: Source & { kind: 'model' }, options: ModelOptions, specs: ReadonlyMap<string, NamedInputSpec>, progress: Progress): Promise<PartitionReport> {
  checkShapesCovered(source.graph, specs);
  try {
    return await dryRun(source.graph, compileSettings(options, specs, progress));
  } finally {
    progress.stop();
  }
}

/** The compile specs of a run: the `--shape`s, and the shapes of the run's inputs for inputs without one. */
export function runSpecs(shapes: ReadonlyMap<string, NamedInputSpec>, inputs: Readonly<Record<string, { shape: readonly number[] }>>): Map<string, NamedInputSpec> {
  const specs = new Map(shapes);
  for (const [name, t] of Object.entries(inputs)) if (!specs.has(name)) specs.set(name, { shape: [...t.shape] });
  return specs;
}

