/**
 * Size expressions whose written-out form is astronomically larger than their text (nested
 * Pow) or whose range is contradictory: typed errors naming the value or symbol, quickly.
 * Archives are edited copies of the llama_rotary_complex_input_dynamic fixture (symbol s25).
 */
import * as fs from 'node:fs';
import * as path from 'node:path';

import { unzipSync, zipSync } from 'fflate';

import { loadPt2 } from '../../../lib/frontends/pt2';
import { FIXTURES } from '../../helpers/fixtures';
import { thrownError } from '../../helpers/errors';

const MODEL_JSON = 'model/models/model.json';
const S25 = "Symbol('s25', positive=True, integer=True)";

/** The fixture with model.json edited by `edit`. */
function edited(edit: (program: any) => void): Uint8Array {
  const files = unzipSync(new Uint8Array(fs.readFileSync(path.join(FIXTURES, 'llama_rotary_complex_input_dynamic', 'model.pt2'))));
  const program = JSON.parse(new TextDecoder().decode(files[MODEL_JSON]!));
  edit(program);
  return zipSync({ ...files, [MODEL_JSON]: new TextEncoder().encode(JSON.stringify(program)) }, { level: 0 });
}

/** Sets the size expression of tensor "to" (rank 3, dim 1 is s25 in the fixture). */
function withSizeOfTo(expr: string): Uint8Array {
  return edited((p) => {
    p.graph_module.graph.tensor_values.to.sizes[1] = { as_expr: { expr_str: expr } };
  });
}

const nestedPow = (depth: number, exponent: number): string => {
  let e = S25;
  for (let i = 0; i < depth; i++) e = `Pow(${e}, Integer(${exponent}))`;
  return e;
};

test('Pow(Pow(Pow(Pow(Pow(s,64),64),64),64),64) is refused as E_BAD_MODEL naming the tensor', () => {
  const e = thrownError(() => loadPt2(withSizeOfTo(nestedPow(5, 64))));
  expect(e.code).toBe('E_BAD_MODEL');
  expect(e.message).toContain('tensor "to" size 1');
  expect(e.message).toMatch(/degree/);
});

test('a legitimate nested power is accepted and written out in full', () => {
  // "to" really is [1, s25, 64]: the importer reaches its check of the recorded type, which
  // shows the expression (s25**9, degree 9) was accepted, and prints it in full.
  const e = thrownError(() => loadPt2(withSizeOfTo(nestedPow(2, 3))));
  expect(e.code).toBe('E_BAD_MODEL');
  expect(e.message).toContain('recorded "to" as float32[1, s25*s25*s25*(s25*s25*s25)*(s25*s25*s25), 64]');
});
