#!/usr/bin/env node
/**
 * The `tensorrt-node` command. Exit codes: 0 success; 1 a runtime or model error (its code
 * and message are printed); 2 a usage error (bad flag value, unknown flag, missing argument).
 * `devices` has its own (lib/cli/devices-command.ts). README.md ("Command line") lists them.
 */
import { Command, Option } from 'commander';

import { BACKEND_NAMES } from '../backends';
import { probeDevices } from '../devices';
import { doctor, formatDoctorReport } from '../doctor';
import { memoryOfDevices } from '../gpu/device';
import { VERSION } from '../version';
import { benchCommand, BENCH_DEFAULTS } from './bench-command';
import { calibrateCommand, calibrateOptions } from './calibrate-command';
import { exitCodeFor, formatCliError } from './cli-errors';
import { devicesExitCode, formatDevices } from './devices-command';
import { generateCommand, generateOptions } from './generate-command';
import { inspectCommand } from './inspect-command';
import { compileCommand, runCommand } from './model-commands';

function print(text: string): void {
  process.stdout.write(`${text}\n`);
}

const collect = (value: string, previous: string[] = []): string[] => [...previous, value];

const SHAPE_HELP = 'input shape name=DxD (e.g. input0=1x3x224x224) or range name=MIN:OPT:MAX (repeatable)';

/** Flags of every command that may compile a model (ignored for none: refused with a program file). */
function modelOptions(cmd: Command): Command {
  return cmd
    .option('--shape <name=dims>', SHAPE_HELP, collect)
    .addOption(new Option('--backend <name>', "the backend that builds and runs the engine segments; with a program file, the one its engines run on (others are rebuilt from the file's networks)").choices(['auto', ...BACKEND_NAMES]))
    .addOption(new Option('--rebuild <policy>', "program files: rebuild an engine that cannot run here (or that --backend replaces) from the file's network (auto, the default), or refuse (never)").choices(['auto', 'never']))
    .option('--min-block-size <n>', 'smallest engine segment worth building (default 5)')
    .option('--torch-executed-ops <list>', 'comma-separated op targets or node names to keep out of engine segments (run them in fallback segments)')
    .option('--require-full-compilation', 'fail instead of falling back, listing every op that cannot be converted')
    .option('--max-program-bytes <n>', 'most bytes of tensors a run may hold at once, planned at compile (default: the memory of the GPU or machine they live on)')
    .option('--fp16', 'allow fp16 kernels (the precisions setting; the tensorrt and cuda backends use it, the others warn that it changes nothing)')
    .option('--bf16', 'allow bf16 kernels (as --fp16)')
    .option('--tf32', 'allow TF32 for float32 matrix multiplies and convolutions (as --fp16)')
    .option('--precision <list>', 'precisions allowed besides fp32, comma-separated (tf32, fp16, bf16): the same as --tf32, --fp16, --bf16')
    .option('--device <ordinal>', 'the CUDA device (N or cuda:N) to build the engines for; with a program file, to load its engines on')
    .option('--verbose', "the library's info and debug lines on stderr (warnings always print)")
    .option('-q, --quiet', 'no progress on stderr')
    .option('--progress', "engine build phases (the backend's own, e.g. TensorRT's, with step/steps) on stderr also when it is not a terminal");
}

function runOptions(cmd: Command): Command {
  return cmd
    .option('--input <name=file.npy>', 'an input tensor from a .npy file (repeatable)', collect)
    .option('--random-inputs [seed]', 'fill inputs not given by --input with seeded random values (floats in [-1, 1), integers in [0, 10); seed default 0)');
}

