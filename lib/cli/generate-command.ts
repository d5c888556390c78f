/**
 * `tensorrt-node generate PROGRAM|MODEL --prompt-ids 1,2,3 [--prompt-ids ...]`: text
 * generation with a causal LM that has a KV cache (docs/generate.md), printing the token ids
 * of each step as they come. A model is compiled for generation (compileForGeneration, with
 * --max-length and --max-batch; -o saves the program for later runs); a program file must have
 * been compiled that way. Ctrl-C aborts the generation (E_ABORTED, exit 1).
 */
import * as fs from 'node:fs';
import * as path from 'node:path';

import { Command, Option } from 'commander';

import { BACKEND_NAMES } from '../backends';
import { InvalidArgumentError } from '../errors';
import { compileForGeneration, createGenerator, type GenerateOptions, type GenerateStep, type Generator } from '../generate';
import { modelLayout } from '../generate/compile';
import type { Program } from '../runtime/program';
import { checkOutputFile } from './paths';
import { compileSettings, isProgramFile, openModel, openSource, type ModelOptions } from './program-source';
import { createProgress } from './progress';
import { parseInteger, UsageError } from './usage';

type Print = (s: string) => void;

export interface GenerateCommandOptions extends Omit<ModelOptions, 'shape' | 'minBlockSize' | 'torchExecutedOps' | 'requireFullCompilation' | 'maxProgramBytes'> {
  promptIds?: string[];
  maxNewTokens?: string;
  temperature?: string;
  topK?: string;
  topP?: string;
  seed?: string;
  stopIds?: string;
  padId?: string;
  sizes?: 'auto' | 'exact' | 'bucketed';
  maxLength?: string;
  maxBatch?: string;
  output?: string;
  json?: boolean;
}

const collect = (value: string, previous: string[] = []): string[] => [...previous, value];

/** The flags of `generate` (besides the model flags it shares with the other commands). */
export function generateOptions(cmd: Command): Command {
  return cmd
    .option('--prompt-ids <ids>', 'a prompt as comma-separated token ids (repeat the flag for a batch; shorter prompts are left-padded)', collect)
    .option('--max-new-tokens <n>', 'new tokens per prompt at most (default 20)')
    .option('--temperature <t>', 'sampling temperature; 0 (the default without --top-k/--top-p) is greedy')
    .option('--top-k <k>', 'sample among the k most likely tokens')
    .option('--top-p <p>', 'sample among the most likely tokens whose probabilities reach p, in (0, 1]')
    .option('--seed <n>', 'seed of the sampling (the same seed gives the same tokens)')
    .option('--stop-ids <ids>', 'comma-separated token ids that end a prompt (its end-of-sequence ids)')
    .option('--pad-id <id>', 'the token id fed where there is none (default: the first stop id, else 0)')
    .addOption(
      new Option('--sizes <how>', "run sizes: exact, or bucketed (the prompt padded and the cache grown in steps, masked out: few shapes for the cuda backend's per-shape plans); auto (the default): bucketed when the cache is on the GPU and the model takes position_ids").choices([
        'auto',
        'exact',
        'bucketed',
      ]),
    )
    .option('--max-length <n>', 'models: the most tokens a row may reach, prompt included, that the program is compiled for (default: the longest prompt + --max-new-tokens)')
    .option('--max-batch <n>', 'models: the most prompts one generation takes, that the program is compiled for (default: the number of prompts)')
    .option('-o, --output <program.trtp>', 'models: also save the compiled program (then --prompt-ids may be left out)')
    .addOption(new Option('--backend <name>', "the backend that builds and runs the engine segments; with a program file, the one its engines run on").choices(['auto', ...BACKEND_NAMES]))
    .addOption(new Option('--rebuild <policy>', "program files: rebuild an engine that cannot run here (auto, the default), or refuse (never)").choices(['auto', 'never']))
    .option('--fp16', 'allow fp16 kernels (the tensorrt and cuda backends use it)')
    .option('--bf16', 'allow bf16 kernels (as --fp16)')
    .option('--tf32', 'allow TF32 for float32 matrix multiplies (as --fp16)')
    .option('--precision <list>', 'precisions allowed besides fp32, comma-separated (tf32, fp16, bf16)')
    .option('--device <ordinal>', 'the CUDA device (N or cuda:N) to build for, or to load a program file\'s engines on')
    .option('--json', 'print each step as a JSON line {"step", "tokens"}, then {"tokens", "finishReasons", "steps"}')
    .option('--verbose', "the library's info and debug lines on stderr")
    .option('-q, --quiet', 'no progress and no summary on stderr')
    .option('--progress', 'engine build phases on stderr also when it is not a terminal');
}

