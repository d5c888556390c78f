'use strict';
/** JSON-level mutations: values replaced by boundary numbers, other subtrees, wrong types; keys deleted; arrays reshuffled. */
const { INTERESTING_NUMBERS } = require('../random');

const STRINGS = ['', '__proto__', 'constructor', 'x', 's0', 'Infinity', 'NaN', '-1', 'float32', 'int64', 'complex128', '../x', 'a'.repeat(300)];

/** Every [container, key] pair of `root`, depth first, at most `limit`. */
function slots(root, limit = 20000) {
  const out = [];
  const stack = [root];
  while (stack.length > 0 && out.length < limit) {
    const c = stack.pop();
    for (const k of Object.keys(c)) {
      out.push([c, k]);
      const v = c[k];
      if (v !== null && typeof v === 'object') stack.push(v);
    }
  }
  return out;
}

function mutateValue(rng, value, all) {
  switch (rng.int(0, 7)) {
    case 0: return rng.pick(INTERESTING_NUMBERS);
    case 1: return typeof value === 'number' ? value + rng.pick([1, -1]) : rng.pick(INTERESTING_NUMBERS);
    case 2: return rng.pick(STRINGS);
    case 3: return typeof value === 'string' && all.length > 0 ? String(rng.pick(all)[1]) : rng.pick(STRINGS);
    case 4: {
      // Another subtree of the same document (deep-copied: the output must be a tree).
      const [c, k] = rng.pick(all);
      return JSON.parse(JSON.stringify(c[k]) ?? 'null');
    }
    case 5: return rng.pick([null, true, false, [], {}]);
    case 6: return Array.isArray(value) ? [] : [value];
    default: return typeof value === 'string' ? value + rng.pick(['_', '0', '/']) : { value };
  }
}

/** `text` parsed, mutated 1-3 times and printed again; undefined when it is not JSON. */
function mutateJson(rng, text) {
  let root;
  try {
    root = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (root === null || typeof root !== 'object') return JSON.stringify(mutateValue(rng, root, []));
  for (let n = rng.int(1, 3); n > 0; n--) {
    const all = slots(root);
    if (all.length === 0) break;
    const [c, k] = rng.pick(all);
    const r = rng.int(0, 9);
    if (r === 0 && !Array.isArray(c)) delete c[k];
    else if (r === 1 && Array.isArray(c)) c.splice(Number(k), 0, JSON.parse(JSON.stringify(c[k]) ?? 'null'));
    else if (r === 2 && Array.isArray(c)) c.splice(Number(k), 1);
    else if (r === 3 && Array.isArray(c) && c.length > 1) {
      const j = rng.int(0, c.length - 1);
      [c[k], c[j]] = [c[j], c[k]];
    } else c[k] = mutateValue(rng, c[k], all);
  }
  return JSON.stringify(root);
}

module.exports = { mutateJson };