export function buildProgram(): Command {
  const program = new Command('tensorrt-node')
    .description('Compile ONNX and torch.export models into engines (built by the tensorrt, cuda, onnxruntime or reference backend) and run them')
    .version(VERSION)
    .exitOverride()
    .showHelpAfterError('(add --help for usage)');

  program
    .command('devices')
    .description('list CUDA devices (exit 0: listed, 2: no driver or no device, 1: error)')
    .option('--json', 'print JSON: {ok, driver, devices, error, memory: [{device, freeBytes, totalBytes}]}')
    .action(async (options: { json?: boolean }) => {
      const probe = await probeDevices();
      const memory = await memoryOfDevices(probe.devices);
      print(options.json ? JSON.stringify({ ...probe, memory }, null, 2) : formatDevices(probe, memory));
      process.exitCode = devicesExitCode(probe);
    });

  program
    .command('doctor')
    .description('report what this installation can use (addon, CUDA driver, devices, TensorRT) and why not')
    .option('--json', 'print the report as JSON')
    .action(async (options: { json?: boolean }) => {
      const report = await doctor();
      print(options.json ? JSON.stringify(report, null, 2) : formatDoctorReport(report));
    });

  modelOptions(
    program
      .command('compile <model>')
      .description('compile an .onnx or .pt2 model, report which ops are converted into engine segments and why not, and with -o write the program file')
      .option('-o, --output <program.trtp>', 'write the compiled program to this file')
      .option('--dry-run', 'only print the support report; build nothing')
      .option('--json', 'print the report (and program) as JSON'),
  ).action(async (model: string, options: Parameters<typeof compileCommand>[1]) => compileCommand(model, options, print));

  runOptions(
    modelOptions(
      program
        .command('run <program-or-model>')
        .description('run a .trtp program file, or compile a model for the shapes of its inputs and run it; writes each output as a .npy file')
        .option('--output-dir <dir>', 'where the output .npy files go (default: the current directory)')
        .option('--json', 'print the outputs and report as JSON'),
    ),
  ).action(async (file: string, options: Parameters<typeof runCommand>[1]) => runCommand(file, options, print));

  runOptions(
    modelOptions(
      program
        .command('bench <program-or-model>')
        .description('latency percentiles (p50/p90/p99) and throughput of run() after warm-up')
        .option('--iterations <n>', `measured runs at most (default ${BENCH_DEFAULTS.iterations})`)
        .option('--warmup <n>', `runs before measuring (default ${BENCH_DEFAULTS.warmup})`)
        .option('--duration <seconds>', `stop measuring after this long (default ${BENCH_DEFAULTS.durationS})`)
        .option('--profile', `then time each layer (program.profile(), ${BENCH_DEFAULTS.profileRuns} runs or --iterations if fewer): a table of layer, kind, ms, share and source node; \`profile\` in --json`)
        .option('--json', 'print the result as JSON'),
    ),
  ).action(async (file: string, options: Parameters<typeof benchCommand>[1]) => benchCommand(file, options, print));

  modelOptions(
    program
      .command('inspect <program-or-model>')
      .description('show what a .trtp program file holds (manifest, device requirements, I/O, segments); a model is compiled first')
      .option('--json', 'print the report as JSON'),
  ).action(async (file: string, options: Parameters<typeof inspectCommand>[1]) => inspectCommand(file, options, print));

  generateOptions(
    program
      .command('generate <program-or-model>')
      .description('generate tokens with a causal LM that has a KV cache (Hugging Face Optimum layout), printing each step\'s token ids as they come'),
  ).action(async (file: string, options: Parameters<typeof generateCommand>[1]) => generateCommand(file, options, print));

  calibrateOptions(
    program
      .command('calibrate <model>')
      .description('post-training quantization: run an ONNX float model on calibration data (--data) and write its Q/DQ model (-o) for INT8 or FP8 engines'),
  ).action(async (model: string, options: Parameters<typeof calibrateCommand>[1]) => calibrateCommand(model, options, print));

  return program;
}

/** Runs the command line; resolves to the exit code. */
export async function main(argv: readonly string[]): Promise<number> {
  const program = buildProgram();
  try {
    await program.parseAsync([...argv]);
    return typeof process.exitCode === 'number' ? process.exitCode : 0;
  } catch (error) {
    const text = formatCliError(error, argv[2]);
    if (text !== null) process.stderr.write(`${text}\n`);
    return exitCodeFor(error);
  }
}

/**
 * Output to a reader that has gone (`tensorrt-node compile … | head -1`) is dropped rather than
 * thrown as an unhandled EPIPE: the command still finishes its work (a compile still writes
 * its -o file) and exits with its own code, as `yes | head` leaves `head` the last word.
 */
export function ignoreClosedPipes(...streams: NodeJS.WriteStream[]): void {
  for (const stream of streams) {
    stream.on('error', (error: NodeJS.ErrnoException) => {
      if (error.code !== 'EPIPE') throw error;
    });
  }
}

if (require.main === module) {
  ignoreClosedPipes(process.stdout, process.stderr);
  void main(process.argv).then((code) => {
    process.exitCode = code;
  });
}
