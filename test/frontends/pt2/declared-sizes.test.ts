/**
 * What a .pt2 archive declares is checked before anything is allocated or trusted: weight
 * sizes against the bytes present, exact integer sizes, non-empty symbol ranges. Archives are
 * edited copies of the mlp and llama_rotary_complex_input_dynamic fixtures.
 */
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

import { unzipSync, zipSync } from 'fflate';

import { loadPt2 } from '../../../lib/frontends/pt2';
import { FIXTURES } from '../../helpers/fixtures';
import { thrownError } from '../../helpers/errors';

const MODEL_JSON = 'model/models/model.json';
const WEIGHTS_JSON = 'model/data/weights/model_weights_config.json';

/** Fixture `name`'s archive with JSON entry `entry` edited. */
function edited(name: string, entry: string, edit: (json: any) => void): Uint8Array {
  const files = unzipSync(new Uint8Array(fs.readFileSync(path.join(FIXTURES, name, 'model.pt2'))));
  const json = JSON.parse(new TextDecoder().decode(files[entry]!));
  edit(json);
  return zipSync({ ...files, [entry]: new TextEncoder().encode(JSON.stringify(json)) }, { level: 0 });
}

const ints = (xs: number[]) => xs.map((as_int) => ({ as_int }));

/** mlp with net.0.weight (float32 [64, 32] in the fixture) given other sizes/strides. */
function weightMeta(sizes: number[], strides: number[]): Uint8Array {
  return edited('mlp', WEIGHTS_JSON, (c) => {
    const meta = c.config['net.0.weight'].tensor_meta;
    meta.sizes = ints(sizes);
    meta.strides = ints(strides);
  });
}

function refusal(bytes: Uint8Array, ...parts: string[]): string {
  const e = thrownError(() => loadPt2(bytes, { decompose: false }));
  expect(e.code).toBe('E_BAD_MODEL');
  for (const p of parts) expect(e.message).toContain(p);
  return e.message;
}

describe('weights', () => {
  test('sizes [1e9, 1e9] are refused before allocating, naming the weight', () => {
    refusal(weightMeta([1e9, 1e9], [1e9, 1]), 'parameter "net.0.weight"', 'more than 2147483648 elements');
  });

  test('a size that is not an exact integer', () => {
    refusal(weightMeta([1e21, 1], [1, 1]), 'parameter "net.0.weight"', 'dim 0 = 1e+21, not a non-negative integer below 2^53');
  });

  test('zero strides may not blow 8 KiB of storage up to gigabytes', () => {
    refusal(weightMeta([2 ** 24, 32], [0, 1]), 'parameter "net.0.weight"', 'needs 2147483648 bytes', 'the archive holds 8192', 'at most 67108864');
  });

  test('a small zero-stride expansion repeats the stored row (the file read independently)', () => {
    const expanded = loadPt2(weightMeta([64, 32], [0, 1]), { decompose: false });
    const w = expanded.nodes.find((n) => n.kind === 'constant' && n.meta.fqn === 'net.0.weight')!.tensor!;
    const files = unzipSync(new Uint8Array(fs.readFileSync(path.join(FIXTURES, 'mlp', 'model.pt2'))));
    const raw = files['model/data/weights/weight_0']!;
    const row0 = Array.from(new Float32Array(raw.slice(0, 32 * 4).buffer));
    const values = w.toArray() as number[];
    for (let r = 0; r < 64; r++) expect(values.slice(r * 32, r * 32 + 32)).toEqual(row0);
  });
});

describe('sizes and symbols', () => {
  const DYNAMIC = 'llama_rotary_complex_input_dynamic';

  test('an inverted range constraint is E_BAD_MODEL naming the symbol', () => {
    const bytes = edited(DYNAMIC, MODEL_JSON, (p) => {
      p.range_constraints.s25 = { min_val: 64, max_val: 2 };
    });
    refusal(bytes, 'range_constraints["s25"]', 'symbol s25 the empty range [64, 2]');
  });

  test('a negative max_val leaves no size', () => {
    const bytes = edited(DYNAMIC, MODEL_JSON, (p) => {
      p.range_constraints.s25 = { min_val: 0, max_val: -1 };
    });
    refusal(bytes, 'symbol s25 the empty range [0, -1]');
  });

  test('a fractional bound is refused', () => {
    const bytes = edited(DYNAMIC, MODEL_JSON, (p) => {
      p.range_constraints.s25 = { min_val: 2.5, max_val: 64 };
    });
    refusal(bytes, 'range_constraints["s25"] has a bad bound 2.5');
  });

  test('a well-formed range is kept (the reference case)', () => {
    const graph = loadPt2(
      edited(DYNAMIC, MODEL_JSON, (p) => {
        p.range_constraints.s25 = { min_val: 3, max_val: 17 };
      }),
    );
    expect(graph.symbols.get('s25')).toEqual({ min: 3, max: 17 });
  });

  test.each([
    [1e21, 'is 1e+21, not an integer below 2^53'],
    [2.5, 'is 2.5, not an integer below 2^53'],
    [-3, 'is -3, a negative size'],
  ])('a recorded size of %s is refused', (size, reason) => {
    const bytes = edited(DYNAMIC, MODEL_JSON, (p) => {
      p.graph_module.graph.tensor_values.to.sizes[2] = { as_int: size };
    });
    refusal(bytes, `tensor "to" size 2 ${reason}`);
  });

  test('an integer past 2^53 inside a size expression', () => {
    const bytes = edited(DYNAMIC, MODEL_JSON, (p) => {
      p.graph_module.graph.tensor_values.to.sizes[1] = { as_expr: { expr_str: 's25 + 100000000000000000000' } };
    });
    refusal(bytes, 'tensor "to" size 1', 'the integer 100000000000000000000 is past 2^53');
  });
});

describe('the archive file itself', () => {
  let dir: string;
  beforeAll(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'trtn-pt2-file-'));
  });
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  test('a FIFO given as the archive is refused at once, not waited on', () => {
    const fifo = path.join(dir, 'model.pt2');
    execFileSync('mkfifo', [fifo]);
    const e = thrownError(() => loadPt2(fifo));
    expect(e.code).toBe('E_BAD_MODEL');
    expect(e.message).toBe(`cannot read .pt2 archive ${fifo}: the file is not a regular file (a FIFO)`);
  });

  test('a directory given as the archive', () => {
    const e = thrownError(() => loadPt2(dir));
    expect(e.code).toBe('E_BAD_MODEL');
    expect(e.message).toContain('is not a regular file (a directory)');
  });
});
