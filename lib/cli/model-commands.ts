/**
 * `tensorrt-node compile` and `tensorrt-node run`: the main job from the command line.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';

import { compile, dryRun, type CompileSettings } from '../compile';
import { InvalidArgumentError } from '../errors';
import { readNpy, writeNpy } from '../kernels/npy';
import { formatPartitionReport } from '../partitioning/partition';
import type { Tensor } from '../tensor';

export interface ModelOptions {
  shape?: string[];
  backend?: CompileSettings['backend'];
  minBlockSize?: string;
  torchExecutedOps?: string;
  requireFullCompilation?: boolean;
}

/** `name=1x3x224x224` → [name, [1, 3, 224, 224]]. */
export function parseShapeOption(text: string): [string, number[]] {
  const m = /^([^=]+)=(\d+(?:x\d+)*|scalar)$/.exec(text);
  if (!m) throw new InvalidArgumentError(`--shape ${JSON.stringify(text)} is not name=DxDxD (e.g. input0=1x3x224x224)`);
  return [m[1]!, m[2] === 'scalar' ? [] : m[2]!.split('x').map(Number)];
}

export function settingsFrom(options: ModelOptions, inputs?: Record<string, { shape: number[] }>): CompileSettings {
  const settings: CompileSettings = {};
  if (options.backend) settings.backend = options.backend;
  if (options.minBlockSize !== undefined) settings.minBlockSize = Number(options.minBlockSize);
  if (options.torchExecutedOps) settings.torchExecutedOps = options.torchExecutedOps.split(',').map((s) => s.trim());
  if (options.requireFullCompilation) settings.requireFullCompilation = true;
  const shapes = Object.fromEntries((options.shape ?? []).map(parseShapeOption).map(([n, s]) => [n, { shape: s }]));
  const all = { ...shapes, ...inputs };
  if (Object.keys(all).length > 0) settings.inputs = all;
  return settings;
}

/** `compile`: with --dry-run only the support report; otherwise compiles and describes the program. */
export async function compileCommand(model: string, options: ModelOptions & { dryRun?: boolean }, print: (s: string) => void): Promise<void> {
  const settings = settingsFrom(options);
  if (options.dryRun) {
    print(formatPartitionReport(await dryRun(model, settings)));
    return;
  }
  const program = await compile(model, settings);
  try {
    print(formatPartitionReport(program.report));
    print(String(program));
  } finally {
    await program.dispose();
  }
}

/** `run`: compiles for the shapes of the given .npy inputs, runs, writes outputs as .npy. */
export async function runCommand(
  model: string,
  options: ModelOptions & { input?: string[]; outputDir?: string },
  print: (s: string) => void,
): Promise<void> {
  // Null prototype: an input named "__proto__" is an ordinary key.
  const inputs: Record<string, Tensor> = Object.create(null);
  for (const spec of options.input ?? []) {
    const eq = spec.indexOf('=');
    if (eq <= 0) throw new InvalidArgumentError(`--input ${JSON.stringify(spec)} is not name=file.npy`);
    const file = spec.slice(eq + 1);
    let bytes: Uint8Array;
    try {
      bytes = fs.readFileSync(file);
    } catch (cause) {
      throw new InvalidArgumentError(`--input ${spec}: cannot read ${file}: ${(cause as Error).message}`, { cause });
    }
    inputs[spec.slice(0, eq)] = readNpy(bytes);
  }
  const program = await compile(model, settingsFrom(options, Object.fromEntries(Object.entries(inputs).map(([n, t]) => [n, { shape: [...t.shape] }]))));
  try {
    const started = process.hrtime.bigint();
    const outputs = await program.run(inputs);
    const ms = Number(process.hrtime.bigint() - started) / 1e6;
    const dir = options.outputDir ?? '.';
    fs.mkdirSync(dir, { recursive: true });
    program.outputs.forEach((io, i) => {
      const t = outputs[i]!;
      const file = path.join(dir, `${io.name.replace(/[^A-Za-z0-9_.-]/g, '_')}.npy`);
      fs.writeFileSync(file, writeNpy(t));
      print(`${io.name}: ${t.dtype}[${t.shape.join(', ')}] → ${file}`);
    });
    print(`ran in ${ms.toFixed(1)} ms on the ${program.backend} backend (${program.report.ops.filter((o) => o.converted).length}/${program.report.ops.length} ops in TensorRT segments)`);
  } finally {
    await program.dispose();
  }
}
