/**
 * Compiling a causal LM for generation: the input ranges a KV-cache program needs, from the
 * model's own inputs. generate() runs the program at many shapes (the prompt, then one token at
 * a time over a growing cache), so every length dim is dynamic:
 *
 *   input_ids, position_ids   [1..maxBatch, 1..maxLength]          opt [maxBatch, 1]
 *   attention_mask            [1..maxBatch, 1..maxLength]          opt [maxBatch, L/2 + 1]
 *   past_key_values.N.*       [1..maxBatch, heads, 0..maxLength-1, headDim]   opt past L/2
 *   use_cache_branch          [1]
 *
 * The optimization profile is tuned (opt) for a decode step, where generation spends its time.
 * A dim the model fixes keeps its size.
 */
import { compile, type CompileSettings } from '../compile';
import type { NamedInputSpec } from '../compile/settings';
import { loadModel, type ModelSource } from '../compile/load-model';
import { InvalidArgumentError } from '../errors';
import type { Graph } from '../ir/graph';
import { isStatic, type Dim } from '../ir/symbolic';
import type { Program } from '../runtime/program';
import { discoverLayout, type KvCacheLayout, type NamedIO } from './layout';

/** The sizes a program compiled for generation takes. */
export interface GenerationSizes {
  /** Most tokens in a row, prompt and new tokens together (the attention mask's length at most). */
  maxLength: number;
  /** Most prompts in one generation (default 1). */
  maxBatch?: number;
}

/** compile()'s settings less `inputs` (made from the sizes), plus the sizes. */
export interface GenerationCompileSettings extends Omit<CompileSettings, 'inputs'>, GenerationSizes {}

function checkSizes(sizes: GenerationSizes): Required<GenerationSizes> {
  const maxBatch = sizes.maxBatch ?? 1;
  if (!Number.isSafeInteger(sizes.maxLength) || sizes.maxLength < 1) throw new InvalidArgumentError(`maxLength must be an integer >= 1, got ${String(sizes.maxLength)}`);
  if (!Number.isSafeInteger(maxBatch) || maxBatch < 1) throw new InvalidArgumentError(`maxBatch must be an integer >= 1, got ${String(sizes.maxBatch)}`);
  return { maxLength: sizes.maxLength, maxBatch };
}

/** The inputs of `graph` as the layout reads them. */
function graphIO(graph: Graph): { inputs: NamedIO[]; outputs: NamedIO[] } {
  return {
    inputs: graph.inputs.map((v) => ({ name: v.name, dtype: v.tensorType.dtype, shape: v.tensorType.shape })),
    outputs: graph.outputs.map((v, i) => ({ name: graph.outputNames[i] ?? v.name, dtype: v.tensorType.dtype, shape: v.tensorType.shape })),
  };
}

/**
 * @internal The layout of a model graph (`what` names it in the error): what
 * compileForGeneration() checks first; the CLI asks it with the file's name.
 */
export function modelLayout(graph: Graph, what: string): KvCacheLayout {
  const io = graphIO(graph);
  return discoverLayout(io.inputs, io.outputs, what);
}

/**
 * compile()'s `inputs` for generating with a model whose inputs are `inputs` and layout
 * `layout`, at most `sizes`. An input with a dim that is a size expression (a .pt2 export may
 * write attention_mask's length as past + seq) is left out: its symbols get their ranges from
 * the inputs that have them alone.
 */
export function generationInputs(inputs: readonly NamedIO[], layout: KvCacheLayout, sizes: GenerationSizes): Record<string, NamedInputSpec> {
  const { maxBatch, maxLength } = checkSizes(sizes);
  const pastOpt = Math.floor(maxLength / 2);
  type Role = { min: number; opt: number; max: number };
  const batch: Role = { min: 1, opt: maxBatch, max: maxBatch };
  const seq: Role = { min: 1, opt: 1, max: maxLength };
  const roles = new Map<string, ReadonlyArray<Role | null>>([
    [layout.inputIds, [batch, seq]],
    [layout.attentionMask, [batch, { min: 1, opt: Math.min(pastOpt + 1, maxLength), max: maxLength }]],
  ]);
  if (layout.positionIds !== undefined) roles.set(layout.positionIds, [batch, seq]);
  if (layout.useCacheBranch !== undefined) roles.set(layout.useCacheBranch, [null]);
  for (const layer of layout.layers) {
    for (const name of [layer.pastKey, layer.pastValue]) roles.set(name, [batch, null, { min: 0, opt: pastOpt, max: maxLength - 1 }, null]);
  }
  const specs: Record<string, NamedInputSpec> = {};
  for (const io of inputs) {
    const dims = roles.get(io.name);
    if (dims === undefined || io.shape.some((d: Dim) => !isStatic(d) && d.op !== 'sym')) continue;
    const at = (key: 'min' | 'opt' | 'max'): number[] => io.shape.map((d, i) => (isStatic(d) ? d : (dims[i]?.[key] ?? 1)));
    specs[io.name] = io.shape.every(isStatic) ? { shape: at('min') } : { min: at('min'), opt: at('opt'), max: at('max') };
  }
  return specs;
}

/**
 * Compiles `model` (a path, bytes or Graph, as compile() takes) for generate(): the KV-cache
 * layout is checked first (the error lists what is missing), then every input is given the
 * ranges of {@link generationInputs}; the other settings go to compile() as they are.
 *
 * @throws {InvalidArgumentError} `E_INVALID_ARGUMENT`: not a KV-cache LM, bad sizes, or `inputs` given (they are made here).
 */
export async function compileForGeneration(model: ModelSource, settings: GenerationCompileSettings): Promise<Program> {
  const { maxLength, maxBatch, ...rest } = settings;
  if ('inputs' in rest) throw new InvalidArgumentError('compileForGeneration(): inputs are made from maxBatch and maxLength; give those instead');
  const sizes = checkSizes({ maxLength, ...(maxBatch === undefined ? {} : { maxBatch }) });
  const graph = loadModel(model, rest.baseDir === undefined ? {} : { baseDir: rest.baseDir });
  const io = graphIO(graph);
  const layout = discoverLayout(io.inputs, io.outputs, typeof model === 'string' ? model : 'the model');
  const { baseDir: _baseDir, ...compileRest } = rest;
  return compile(graph, { ...compileRest, inputs: generationInputs(io.inputs, layout, sizes) });
}
