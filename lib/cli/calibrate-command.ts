/**
 * `tensorrt-node calibrate MODEL.onnx --data DIR -o MODEL.qdq.onnx`: post-training calibration
 * (calibrate(), docs/quantization.md) from files of NumPy arrays. `--data` is one of
 * - a folder of `.npz` files, one batch each (numpy.savez(path, input_name=array, ...));
 * - a folder of folders, one batch each, holding `<input name>.npy` per input;
 * - a folder of `.npy` files, one batch each, for a model with one input;
 * - one `.npz` file: a single batch.
 * Batches are taken in name order (numbers in names compared as numbers: batch_2 before
 * batch_10) and read one at a time. Prints the report (a table, or JSON with --json); Ctrl-C
 * aborts (E_ABORTED, exit 1).
 */
import * as fs from 'node:fs';
import * as path from 'node:path';

import { Command, Option } from 'commander';

import { InvalidArgumentError } from '../errors';
import { withZipErrors, ZipArchive } from '../io/zip/reader';
import type { Tensor } from '../ir/tensor';
import { readNpy } from '../kernels/npy';
import { feedNames, readModelBytes } from '../quantization/onnx-model';
import { calibrate, DEFAULT_PERCENTILE, type CalibrationBatch, type CalibrationMethod, type CalibrationPrecision, type CalibrationReport } from '../quantization';
import { cliLogger } from './log';
import { checkOutputFile } from './paths';
import { createProgress } from './progress';
import { UsageError } from './usage';

type Print = (s: string) => void;

export interface CalibrateCommandOptions {
  data?: string;
  method?: CalibrationMethod;
  percentile?: string;
  precision?: CalibrationPrecision;
  perTensorWeights?: boolean;
  ops?: string;
  exclude?: string;
  output?: string;
  json?: boolean;
  verbose?: boolean;
  quiet?: boolean;
  progress?: boolean;
}

/** The flags of `calibrate`. */
export function calibrateOptions(cmd: Command): Command {
  return cmd
    .option('--data <path>', 'calibration batches: a folder of .npz files (one batch each), of folders of <input>.npy files, or of .npy files (one-input models); or one .npz file')
    .addOption(new Option('--method <name>', 'how each activation\'s range is chosen (default minmax)').choices(['minmax', 'entropy', 'percentile']))
    .option('--percentile <p>', `the percentile of |x| kept by --method percentile, in (0, 100] (default ${DEFAULT_PERCENTILE})`)
    .addOption(new Option('--precision <type>', 'int8 (symmetric, scale = amax/127) or fp8 (float8e4m3fn, scale = amax/448; opset 19) (default int8)').choices(['int8', 'fp8']))
    .option('--per-tensor-weights', 'one scale per weight instead of one per output channel')
    .option('--ops <list>', 'comma-separated op types whose inputs are quantized (default Conv,ConvTranspose,MatMul,Gemm)')
    .option('--exclude <list>', 'comma-separated names of nodes to leave in float')
    .option('-o, --output <model.qdq.onnx>', 'where the Q/DQ model goes')
    .option('--json', 'print the report as JSON')
    .option('--verbose', "the library's info and debug lines on stderr (warnings always print)")
    .option('-q, --quiet', 'no progress on stderr')
    .option('--progress', 'progress lines on stderr also when it is not a terminal');
}

/** One batch's file(s), read when its turn comes. */
interface BatchSource {
  readonly label: string;
  read(): CalibrationBatch;
}

/** `a`, `b` in name order, numbers within names compared as numbers. */
const byName = (a: string, b: string): number => a.localeCompare(b, 'en', { numeric: true });

function npyFile(file: string, input: string): Tensor {
  let bytes: Uint8Array;
  try {
    bytes = fs.readFileSync(file);
  } catch (cause) {
    throw new UsageError(`--data: cannot read ${file}: ${(cause as Error).message}`, { cause, details: { flag: '--data', file } });
  }
  try {
    return readNpy(bytes);
  } catch (cause) {
    throw new UsageError(`--data: ${file} (input "${input}") cannot be read as .npy: ${(cause as Error).message}`, { cause, details: { flag: '--data', file, input } });
  }
}

