#!/usr/bin/env node
/**
 * The `tensorrt-node` command. Exit codes are documented in README.md ("Command line").
 */
import { Command } from 'commander';

import { probeDevices } from '../devices';
import { doctor, formatDoctorReport } from '../doctor';
import { VERSION } from '../version';
import { devicesExitCode, formatDevices } from './devices-command';

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
