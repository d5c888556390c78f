/**
 * compile()'s dynamic inputs: `settings.inputs` as a static shape, a
 * {min, opt, max} range or several profiles; symbols' ranges from the model; inconsistent
 * ranges are E_INVALID_ARGUMENT naming the input and dim; a default opt is said through the
 * logger; profiles of symbolic (expression) dims.
 */
import * as path from 'node:path';

import { compile, type CompileSettings } from '../../lib/compile';
import { planInputShapes, profilesForShape } from '../../lib/compile/input-shapes';
import { resolveSettings } from '../../lib/compile/settings';
import type { TensorRTNodeError } from '../../lib/errors';
import { Graph, tensorType } from '../../lib/ir/graph';
import { sym, symAdd, symMul } from '../../lib/ir/symbolic';
import { rejection as rejectionOf } from '../helpers/errors';
import { FIXTURES } from '../helpers/fixtures';

const mlpOnnx = path.join(FIXTURES, 'mlp', 'model.onnx');
const mlpPt2 = path.join(FIXTURES, 'mlp', 'model.pt2');
const llama = path.join(FIXTURES, 'llama_rotary_complex_input_dynamic', 'model.pt2');

/** The typed error compiling `file` with `settings` fails with (a program that compiles is disposed). */
function rejection(file: string, settings: CompileSettings): Promise<TensorRTNodeError> {
  return rejectionOf(compile(file, { backend: 'reference', ...settings }).then((p) => p.dispose()));
}

describe('inconsistent ranges are E_INVALID_ARGUMENT naming the input and dim', () => {
  test.each([
    [mlpOnnx, { input0: { min: [8, 32], max: [4, 32] } }, 'settings.inputs: input "input0" dim 0: min 8 > max 4'],
    [mlpOnnx, { input0: { min: [1, 32], opt: [100, 32], max: [64, 32] } }, 'settings.inputs: input "input0" dim 0: opt 100 is outside [1, 64]'],
    [mlpOnnx, { input0: { min: [1, 31], max: [4, 31] } }, 'settings.inputs: input "input0" dim 1 must be 32, got 31'],
    [mlpOnnx, { input0: { min: [1, 1, 32], max: [4, 4, 32] } }, 'settings.inputs: input "input0" must have rank 2 [batch, 32], got a range of [1, 1, 32]'],
    [llama, { x: { min: [1, 1, 64], max: [1, 128, 64] } }, `settings.inputs: input "x" dim 1 (symbol s25): [1, 128] is outside the model's range [2, 64] for s25`],
    [
      llama,
      { x: { min: [1, 2, 64], max: [1, 32, 64] }, freqs_cis: { min: [2, 8], max: [64, 8] } },
      'settings.inputs: input "freqs_cis" dim 0 is symbol s25, given [2, 64] here but [2, 32] for input "x" dim 1',
    ],
    [
      mlpOnnx,
      { input0: { profiles: [{ min: [1, 32], max: [2, 32] }, { min: [1, 32], max: [2, 32] }] }, nope: { shape: [1] } },
      'settings.inputs: inputs do not match the model',
    ],
  ] as const)('%s %j', async (file, inputs, message) => {
    const e = await rejection(file, { inputs: inputs as never });
    expect(e.code).toBe('E_INVALID_ARGUMENT');
    expect(e.message).toContain(message);
  });

  test('every input given with profiles gives the same number', async () => {
    const e = await rejection(llama, {
      inputs: {
        x: { profiles: [{ min: [1, 2, 64], max: [1, 8, 64] }] },
        freqs_cis: { profiles: [{ min: [2, 8], max: [8, 8] }, { min: [9, 8], max: [64, 8] }] },
      },
    });
    expect(e.message).toContain('every input given with profiles must give the same number of them ("x" has 1, "freqs_cis" has 2)');
  });

  test('an unbounded dim (ONNX dim_param) without a spec says how to give a shape or a range', async () => {
    const e = await rejection(mlpOnnx, {});
    expect(e.code).toBe('E_INVALID_ARGUMENT');
    expect(e.message).toContain('input "input0" has dynamic dims [batch, 32]');
    expect(e.message).toContain('{ inputs: { "input0": { min: [1, 32], max: [64, 32] } } }');
  });

  test('the form of each spec is checked with the settings', () => {
    const msg = (inputs: unknown): string => {
      try {
        resolveSettings({ inputs: inputs as never });
      } catch (e) {
        return (e as Error).message;
      }
      return '';
    };
    expect(msg({ x: { shape: [1], min: [1], max: [2] } })).toContain('inputs.x needs exactly one of shape, {min, opt, max} or profiles');
    expect(msg({ x: { min: [1, 2], max: [3] } })).toContain('inputs.x: min, opt and max must have the same length');
    expect(msg({ x: { min: [1], max: [-3] } })).toContain('inputs.x.max must be a list of non-negative integers, got [-3]');
    expect(msg({ x: { profiles: [] } })).toContain('inputs.x.profiles must be a non-empty list of {min, opt, max}');
    expect(msg({ x: { profiles: [{ min: [1], max: [2], best: [1] }] } })).toContain('inputs.x.profiles[0] has an unknown key "best" (known: min, opt, max)');
    expect(msg([{ name: 'x', min: [1], opt: [2], max: [4], dtype: 'float32' }])).toBe('');
    expect(msg([{ name: 'x', min: [1], opt: [2], max: [4], dtype: 'float32' }])).toBe('');
    expect(() => resolveSettings({ dynamicFallback: 'yes' as never })).toThrow('dynamicFallback must be a boolean, got "yes"');
  });
});

