/**
 * An example HTTP server started in a child process with PORT=0: resolves once it prints the
 * address it listens on ("listening on http://..."), with its output so far and its exit.
 */
import { spawn, type ChildProcess } from 'node:child_process';

import { childEnv, REPO_ROOT } from '../helpers/built-package';

export interface ExampleServer {
  child: ChildProcess;
  url: string;
  stdout: () => string;
  stderr: () => string;
  exit: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/** Runs `script` with `args` and `env` (PORT=0 added) from the repository root. */
export function startExampleServer(script: string, args: readonly string[] = [], env: Record<string, string> = {}): Promise<ExampleServer> {
  const child = spawn(process.execPath, [script, ...args], { cwd: REPO_ROOT, env: childEnv({ PORT: '0', ...env }), stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stderr!.on('data', (d: Buffer) => (err += d.toString()));
  const exit = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.on('exit', (code, signal) => resolve({ code, signal })));
  return new Promise((resolve, reject) => {
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      const m = /listening on (http:\/\/\S+)/.exec(out);
      if (m) resolve({ child, url: m[1]!, stdout: () => out, stderr: () => err, exit });
    });
    void exit.then(({ code, signal }) => reject(new Error(`server exited (${code ?? signal}) before listening:\n${out}${err}`)));
  });
}
