/**
 * Output paths checked before any work (an unwritable `--output-dir` or `-o` found after a
 * long compile is wasted time), and output file names that never collide.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';

import { UsageError } from './usage';

/** The nearest existing ancestor of `p` (itself when it exists). */
function existingAncestor(p: string): string {
  let at = path.resolve(p);
  while (!fs.existsSync(at)) {
    const up = path.dirname(at);
    if (up === at) break;
    at = up;
  }
  return at;
}

function checkDirWritable(flag: string, given: string, dir: string): void {
  const stat = fs.statSync(dir);
  if (!stat.isDirectory()) throw new UsageError(`${flag} ${given}: ${dir} is not a directory`, { details: { flag, path: given } });
  try {
    fs.accessSync(dir, fs.constants.W_OK | fs.constants.X_OK);
  } catch (cause) {
    throw new UsageError(`${flag} ${given}: ${dir} is not writable`, { cause, details: { flag, path: given } });
  }
}

/** `dir` is a directory that can be written, or can be created. */
export function checkOutputDir(flag: string, dir: string): void {
  checkDirWritable(flag, dir, existingAncestor(dir));
}

/** `file` can be written: not a directory, and its directory is (or can be made) writable. */
export function checkOutputFile(flag: string, file: string): void {
  if (fs.existsSync(file) && fs.statSync(file).isDirectory()) throw new UsageError(`${flag} ${file}: is a directory; give a file name such as program.trtp`, { details: { flag, path: file } });
  checkDirWritable(flag, file, existingAncestor(path.dirname(path.resolve(file))));
}

/**
 * One `.npy` file name per output, in output order: the name with characters other than
 * letters, digits, `_`, `.` and `-` replaced by `_`; a name that would repeat an earlier
 * one (`a/b` and `a_b`, or names differing only in case) gets `_2`, `_3`, ... so that no
 * output overwrites another and the same program always gives the same names.
 */
export function outputFileNames(names: readonly string[]): string[] {
  const taken = new Set<string>();
  return names.map((name) => {
    let base = name.replace(/[^A-Za-z0-9_.-]/g, '_').replace(/^\.+/, (dots) => '_'.repeat(dots.length));
    if (base.length === 0) base = 'output';
    let candidate = base;
    for (let k = 2; taken.has(candidate.toLowerCase()); k++) candidate = `${base}_${k}`;
    taken.add(candidate.toLowerCase());
    return `${candidate}.npy`;
  });
}
