/**
 * The addon has two build descriptions: binding.gyp (release builds, prebuildify) and
 * CMakeLists.txt (developer builds). A source added to one and forgotten in the other builds
 * fine in one and fails to link (or silently lacks a feature) in the other, so the two lists
 * must be equal and cover every native source.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';

const ROOT = path.resolve(__dirname, '..', '..');
// Compiled only by test/native/cuda-declarations.test.ts: it includes NVIDIA's cuda.h, which
// the addon must never need (it builds without the CUDA toolkit).
const TEST_ONLY_SOURCES = [
  'native/cuda/check_declarations.cc',
  'native/cuda/check_runtime_declarations.cc',
  'native/nvrtc/check_declarations.cc',
  'native/cublaslt/check_declarations.cc',
  'native/cudnn/check_declarations.cc',
  'native/nccl/check_declarations.cc',
];

/** Drops `#` comments that are outside double-quoted strings (gyp files are Python literals). */
function stripGypComments(text: string): string {
  let out = '';
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i]!;
    if (inString) {
      out += ch;
      if (ch === '\\') out += text[++i] ?? '';
      else if (ch === '"') inString = false;
    } else if (ch === '"') {
      inString = true;
      out += ch;
    } else if (ch === '#') {
      while (i < text.length && text[i] !== '\n') i++;
      out += '\n';
    } else {
      out += ch;
    }
  }
  return out;
}

interface GypTarget {
  target_name: string;
  sources?: string[];
}

function gypSources(): string[] {
  const gyp = JSON.parse(stripGypComments(fs.readFileSync(path.join(ROOT, 'binding.gyp'), 'utf8'))) as { targets: GypTarget[] };
  const target = gyp.targets.find((t) => t.target_name === 'tensorrt_node');
  if (target?.sources === undefined) throw new Error('binding.gyp has no tensorrt_node target with sources');
  return target.sources;
}

function cmakeSources(): string[] {
  const text = fs.readFileSync(path.join(ROOT, 'CMakeLists.txt'), 'utf8').replace(/#[^\n]*/g, '');
  const match = /set\(\s*TRTN_SOURCES\s+([^)]*)\)/.exec(text);
  if (match === null) throw new Error('CMakeLists.txt has no set(TRTN_SOURCES ...)');
  return match[1]!.split(/\s+/).filter(Boolean);
}

/** Every C/C++ translation unit under native/, as repository-relative paths with `/`. */
function nativeSources(dir = path.join(ROOT, 'native')): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return nativeSources(full);
    return /\.(c|cc|cpp|cxx)$/.test(entry.name) ? [path.relative(ROOT, full).split(path.sep).join('/')] : [];
  });
}

describe('native build files', () => {
  test('the comment stripper keeps # inside strings', () => {
    // Guards the parser itself: a naive strip would cut this string and break JSON.parse.
    expect(JSON.parse(stripGypComments('{"a": "x#y", # note\n "b": 1}'))).toEqual({ a: 'x#y', b: 1 });
  });

  test('binding.gyp and CMakeLists.txt list the same sources, each once', () => {
    const gyp = gypSources();
    const cmake = cmakeSources();
    expect(gyp.length).toBeGreaterThan(0);
    expect([...cmake].sort()).toEqual([...gyp].sort());
    expect(new Set(gyp).size).toBe(gyp.length);
    expect(new Set(cmake).size).toBe(cmake.length);
  });

  test('every listed source exists', () => {
    for (const source of new Set([...gypSources(), ...cmakeSources()])) {
      expect({ source, exists: fs.existsSync(path.join(ROOT, source)) }).toEqual({ source, exists: true });
    }
  });

  test('every native source is listed, except the test-only declaration check', () => {
    const listed = new Set(gypSources());
    const unlisted = nativeSources().filter((s) => !listed.has(s) && !TEST_ONLY_SOURCES.includes(s));
    expect(unlisted).toEqual([]);
  });

  test('the declaration checks (which need NVIDIA headers) are in neither build', () => {
    for (const source of TEST_ONLY_SOURCES) {
      expect(fs.existsSync(path.join(ROOT, source))).toBe(true);
      expect(gypSources()).not.toContain(source);
      expect(cmakeSources()).not.toContain(source);
    }
  });
});
