/**
 * Reading model files safely: a path may name a FIFO (opening it for reading would wait for a
 * writer forever), a device or a directory. Files are opened without blocking, checked with
 * fstat to be regular files, and read with explicit bounds. Failures go to the caller's
 * `fail`, which words them (naming the model, tensor and file).
 */
import * as fs from 'node:fs';

/** Reports a failure: `reason` completes "<the file> ..."; must throw. */
export type FileFailure = (reason: string, cause?: unknown) => never;

/** O_NONBLOCK makes opening a FIFO return at once (fstat then refuses it); regular files ignore it. */
const OPEN = fs.constants.O_RDONLY | (fs.constants.O_NONBLOCK ?? 0);
const NO_FOLLOW = fs.constants.O_NOFOLLOW ?? 0;

function kindOf(stat: fs.Stats): string {
  if (stat.isDirectory()) return 'a directory';
  if (stat.isFIFO()) return 'a FIFO';
  if (stat.isSocket()) return 'a socket';
  if (stat.isCharacterDevice() || stat.isBlockDevice()) return 'a device';
  return 'not a plain file';
}

/**
 * Opens `file` for reading and returns its descriptor and size; with `noFollow`, a symbolic
 * link as the last component is refused instead of followed. The caller closes the descriptor.
 */
export function openRegularFile(file: string, noFollow: boolean, fail: FileFailure): { fd: number; size: number } {
  let fd: number;
  try {
    fd = fs.openSync(file, OPEN | (noFollow ? NO_FOLLOW : 0));
  } catch (cause) {
    const code = (cause as NodeJS.ErrnoException).code;
    if (noFollow && (code === 'ELOOP' || code === 'EMLINK')) return fail('is a symbolic link, which is not followed', cause);
    return fail(`cannot be opened (${(cause as Error).message})`, cause);
  }
  try {
    const stat = fs.fstatSync(fd);
    if (!stat.isFile()) fail(`is not a regular file (${kindOf(stat)})`);
    return { fd, size: stat.size };
  } catch (error) {
    fs.closeSync(fd);
    throw error;
  }
}

/** Reads exactly `length` bytes at `offset` into a fresh (aligned) buffer. */
export function readExactly(fd: number, offset: number, length: number, fail: FileFailure): Uint8Array {
  const bytes = new Uint8Array(length);
  let done = 0;
  while (done < length) {
    let n: number;
    try {
      n = fs.readSync(fd, bytes, done, length - done, offset + done);
    } catch (cause) {
      return fail(`cannot be read (${(cause as Error).message})`, cause);
    }
    if (n === 0) fail(`ended early (at byte ${offset + done}; it changed while being read)`);
    done += n;
  }
  return bytes;
}

/** The whole of the regular file `file` (links followed: the caller chose the path). */
export function readRegularFile(file: string, fail: FileFailure): Uint8Array {
  const { fd, size } = openRegularFile(file, false, fail);
  try {
    return readExactly(fd, 0, size, fail);
  } finally {
    fs.closeSync(fd);
  }
}
