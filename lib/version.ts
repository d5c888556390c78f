import * as fs from 'node:fs';
import * as path from 'node:path';

import { PACKAGE_ROOT } from './native';

/** This package's version, from its package.json. */
export const VERSION: string = (
  JSON.parse(fs.readFileSync(path.join(PACKAGE_ROOT, 'package.json'), 'utf8')) as { version: string }
).version;