/** `1,2,3` → [1, 2, 3] for `flag`: token ids (integers >= 0). */
export function parseIds(flag: string, text: string): number[] {
  const parts = text.split(',').map((s) => s.trim());
  if (parts.some((p) => p.length === 0)) throw new UsageError(`${flag} ${text}: an empty entry (write token ids separated by commas, e.g. 15496,11,995)`);
  return parts.map((p) => parseInteger(flag, p, 0));
}

/** A number for `flag` (`0.7`, `1`, `.5`). */
function parseNumber(flag: string, text: string): number {
  const n = /^(\d+\.?\d*|\.\d+)$/.test(text) ? Number(text) : NaN;
  if (!Number.isFinite(n)) throw new UsageError(`${flag} ${text}: expected a number >= 0, e.g. 0.7`);
  return n;
}

/** Library option names → the flags that set them, for messages. */
const FLAG_OF: ReadonlyArray<[RegExp, string]> = [
  [/\bmaxNewTokens\b/g, '--max-new-tokens'],
  [/\btopK\b/g, '--top-k'],
  [/\btopP\b/g, '--top-p'],
  [/\btemperature\b/g, '--temperature'],
  [/\bstopTokenIds\b/g, '--stop-ids'],
  [/\bpadTokenId\b/g, '--pad-id'],
  [/\bsizes: '(\w+)'/g, '--sizes $1'],
  [/\bmaxBatch\b/g, '--max-batch'],
  [/\bmaxLength\b/g, '--max-length'],
];
const inFlags = (message: string): string => FLAG_OF.reduce((m, [pattern, flag]) => m.replace(pattern, flag), message);

/** The generation options of the flags. */
function generationFlags(options: GenerateCommandOptions, signal: AbortSignal): GenerateOptions {
  const o: GenerateOptions = { signal };
  if (options.maxNewTokens !== undefined) o.maxNewTokens = parseInteger('--max-new-tokens', options.maxNewTokens, 1);
  if (options.temperature !== undefined) o.temperature = parseNumber('--temperature', options.temperature);
  if (options.topK !== undefined) o.topK = parseInteger('--top-k', options.topK, 1);
  if (options.topP !== undefined) o.topP = parseNumber('--top-p', options.topP);
  if (options.seed !== undefined) o.seed = parseInteger('--seed', options.seed, 0);
  if (options.stopIds !== undefined) o.stopTokenIds = parseIds('--stop-ids', options.stopIds);
  if (options.padId !== undefined) o.padTokenId = parseInteger('--pad-id', options.padId, 0);
  return o;
}

/** The program: a program file loaded, or the model compiled for generation. */
async function generationProgram(file: string, options: GenerateCommandOptions, prompts: number[][], maxNewTokens: number, progress: ReturnType<typeof createProgress>): Promise<Program> {
  if (isProgramFile(file)) {
    for (const [key, flag] of [['maxLength', '--max-length'], ['maxBatch', '--max-batch'], ['output', '-o']] as const) {
      if (options[key] !== undefined) throw new UsageError(`${flag} applies when compiling a model; ${file} is a compiled program file, whose sizes are fixed (\`tensorrt-node inspect ${file}\` shows them)`, { details: { flag, file } });
    }
    const source = await openSource(file, options, progress);
    return (source as { program: Program }).program;
  }
  if (options.rebuild !== undefined) throw new UsageError(`--rebuild applies to program files (.trtp); ${file} is a model, compiled here`, { details: { flag: '--rebuild', file } });
  const longest = Math.max(0, ...prompts.map((p) => p.length));
  const maxLength = options.maxLength !== undefined ? parseInteger('--max-length', options.maxLength, 1) : longest + maxNewTokens;
  const maxBatch = options.maxBatch !== undefined ? parseInteger('--max-batch', options.maxBatch, 1) : Math.max(1, prompts.length);
  const source = openModel(file);
  // Checked here to name the file: compileForGeneration() sees only the graph.
  modelLayout(source.graph, file);
  try {
    return await compileForGeneration(source.graph, { ...compileSettings(options, new Map(), progress), maxLength, maxBatch });
  } catch (error) {
    throw error instanceof InvalidArgumentError && /^(maxLength|maxBatch) /.test(error.message) ? new UsageError(inFlags(error.message)) : error;
  } finally {
    progress.stop();
  }
}

