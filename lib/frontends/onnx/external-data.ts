/**
 * ONNX external data: a tensor's bytes kept in a file next to the model (`location`, `offset`,
 * `length` entries). A model file is untrusted input, so the file it names must really be a
 * regular file inside the model's directory: no `..` escape, no symbolic link anywhere on the
 * way (the directory chain is resolved with realpath and the last component is opened with
 * O_NOFOLLOW), no hard link (a second name may be all that ties a file outside the directory
 * to it), nothing that blocks on open (FIFOs, devices), and a size that covers the range
 * before anything is allocated.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';

import type { onnx } from 'onnx-proto';

import { BadModelError } from '../../errors';
import { openRegularFile, readExactly } from '../regular-file';

export interface ExternalDataOptions {
  /** Directory that external-data locations are relative to (the model file's). */
  baseDir?: string;
  /** Opened external-data files by real path, shared across one model's tensors; the loader closes them. */
  externalFiles?: Map<string, number>;
}

/** A non-negative safe integer written in decimal (`offset`, `length`), or undefined for a bad one. */
function decimal(text: string): number | undefined {
  if (!/^\d{1,16}$/.test(text)) return undefined;
  const n = Number(text);
  return Number.isSafeInteger(n) ? n : undefined;
}

/** True when `child` is `parent` or below it (both absolute, normalized). */
function isWithin(parent: string, child: string): boolean {
  const rel = path.relative(parent, child);
  return rel === '' || (rel !== '..' && !rel.startsWith(`..${path.sep}`) && !path.isAbsolute(rel));
}

class ExternalFile {
  constructor(
    private readonly what: string,
    private readonly location: string,
  ) {}

  fail(reason: string, file?: string, cause?: unknown): never {
    const where = file === undefined ? `"${this.location}"` : `"${this.location}" (${file})`;
    throw new BadModelError(`${this.what}: its external data file ${where} ${reason}`, {
      cause,
      details: { file: file ?? this.location, location: this.location },
    });
  }

  /** The real path of the file and of the model directory, after checking that no part of the path leaves it. */
  resolve(baseDir: string): { file: string; realBase: string } {
    if (this.location.includes('\0')) this.fail('has a NUL character in its name');
    if (path.isAbsolute(this.location)) this.fail('is an absolute path; external data must lie in the model directory');
    const base = path.resolve(baseDir);
    const file = path.resolve(base, this.location);
    if (file === base) this.fail("does not name a file in the model's directory");
    if (!isWithin(base, file)) this.fail("points outside the model's directory");
    let realBase: string;
    let realDir: string;
    try {
      realBase = fs.realpathSync(base);
    } catch (cause) {
      return this.fail(`cannot be looked up: the model directory ${base} cannot be resolved (${(cause as Error).message})`, file, cause);
    }
    try {
      realDir = fs.realpathSync(path.dirname(file));
    } catch (cause) {
      return this.fail(`cannot be opened (${(cause as Error).message})`, file, cause);
    }
    // A linked directory on the way may lead out of the model's directory.
    if (!isWithin(realBase, realDir)) this.fail(`lies in ${realDir}, outside the model's directory ${realBase} (a symbolic link on the way)`, file);
    return { file: path.join(realDir, path.basename(file)), realBase };
  }

  /** Opens `file` (a real path) without following a link, as a regular file with one name, still inside `realBase`. */
  open(file: string, realBase: string): number {
    const fail = (reason: string, cause?: unknown): never => this.fail(reason, file, cause);
    const { fd } = openRegularFile(file, true, fail);
    // A hard link is a second name of the same file: the name inside the directory may be one
    // the model's author made for a file that lives elsewhere (another user's data, a key). No
    // path check can tell which name is the original, so a file with more than one name is
    // refused; model data is practically never hard-linked, and a copy is always accepted.
    let links: number;
    try {
      links = fs.fstatSync(fd).nlink;
    } catch (cause) {
      fs.closeSync(fd);
      return fail(`cannot be examined (${(cause as Error).message})`, cause);
    }
    if (links > 1) {
      fs.closeSync(fd);
      throw new BadModelError(
        `${this.what}: its external data file "${this.location}" (${file}) has ${links} hard links (names), and external data must have one: ` +
          "another name may put it outside the model's directory. Copy the file into the model's directory (cp, not ln) to use it",
        { details: { file, location: this.location, links } },
      );
    }
    // Where the kernel says the descriptor really is (Linux): closes the window between the
    // realpath check of the directories and the open.
    const opened = procPath(fd);
    if (opened !== undefined && !isWithin(realBase, opened)) {
      fs.closeSync(fd);
      this.fail(`was opened as ${opened}, outside the model's directory`, file);
    }
    return fd;
  }
}

function procPath(fd: number): string | undefined {
  try {
    return fs.readlinkSync(`/proc/self/fd/${fd}`);
  } catch {
    return undefined;
  }
}

/**
 * Reads the `expectedBytes` bytes of tensor `what` (named in errors) from its external-data
 * file. The range is checked against the file's size before the buffer is allocated.
 */
export function readExternalData(proto: onnx.ITensorProto, what: string, expectedBytes: number, options: ExternalDataOptions): Uint8Array {
  const entries = new Map((proto.externalData ?? []).map((e) => [e.key ?? '', e.value ?? '']));
  const location = entries.get('location');
  if (!location) throw new BadModelError(`${what}: external data without a location`);
  if (options.baseDir === undefined) {
    throw new BadModelError(`${what} keeps its data in the external file "${location}", but the model was loaded from a buffer: load it from its path instead`);
  }
  const ext = new ExternalFile(what, location);
  const { file, realBase } = ext.resolve(options.baseDir);
  const cached = options.externalFiles?.get(file);
  if (cached !== undefined) return readRange(ext, cached, file, entries, expectedBytes);
  const fd = ext.open(file, realBase);
  if (options.externalFiles !== undefined) {
    options.externalFiles.set(file, fd);
    return readRange(ext, fd, file, entries, expectedBytes);
  }
  try {
    return readRange(ext, fd, file, entries, expectedBytes);
  } finally {
    fs.closeSync(fd);
  }
}

function readRange(ext: ExternalFile, fd: number, file: string, entries: Map<string, string>, expectedBytes: number): Uint8Array {
  const size = fs.fstatSync(fd).size;
  const offsetText = entries.get('offset');
  const lengthText = entries.get('length');
  const offset = offsetText === undefined ? 0 : decimal(offsetText);
  if (offset === undefined) ext.fail(`has the offset "${offsetText}", not a non-negative integer`, file);
  const length = lengthText === undefined ? size - offset : decimal(lengthText);
  if (length === undefined) ext.fail(`has the length "${lengthText}", not a non-negative integer`, file);
  if (offset > size || length < 0 || offset + length > size) {
    ext.fail(`is ${size} bytes long, but the data range is offset ${offset}, length ${length}: it lies outside the file`, file);
  }
  if (length !== expectedBytes) ext.fail(`holds ${length} bytes for the tensor (offset ${offset}), but its shape and type need ${expectedBytes}`, file);
  // A fresh buffer is aligned for every element type: no copy beyond the read itself.
  return readExactly(fd, offset, length, (reason, cause) => ext.fail(reason, file, cause));
}
