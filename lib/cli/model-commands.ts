/**
 * `tensorrt-node compile` and `tensorrt-node run`: the main job from the command line.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';

import { writeNpy } from '../kernels/npy';
import { formatOpCounts, formatPartitionReport, opCountSummary } from '../partitioning/report-format';
import type { Program } from '../runtime/program';
import { checkGivenInputs, readInputOptions, runInputs } from './inputs';
import { checkOutputDir, checkOutputFile, outputFileNames } from './paths';
import { dryRunOf, isProgramFile, openModel, openSource, programOf, runSpecs, type ModelOptions } from './program-source';
import { createProgress } from './progress';
import { parseInteger, parseShapeOptions, UsageError } from './usage';

type Print = (s: string) => void;

/** What `compile --json` and `run --json` say about a program. */
export function describeProgram(program: Program): Record<string, unknown> {
  return {
    backend: program.backend,
    inputs: program.inputs.map((io) => ({ name: io.name, dtype: io.dtype, shape: String(io.shape), ...(io.profiles === undefined ? {} : { profiles: io.profiles }) })),
    outputs: program.outputs.map((io) => ({ name: io.name, dtype: io.dtype, shape: String(io.shape) })),
    summary: opCountSummary(program.report),
    report: program.report,
  };
}

export interface CompileOptions extends ModelOptions {
  dryRun?: boolean;
  output?: string;
  json?: boolean;
}

/** `compile MODEL [-o program.trtp] [--dry-run]`. */
export async function compileCommand(model: string, options: CompileOptions, print: Print): Promise<void> {
  const shapes = parseShapeOptions(options.shape);
  if (options.dryRun && options.output !== undefined) throw new UsageError('-o writes a compiled program; --dry-run builds none: give one of them');
  if (options.output !== undefined) checkOutputFile('-o', options.output);
  if (isProgramFile(model)) throw new UsageError(`compile takes a model (.onnx or .pt2); ${model} is already a program file (see \`tensorrt-node inspect ${model}\`)`);
  const progress = createProgress(options);
  const source = openModel(model);
  if (options.dryRun) {
    const report = await dryRunOf(source, options, shapes, progress);
    print(options.json ? JSON.stringify({ summary: opCountSummary(report), report }, null, 2) : formatPartitionReport(report));
    return;
  }
  const program = await programOf(source, options, shapes, progress);
  try {
    if (options.output !== undefined) {
      // checkOutputFile allowed directories that do not exist yet under a writable one: make them.
      fs.mkdirSync(path.dirname(path.resolve(options.output)), { recursive: true });
      await program.save(options.output);
    }
    const bytes = options.output === undefined ? undefined : fs.statSync(options.output).size;
    if (options.json) {
      print(JSON.stringify({ ...(options.output === undefined ? {} : { file: options.output, bytes }), ...describeProgram(program) }, null, 2));
      return;
    }
    print(formatPartitionReport(program.report));
    print(String(program));
    if (options.output !== undefined) print(`wrote ${options.output} (${bytes} bytes); run it with \`tensorrt-node run ${options.output} --random-inputs\``);
  } finally {
    await program.dispose();
  }
}

export interface RunOptions extends ModelOptions {
  input?: string[];
  randomInputs?: string | boolean;
  outputDir?: string;
  json?: boolean;
}

/** The seed of `--random-inputs [seed]` (default 0), or undefined without the flag. */
export function randomSeed(value: string | boolean | undefined): number | undefined {
  if (value === undefined || value === false) return undefined;
  return value === true ? 0 : parseInteger('--random-inputs', value, 0);
}

/**
 * Reads the flags, opens PROGRAM|MODEL, makes the run's inputs and the program: the steps
 * `run` and `bench` share. Every flag is checked before the compile starts.
 */
export async function prepareRun(file: string, options: RunOptions, progress: ReturnType<typeof createProgress>): Promise<{ program: Program; inputs: Record<string, import('../ir/tensor').Tensor> }> {
  const shapes = parseShapeOptions(options.shape);
  const seed = randomSeed(options.randomInputs);
  const given = readInputOptions(options.input);
  const source = await openSource(file, options, progress);
  checkGivenInputs(source.declared, given, shapes);
  const inputs = runInputs(source.declared, given, shapes, seed, (message) => progress.info(message));
  const program = await programOf(source, options, runSpecs(shapes, inputs), progress);
  return { program, inputs };
}

/** `run PROGRAM|MODEL`: runs once and writes each output as a .npy file. */
export async function runCommand(file: string, options: RunOptions, print: Print): Promise<void> {
  const dir = options.outputDir ?? '.';
  checkOutputDir('--output-dir', dir);
  const progress = createProgress(options);
  const { program, inputs } = await prepareRun(file, options, progress);
  try {
    progress.note('running');
    const started = process.hrtime.bigint();
    const outputs = await program.run(inputs);
    const ms = Number(process.hrtime.bigint() - started) / 1e6;
    progress.stop();
    fs.mkdirSync(dir, { recursive: true });
    const names = outputFileNames(program.outputs.map((io) => io.name));
    const written = program.outputs.map((io, i) => {
      const t = outputs[i]!;
      const out = path.join(dir, names[i]!);
      fs.writeFileSync(out, writeNpy(t));
      return { name: io.name, dtype: t.dtype, shape: [...t.shape], file: out };
    });
    if (options.json) {
      print(JSON.stringify({ ms, outputs: written, program: describeProgram(program) }, null, 2));
      return;
    }
    for (const w of written) print(`${w.name}: ${w.dtype}[${w.shape.join(', ')}] → ${w.file}`);
    print([`ran in ${ms.toFixed(1)} ms on the ${program.backend} backend; ${formatOpCounts(program.report)[0]}`, formatOpCounts(program.report)[1]].join('\n'));
  } finally {
    await program.dispose();
  }
}
