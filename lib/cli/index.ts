#!/usr/bin/env node
/**
 * The `tensorrt-node` command. Exit codes are documented in README.md ("Command line").
 */
import { Command } from 'commander';

import { probeDevices } from '../devices';
import { doctor, formatDoctorReport } from '../doctor';
import { VERSION } from '../version';
import { devicesExitCode, formatDevices } from './devices-command';
import { inspectCommand } from './inspect-command';
import { compileCommand, runCommand } from './model-commands';

function print(text: string): void {
  process.stdout.write(`${text}\n`);
}

export function buildProgram(): Command {
  const program = new Command('tensorrt-node')
    .description('Compile ONNX and torch.export models into TensorRT engines and run them')
    .version(VERSION)
    .showHelpAfterError();

  program
    .command('devices')
    .description('list CUDA devices (exit 0: listed, 2: no driver or no device, 1: error)')
    .option('--json', 'print JSON: {ok, driver, devices, error}')
    .action(async (options: { json?: boolean }) => {
      const probe = await probeDevices();
      print(options.json ? JSON.stringify(probe, null, 2) : formatDevices(probe));
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

  const collect = (value: string, previous: string[] = []): string[] => [...previous, value];
  const modelOptions = (cmd: Command): Command =>
    cmd
      .option('--backend <name>', 'auto (default), reference or tensorrt')
      .option('--min-block-size <n>', 'smallest TensorRT segment worth building (default 5)')
      .option('--torch-executed-ops <list>', 'comma-separated ops or node names to keep out of TensorRT')
      .option('--require-full-compilation', 'fail instead of falling back, listing every op that cannot run in TensorRT');

  modelOptions(
    program
      .command('compile <model>')
      .description('compile an .onnx or .pt2 model and report what runs in TensorRT and why not')
      .option('--shape <name=DxD>', 'static shape of an input with dynamic dims (repeatable)', collect)
      .option('--dry-run', 'only print the support report; build nothing'),
  ).action(async (model: string, options: Parameters<typeof compileCommand>[1]) => compileCommand(model, options, print));

  modelOptions(
    program
      .command('run <model>')
      .description('compile a model for the shapes of the given inputs, run it, and write its outputs as .npy files')
      .option('--input <name=file.npy>', 'an input tensor (repeatable)', collect)
      .option('--output-dir <dir>', 'where the output .npy files go (default: the current directory)'),
  ).action(async (model: string, options: Parameters<typeof runCommand>[1]) => runCommand(model, options, print));

  program
    .command('inspect <file>')
    .description('show what a .trtp program file holds: manifest, device requirements, I/O, segments')
    .option('--json', 'print the report as JSON')
    .action(async (file: string, options: { json?: boolean }) => inspectCommand(file, options, print));

  return program;
}

if (require.main === module) {
  buildProgram()
    .parseAsync(process.argv)
    .catch((error: unknown) => {
      const { code, message } = error as { code?: string; message?: string };
      process.stderr.write(`tensorrt-node: ${code ? `[${code}] ` : ''}${message ?? String(error)}\n`);
      process.exitCode = 1;
    });
}
