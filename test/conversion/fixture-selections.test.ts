/**
 * Locks which converter is selected for every op of every fixture (both frontends, static
 * and dynamic specs as the fixture tests compile them) and the full converter listing, so
 * a refactoring of registration that changes any selection, refusal reason or listing
 * fails here.
 */
import * as path from 'node:path';

import { dryRun, type CompileSettings } from '../../lib/compile';
import { listConverters } from '../../lib/conversion/registry';
import { loadFixture, ONNX_FIXTURES, PT2_FIXTURES } from '../helpers/fixtures';

interface Case {
  label: string;
  file: string;
  settings: CompileSettings;
}

function staticCases(): Case[] {
  const out: Case[] = [];
  for (const name of PT2_FIXTURES) {
    const fixture = loadFixture(name);
    const formats = (ONNX_FIXTURES as readonly string[]).includes(name) ? (['onnx', 'pt2'] as const) : (['pt2'] as const);
    for (const format of formats) {
      fixture.cases.forEach((c, k) => {
        const inputs = c.inputs.map((t) => ({ shape: [...t.shape] }));
        out.push({ label: `${name}.${format} static case ${k}`, file: path.join(fixture.dir, fixture.files[format]!), settings: { inputs } });
      });
    }
  }
  return out;
}

/** The specs test/compile/dynamic-fixtures.test.ts compiles with run-time dims. */
const DYNAMIC: Array<[string, 'pt2' | 'onnx', CompileSettings]> = [
  ['mlp', 'pt2', {}],
  ['mlp', 'onnx', { inputs: { input0: { min: [1, 32], opt: [8, 32], max: [64, 32] } } }],
  ['encoder', 'pt2', {}],
  ['encoder', 'onnx', { inputs: { input0: { min: [1, 16], max: [16, 16] } } }],
  ['llama_rotary_complex_input_dynamic', 'pt2', {}],
  ['mobilenet_v3_small', 'pt2', {}],
  ['mobilenet_v3_small', 'onnx', { inputs: { input0: { min: [1, 3, 96, 96], opt: [2, 3, 96, 96], max: [8, 3, 96, 96] } } }],
];

function dynamicCases(): Case[] {
  return DYNAMIC.map(([name, format, settings]) => {
    const fixture = loadFixture(name);
    return { label: `${name}.${format} dynamic`, file: path.join(fixture.dir, fixture.files[format]!), settings };
  });
}

describe('converter selection over every fixture', () => {
  test.each([...staticCases(), ...dynamicCases()].map((c) => [c.label, c] as const))('%s', async (_label, c) => {
    const report = await dryRun(c.file, { backend: 'reference', ...c.settings });
    const ops = report.ops.map((o) => `${o.node} ${o.target} -> ${o.converted ? o.converter : `refused: ${o.reasons.join('; ')}`}`);
    expect(ops).toMatchSnapshot();
  }, 60_000);

  test('the converter listing', () => {
    expect(listConverters()).toMatchSnapshot();
  });
});
