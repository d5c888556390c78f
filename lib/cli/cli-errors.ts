/**
 * How failures reach the terminal: usage errors (exit 2) say what to type; runtime and model
 * errors (exit 1) print their code and message, with the library's setting names replaced by
 * the flags that set them.
 */
import { CommanderError } from 'commander';

import { InvalidArgumentError, TensorRTNodeError } from '../errors';
import { UsageError } from './usage';

export const EXIT = { ok: 0, error: 1, usage: 2 } as const;

/** Library vocabulary → CLI vocabulary, for messages of errors the library raises. */
const VOCABULARY: ReadonlyArray<[RegExp, string]> = [
  [/^compile settings: /, ''],
  [/settings\.inputs(: )?/g, '--shape$1'],
  [/torchExecutedOps/g, '--torch-executed-ops'],
  [/minBlockSize/g, '--min-block-size'],
  [/the default maxProgramBytes/g, 'the default --max-program-bytes'],
  [/maxProgramBytes/g, '--max-program-bytes'],
  [/requireFullCompilation is set/g, '--require-full-compilation is given'],
  [/requireFullCompilation/g, '--require-full-compilation'],
  [/\bbackend "tensorrt" was asked for/g, '--backend tensorrt was given'],
];

/** The message in CLI terms. */
export function cliMessage(message: string): string {
  return VOCABULARY.reduce((m, [pattern, replacement]) => m.replace(pattern, replacement), message);
}

/** 2 for usage errors (ours, and commander's: unknown flags, missing arguments), else 1. */
export function exitCodeFor(error: unknown): number {
  if (error instanceof CommanderError) return error.exitCode === 0 ? EXIT.ok : EXIT.usage;
  if (error instanceof UsageError) return EXIT.usage;
  // Bad settings values that came from flags (a --torch-executed-ops name, a --shape range) are usage errors too.
  if (error instanceof InvalidArgumentError && /^compile settings: |^settings\.inputs: /.test(error.message)) return EXIT.usage;
  return EXIT.error;
}

/** The line(s) printed on stderr, or null when commander already printed its own. */
export function formatCliError(error: unknown, command: string | undefined): string | null {
  if (error instanceof CommanderError) return null;
  if (error instanceof TensorRTNodeError) {
    const text = `tensorrt-node: [${error.code}] ${cliMessage(error.message)}`;
    return exitCodeFor(error) === EXIT.usage ? `${text}\n(see tensorrt-node ${command ?? ''} --help)`.replace('  ', ' ') : text;
  }
  const e = error as { code?: unknown; message?: unknown };
  const code = typeof e?.code === 'string' ? `[${e.code}] ` : '';
  return `tensorrt-node: ${code}${typeof e?.message === 'string' ? e.message : String(error)}`;
}
