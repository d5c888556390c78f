/**
 * The jest global setup rebuilds dist/ when it is missing or older than lib/, and fails
 * naming the build command when the build fails (./fresh-dist.js).
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

const { BUILD_COMMAND, ensureFreshDist, staleReason } = require('./fresh-dist') as {
  BUILD_COMMAND: string;
  staleReason: (root: string) => string | null;
  ensureFreshDist: (root: string, run?: (command: string, cwd: string) => number, log?: (line: string) => void) => boolean;
};

const T0 = new Date('2026-01-01T00:00:00Z');
const at = (seconds: number): Date => new Date(T0.getTime() + seconds * 1000);

/** A project tree: lib/a.ts, lib/sub/b.ts at `source` seconds; dist/index.js, dist/sub/b.js at `built`. */
function project(source: number, built: number | null): string {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'fresh-dist-'));
  const write = (rel: string, time: number): void => {
    const p = path.join(root, rel);
    fs.mkdirSync(path.dirname(p), { recursive: true });
    fs.writeFileSync(p, rel);
    fs.utimesSync(p, at(time), at(time));
  };
  write('lib/a.ts', source);
  write('lib/sub/b.ts', source);
  if (built !== null) {
    write('dist/index.js', built);
    write('dist/sub/b.js', built);
  }
  for (const d of ['lib/sub', 'lib']) fs.utimesSync(path.join(root, d), at(source), at(source));
  return root;
}

describe('fresh dist/ for jest', () => {
  const roots: string[] = [];
  afterAll(() => roots.forEach((r) => fs.rmSync(r, { recursive: true, force: true })));
  const make = (source: number, built: number | null): string => {
    const r = project(source, built);
    roots.push(r);
    return r;
  };

  test('fresh when every dist file is at least as new as lib/', () => {
    expect(staleReason(make(10, 10))).toBeNull();
    expect(staleReason(make(10, 20))).toBeNull();
  });

  test('stale when dist/ is missing', () => {
    expect(staleReason(make(10, null))).toBe('dist/index.js is missing');
  });

  test('stale when a lib file is newer than the oldest dist file, naming both', () => {
    const root = make(10, 20);
    fs.utimesSync(path.join(root, 'lib/sub/b.ts'), at(30), at(30));
    expect(staleReason(root)).toBe(`${path.join('lib', 'sub', 'b.ts')} is newer than ${path.join('dist', 'index.js')}`);
    const older = make(10, 20);
    fs.utimesSync(path.join(older, 'dist/sub/b.js'), at(5), at(5));
    expect(staleReason(older)).toMatch(/is newer than dist\/sub\/b\.js$/);
  });

  test('stale when a lib file is added or removed (the folder changes)', () => {
    const root = make(10, 20);
    fs.utimesSync(path.join(root, 'lib/sub'), at(25), at(25));
    expect(staleReason(root)).toBe(`${path.join('lib', 'sub')} is newer than ${path.join('dist', 'index.js')}`);
  });

  test('stale when tsconfig.build.json changed', () => {
    const root = make(10, 20);
    fs.writeFileSync(path.join(root, 'tsconfig.build.json'), '{}');
    fs.utimesSync(path.join(root, 'tsconfig.build.json'), at(21), at(21));
    expect(staleReason(root)).toMatch(/^tsconfig\.build\.json is newer/);
  });

  test('runs the build command only when stale, and checks the result', () => {
    const calls: string[] = [];
    const logs: string[] = [];
    expect(ensureFreshDist(make(10, 20), () => (calls.push('x'), 0), (l) => logs.push(l))).toBe(false);
    expect(calls).toEqual([]);

    const root = make(30, 20);
    const build = (command: string, cwd: string): number => {
      calls.push(`${command} @ ${path.basename(cwd)}`);
      for (const f of ['dist/index.js', 'dist/sub/b.js']) fs.utimesSync(path.join(cwd, f), at(40), at(40));
      return 0;
    };
    expect(ensureFreshDist(root, build, (l) => logs.push(l))).toBe(true);
    expect(calls).toEqual([`${BUILD_COMMAND} @ ${path.basename(root)}`]);
    expect(BUILD_COMMAND).toBe('npm run build:ts');
    expect(logs).toEqual([`jest global setup: lib is newer than ${path.join('dist', 'index.js')}; running \`npm run build:ts\``]);
  });

  test('a failing build is an error naming the command', () => {
    expect(() => ensureFreshDist(make(10, null), () => 2, () => undefined)).toThrow(
      'dist/ is stale (dist/index.js is missing) and `npm run build:ts` failed (exit status 2); run `npm run build:ts` and fix the build before testing',
    );
  });

  test('a build that leaves dist/ stale is an error too', () => {
    expect(() => ensureFreshDist(make(30, 20), () => 0, () => undefined)).toThrow(/succeeded but dist\/ is still stale: lib is newer than/);
  });
});
