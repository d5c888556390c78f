/** Program I/O shapes with symbols print as `[s0, 16]` in template strings, String() and util.inspect. */
import { inspect } from 'node:util';

import { compile } from '../../lib/compile';
import { formatShape, sym, symMul } from '../../lib/ir/symbolic';
import { printableIO, printableShape } from '../../lib/runtime/program-io';
import { loadFixture } from '../helpers/fixtures';

test('printableShape prints symbols and expressions, and stays plain data', () => {
  const shape = [sym('batch'), symMul(sym('seq'), 2), 16];
  const p = printableShape(shape);
  expect(`${p}`).toBe('[batch, seq*2, 16]');
  expect(`${p[1]}`).toBe('seq*2');
  expect(inspect(p)).toBe('[batch, seq*2, 16]');
  expect(p).toEqual(shape);
  expect(JSON.parse(JSON.stringify(p))).toEqual(JSON.parse(JSON.stringify(shape)));
  expect(structuredClone(p)).toEqual(shape);
});

test('a dynamic program\'s inputs and outputs print with their symbols', async () => {
  const program = await compile(`${loadFixture('encoder').dir}/model.pt2`);
  try {
    const [input] = program.inputs;
    const raw = program.data.inputs[0]!.shape;
    expect(raw.some((d) => typeof d !== 'number')).toBe(true);
    expect(`${input!.shape}`).toBe(formatShape(raw));
    expect(`${input!.shape}`).not.toContain('[object Object]');
    expect(String(input)).toBe(`ids: int64${formatShape(raw)}`);
    expect(inspect(program.outputs[0])).toBe(`linear_8: float32${formatShape(program.data.outputs[0]!.shape)}`);
    expect(printableIO(program.data.inputs)).toEqual(program.data.inputs);
  } finally {
    await program.dispose();
  }
});
