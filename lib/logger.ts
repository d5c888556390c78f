/**
 * Library code never writes to the console. It reports through a logger: the `logger`
 * option of the call, or, when DEBUG names tensorrt-node (`DEBUG=tensorrt-node`), stderr.
 */
export type LogLevel = 'debug' | 'info' | 'warn';

export type Logger = (level: LogLevel, message: string) => void;

const silent: Logger = () => undefined;

function debugEnabled(): boolean {
  const d = process.env.DEBUG ?? '';
  return d.split(/[\s,]+/).some((p) => p === 'tensorrt-node' || p === 'tensorrt-node:*' || p === '*');
}

/** The logger to use: the given one, else stderr under DEBUG, else none. */
export function resolveLogger(logger?: Logger): Logger {
  if (logger) return logger;
  if (debugEnabled()) return (level, message) => process.stderr.write(`tensorrt-node ${level}: ${message}\n`);
  return silent;
}

/** Whether `logger` is resolveLogger()'s silent default: what it is told reaches no one. */
export function isSilentLogger(logger: Logger): boolean {
  return logger === silent;
}