/** The batch in an .npz file: each `<name>.npy` entry is input `name`. */
export function readNpz(file: string): CalibrationBatch {
  let bytes: Uint8Array;
  try {
    bytes = fs.readFileSync(file);
  } catch (cause) {
    throw new UsageError(`--data: cannot read ${file}: ${(cause as Error).message}`, { cause, details: { flag: '--data', file } });
  }
  const bad = (message: string, options: { cause: unknown; details: Record<string, unknown> }): Error => new UsageError(`--data: ${file} is not a readable .npz file: ${message}`, options);
  return withZipErrors(
    () => {
      const archive = ZipArchive.open(bytes);
      const batch: Record<string, Tensor> = {};
      for (const entry of archive.entries) {
        if (entry.name.endsWith('/')) continue;
        const name = entry.name.replace(/\.npy$/, '');
        try {
          batch[name] = readNpy(archive.read(entry.name));
        } catch (cause) {
          if ((cause as Error).name === 'ZipError') throw cause;
          throw new UsageError(`--data: ${file}: entry ${entry.name} cannot be read as .npy: ${(cause as Error).message}`, { cause, details: { flag: '--data', file, entry: entry.name } });
        }
      }
      return batch;
    },
    file,
    bad,
  );
}

/**
 * The batches `--data` names, in order, for a model whose inputs are `inputs`.
 *
 * @throws {UsageError} naming `--data`: nothing there, or a layout that does not fit the model.
 */
export function calibrationData(data: string, inputs: readonly string[]): BatchSource[] {
  let stat: fs.Stats;
  try {
    stat = fs.statSync(data);
  } catch (cause) {
    throw new UsageError(`--data ${data}: no such file or folder`, { cause, details: { flag: '--data', path: data } });
  }
  if (stat.isFile()) {
    if (!data.endsWith('.npz')) throw new UsageError(`--data ${data}: a single file must be an .npz of one batch (numpy.savez); for several batches give a folder`, { details: { flag: '--data', path: data } });
    return [{ label: data, read: () => readNpz(data) }];
  }
  const entries = fs.readdirSync(data, { withFileTypes: true }).filter((e) => !e.name.startsWith('.')).sort((a, b) => byName(a.name, b.name));
  const npz = entries.filter((e) => e.isFile() && e.name.endsWith('.npz'));
  const npy = entries.filter((e) => e.isFile() && e.name.endsWith('.npy'));
  const dirs = entries.filter((e) => e.isDirectory());
  const kinds = [npz, npy, dirs].filter((k) => k.length > 0).length;
  if (kinds === 0) {
    throw new UsageError(`--data ${data}: the folder has no .npz files, .npy files or batch folders`, { details: { flag: '--data', path: data } });
  }
  if (kinds > 1) {
    throw new UsageError(`--data ${data}: the folder mixes .npz files, .npy files and folders; keep one kind (one batch each)`, { details: { flag: '--data', path: data } });
  }
  if (npz.length > 0) return npz.map((e) => ({ label: e.name, read: () => readNpz(path.join(data, e.name)) }));
  if (npy.length > 0) {
    if (inputs.length !== 1) {
      throw new UsageError(
        `--data ${data}: a folder of .npy files gives one tensor a batch, and the model has ${inputs.length} inputs (${inputs.join(', ')}); ` +
          'give a folder per batch holding <input>.npy files, or an .npz per batch',
        { details: { flag: '--data', path: data } },
      );
    }
    return npy.map((e) => ({ label: e.name, read: () => ({ [inputs[0]!]: npyFile(path.join(data, e.name), inputs[0]!) }) }));
  }
  return dirs.map((d) => ({
    label: d.name,
    read: () => {
      const folder = path.join(data, d.name);
      const batch: Record<string, Tensor> = {};
      for (const f of fs.readdirSync(folder).filter((n) => n.endsWith('.npy'))) batch[f.slice(0, -4)] = npyFile(path.join(folder, f), f.slice(0, -4));
      return batch;
    },
  }));
}

/** The graph inputs of an ONNX model, for reading `--data` (calibrate() reads the model again, weights and all). */
function modelInputs(model: string): string[] {
  const { bytes, name } = readModelBytes(model);
  return feedNames(bytes, name);
}

