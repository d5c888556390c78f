'use strict';
// Removes dist/ so files of deleted sources never linger in a build or a package.
require('node:fs').rmSync(require('node:path').join(__dirname, '..', 'dist'), { recursive: true, force: true });
