/**
 * Every backend has the same rooms (docs/architecture.md, "Backends"): its entry, its build,
 * its engine format, its per-layer-kind code and its run path, each where the table says, so
 * that a new backend copies one shape and a reader finds the same thing in the same place.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';

import { BACKEND_NAMES } from '../../lib/engine/backend';
import { REPO_ROOT } from '../helpers/built-package';

const LIB = path.join(REPO_ROOT, 'lib');

/** Where each room of each backend is: the first path that exists among the candidates (relative to lib/). */
const ROOMS: Record<string, (backend: string) => string[]> = {
  entry: (b) => [`backends/${b}/index.ts`],
  build: (b) => [`backends/${b}/build.ts`, ...(b === 'reference' ? [`backends/${b}/index.ts`] : [])],
  'engine format': (b) => [`backends/${b}/engine-format.ts`],
  // The reference backend's per-layer code is the network's own host evaluation, which other backends share.
  'per-layer-kind code': (b) => [`backends/${b}/layers/index.ts`, `backends/${b}/program.ts`, ...(b === 'reference' ? ['network/evaluate/index.ts'] : [])],
  'run path': (b) => [`backends/${b}/run`, `backends/${b}/run.ts`, `backends/${b}/runner.ts`],
};

describe('the rooms of every backend', () => {
  it.each([...BACKEND_NAMES])('%s has an entry, a build, an engine format, per-layer-kind code and a run path', (backend) => {
    const missing = Object.entries(ROOMS)
      .filter(([, candidates]) => !candidates(backend).some((p) => fs.existsSync(path.join(LIB, p))))
      .map(([room, candidates]) => `${room} (${candidates(backend).join(' or ')})`);
    expect(missing).toEqual([]);
  });

  it('names every backend folder of lib/backends', () => {
    const folders = fs.readdirSync(path.join(LIB, 'backends'), { withFileTypes: true }).filter((e) => e.isDirectory()).map((e) => e.name);
    expect(folders.sort()).toEqual([...BACKEND_NAMES].sort());
  });
});
