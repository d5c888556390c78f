/**
 * The CLI's logger (compile settings' and loadProgram's `logger`): warnings always go to
 * stderr, as `tensorrt-node warn: ...` lines (a flag that changes nothing on the chosen
 * backend must not pass unnoticed; `--quiet` silences progress, not warnings); `--verbose` adds
 * the library's info and debug lines. Without it, those still follow `DEBUG=tensorrt-node`
 * (lib/logger.ts), as for any caller.
 */
import { resolveLogger, type Logger } from '../logger';

/** The logger of a command run with `options` (`--verbose`); `stream` is for tests. */
export function cliLogger(options: { verbose?: boolean }, stream: NodeJS.WritableStream = process.stderr): Logger {
  const fromEnv = resolveLogger();
  return (level, message) => {
    if (options.verbose === true || level === 'warn') stream.write(`tensorrt-node ${level}: ${message}\n`);
    else fromEnv(level, message);
  };
}
