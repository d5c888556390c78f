'use strict';
// jest globalSetup: never test a stale dist/ (see ./fresh-dist.js).
const path = require('node:path');
const { ensureFreshDist } = require('./fresh-dist');

module.exports = async function globalSetup() {
  ensureFreshDist(path.join(__dirname, '..', '..'));
};