/** `generate PROGRAM|MODEL --prompt-ids ... [--max-new-tokens n] [sampling flags] [--json]`. */
export async function generateCommand(file: string, options: GenerateCommandOptions, print: Print): Promise<void> {
  const prompts = (options.promptIds ?? []).map((p) => parseIds('--prompt-ids', p));
  if (prompts.length === 0 && options.output === undefined) throw new UsageError('give a prompt: --prompt-ids 1,2,3 (token ids from the model\'s tokenizer; repeat the flag for a batch)');
  if (options.output !== undefined) checkOutputFile('-o', options.output);
  const controller = new AbortController();
  const flags = generationFlags(options, controller.signal);
  const progress = createProgress(options);
  const program = await generationProgram(file, options, prompts, flags.maxNewTokens ?? 20, progress);
  try {
    if (options.output !== undefined) {
      fs.mkdirSync(path.dirname(path.resolve(options.output)), { recursive: true });
      await program.save(options.output);
      if (!options.quiet) process.stderr.write(`tensorrt-node: wrote ${options.output}; generate with it: tensorrt-node generate ${options.output} --prompt-ids ...\n`);
    }
    if (prompts.length === 0) return;
    let generator: Generator;
    try {
      generator = createGenerator(program, options.sizes === undefined ? {} : { sizes: options.sizes });
    } catch (error) {
      // A program that cannot generate is the file's problem (exit 1); --sizes the model cannot take is the flag's.
      throw error instanceof InvalidArgumentError && options.sizes !== undefined && /\bsizes: /.test(error.message) ? new UsageError(inFlags(error.message)) : error;
    }
    let steps: AsyncIterableIterator<GenerateStep>;
    try {
      steps = generator.stream(prompts, flags);
    } catch (error) {
      // Checked before anything ran: a request the flags got wrong.
      throw error instanceof InvalidArgumentError ? new UsageError(inFlags(error.message), { details: error.details }) : error;
    }
    const interrupt = (): void => controller.abort(new Error('interrupted (SIGINT)'));
    process.once('SIGINT', interrupt);
    const tokens: number[][] = prompts.map(() => []);
    const started = performance.now();
    let count = 0;
    try {
      for await (const step of steps) {
        count = step.step + 1;
        step.tokens.forEach((t, r) => {
          if (t !== null) tokens[r]!.push(t);
        });
        print(options.json ? JSON.stringify(step) : step.tokens.map((t) => (t === null ? '-' : String(t))).join(' '));
      }
    } finally {
      process.removeListener('SIGINT', interrupt);
      await generator.dispose();
    }
    const ms = performance.now() - started;
    const stops = new Set(flags.stopTokenIds ?? []);
    const finishReasons = tokens.map((row) => (stops.has(row[row.length - 1]!) ? 'stop' : 'length'));
    if (options.json) print(JSON.stringify({ tokens, finishReasons, steps: count }));
    if (!options.quiet) {
      const made = tokens.reduce((n, row) => n + row.length, 0);
      process.stderr.write(
        `tensorrt-node: ${made} token${made === 1 ? '' : 's'} for ${prompts.length} prompt${prompts.length === 1 ? '' : 's'} in ${count} step${count === 1 ? '' : 's'}, ${ms.toFixed(1)} ms ` +
          `(${(ms / Math.max(count, 1)).toFixed(2)} ms a step) on the ${program.backend} backend; finished: ${finishReasons.join(', ')}\n`,
      );
    }
  } finally {
    await program.dispose();
  }
}