const list = (flag: string, text: string): string[] => {
  const items = text.split(',').map((s) => s.trim());
  if (items.some((s) => s.length === 0)) throw new UsageError(`${flag} ${text}: an empty entry (write names separated by commas)`);
  return items;
};

/** The report as a table of the activations and a summary. */
export function formatCalibrationReport(r: CalibrationReport): string {
  const lines = [
    `calibrated ${r.quantizedNodes} node(s) from ${r.batches} batch(es) with ${r.runner === 'none' ? 'no run' : r.runner}: ${r.method}${r.percentile !== undefined ? ` ${r.percentile}` : ''}, ${r.precision}, ` +
      `${r.perChannelWeights ? 'per-channel' : 'per-tensor'} weights, opset ${r.opset.from}${r.opset.to !== r.opset.from ? ` → ${r.opset.to}` : ''}`,
  ];
  if (r.activations.length > 0) {
    const rows = r.activations.map((a) => [a.tensor, a.amax.toPrecision(5), a.max.toPrecision(5), a.scale.toExponential(4), a.consumers.join(', ')]);
    const head = ['activation', 'amax', 'max |x|', 'scale', 'read by'];
    const widths = head.map((h, i) => Math.max(h.length, ...rows.map((row) => row[i]!.length)));
    const line = (cells: string[]): string => cells.map((c, i) => c.padEnd(widths[i]!)).join('  ').trimEnd();
    lines.push(line(head), ...rows.map(line));
  }
  if (r.weights.length > 0) lines.push(`weights stored quantized: ${r.weights.map((w) => `${w.tensor}${w.axis === null ? '' : ` (axis ${w.axis}, ${w.scale.length} scales)`}`).join(', ')}`);
  for (const s of r.skipped) lines.push(`left float: ${s.what}: ${s.reason}`);
  return lines.join('\n');
}

/** `calibrate MODEL --data PATH -o OUT [--method m] [--precision p] ...`. */
export async function calibrateCommand(model: string, options: CalibrateCommandOptions, print: Print): Promise<void> {
  if (options.data === undefined) throw new UsageError('give the calibration data: --data <folder of .npz files, or of .npy files / batch folders>');
  if (options.output === undefined) throw new UsageError('give the output file: -o model.qdq.onnx');
  checkOutputFile('-o', options.output);
  let percentile: number | undefined;
  if (options.percentile !== undefined) {
    percentile = /^(\d+\.?\d*|\.\d+)$/.test(options.percentile) ? Number(options.percentile) : NaN;
    if (!(percentile > 0 && percentile <= 100)) throw new UsageError(`--percentile ${options.percentile}: expected a number in (0, 100], e.g. 99.99`);
    if (options.method !== 'percentile') throw new UsageError('--percentile applies to --method percentile');
  }
  const sources = calibrationData(options.data, modelInputs(model));
  const progress = createProgress(options);
  const controller = new AbortController();
  const interrupt = (): void => controller.abort(new Error('interrupted (SIGINT)'));
  process.once('SIGINT', interrupt);
  progress.task('calibrating', sources.length);
  let result;
  try {
    result = await calibrate(
      model,
      (function* batches() {
        for (const s of sources) yield s.read();
      })(),
      {
        method: options.method,
        percentile,
        precision: options.precision,
        perChannelWeights: options.perTensorWeights === true ? false : undefined,
        ops: options.ops === undefined ? undefined : list('--ops', options.ops),
        exclude: options.exclude === undefined ? undefined : list('--exclude', options.exclude),
        output: options.output,
        onProgress: () => progress.tick(),
        signal: controller.signal,
        logger: cliLogger(options),
      },
    );
  } catch (error) {
    // A bad option value came from a flag.
    throw error instanceof InvalidArgumentError && /^calibrate options: /.test(error.message) ? new UsageError(error.message.replace(/^calibrate options: /, '')) : error;
  } finally {
    process.removeListener('SIGINT', interrupt);
    progress.stop();
  }
  print(options.json ? JSON.stringify(result.report, null, 2) : formatCalibrationReport(result.report));
  if (!options.quiet) process.stderr.write(`tensorrt-node: wrote ${options.output}\n`);
}