describe('ranges become profiles', () => {
  test('ranges from the model (torch.export range_constraints), the default opt said through the logger', async () => {
    const logs: string[] = [];
    const p = await compile(mlpPt2, { backend: 'reference', logger: (level, m) => logs.push(`${level}: ${m}`) });
    await p.dispose();
    expect(logs).toContain('info: symbol s77 (range [1, 64] from the model): no opt given; optimizing for the max, 64');
    expect(String(p)).toMatch(/^Program\(x: float32\[s77, 32\]\)/);
  });

  test('a range of one value specializes the symbol like a static shape', async () => {
    const p = await compile(mlpOnnx, { backend: 'reference', inputs: [{ min: [4, 32], max: [4, 32] }] });
    await p.dispose();
    expect(String(p)).toMatch(/^Program\(input0: float32\[4, 32\]\) -> \(output0: float32\[4, 10\]\)/);
  });

  test('one symbol shared by two inputs, bounded from one of them; opt given explicitly is not logged', () => {
    const g = new Graph('shared');
    g.symbols.set('s', { min: 2, max: 64 });
    g.addInput('x', tensorType('float32', [1, sym('s'), 64]));
    g.addInput('f', tensorType('float32', [sym('s'), 8]));
    const logs: string[] = [];
    const plan = planInputShapes(g, { x: { min: [1, 4, 64], opt: [1, 16, 64], max: [1, 32, 64] } }, (_l, m) => logs.push(m));
    expect(plan.staticSymbols.size).toBe(0);
    expect([...plan.profiles[0]!]).toEqual([['s', { min: 4, opt: 16, max: 32 }]]);
    expect(plan.ranges.get('s')).toEqual({ min: 4, max: 32 });
    expect(logs).toEqual([]);
    expect(profilesForShape(g.inputs[1]!.tensorType.shape, plan)).toEqual([{ min: [4, 8], opt: [16, 8], max: [32, 8] }]);
  });

  test('several profiles: each symbol gets its bounds per profile; expression dims get interval bounds', () => {
    const g = new Graph('profiles');
    g.symbols.set('b', { min: 1, max: 100 });
    g.addInput('x', tensorType('float32', [sym('b'), 3]));
    const plan = planInputShapes(g, [{ profiles: [{ min: [1, 3], max: [8, 3] }, { min: [9, 3], opt: [12, 3], max: [32, 3] }] }], () => undefined);
    expect(plan.profiles.map((p) => p.get('b'))).toEqual([
      { min: 1, opt: 8, max: 8 },
      { min: 9, opt: 12, max: 32 },
    ]);
    expect(plan.ranges.get('b')).toEqual({ min: 1, max: 32 });
    // A value crossing into an engine segment with dims b*2+1 and 3.
    expect(profilesForShape([symAdd(symMul(sym('b'), 2), 1), 3], plan)).toEqual([
      { min: [3, 3], opt: [17, 3], max: [17, 3] },
      { min: [19, 3], opt: [25, 3], max: [65, 3] },
    ]);
    expect(profilesForShape([4, 3], plan)).toEqual([]);
  });
});
