/**
 * The public fixtures through `backend: 'onnxruntime'` end to end (compile → program worker
 * → onnxruntime session) against the outputs PyTorch stored: both frontends, every stored
 * size (each compiled for it, and once with run-time dims for all sizes), and a program
 * file round trip that reloads the engine without converting again.
 */
import * as path from 'node:path';

import { unpackOrtEngine } from '../../../lib/backends/onnxruntime';
import { compile, type CompileSettings } from '../../../lib/compile';
import type { Program } from '../../../lib/runtime/program';
import { loadProgramBuffer } from '../../../lib/runtime/program-file';
import { expectClose, FP32 } from '../../helpers/compare';
import { loadFixture, ONNX_FIXTURES, PT2_FIXTURES } from '../../helpers/fixtures';

const cases = [...PT2_FIXTURES.map((name) => [name, 'pt2'] as const), ...ONNX_FIXTURES.map((name) => [name, 'onnx'] as const)];

/** Every engine segment of `program` is an onnxruntime engine. */
function expectOrtSegments(program: Program): void {
  const engines = program.data.segments.filter((s) => s.kind === 'engine');
  expect(engines.length).toBeGreaterThan(0);
  for (const s of engines) {
    expect(s.kind === 'engine' && s.backend).toBe('onnxruntime');
    if (s.kind === 'engine') expect(unpackOrtEngine(s.engine).description.opset).toBe(18);
  }
}

describe.each(cases)('%s (.%s) on the onnxruntime backend', (name, format) => {
  const fixture = loadFixture(name);
  const file = path.join(fixture.dir, fixture.files[format]!);

  test.each(fixture.cases.map((c, k) => [k, c] as const))('case %d matches PyTorch', async (_k, c) => {
    const program = await compile(file, { backend: 'onnxruntime', inputs: c.inputs.map((t) => ({ shape: [...t.shape] })) });
    try {
      expect(program.backend).toBe('onnxruntime');
      expectOrtSegments(program);
      const actual = await program.run(c.inputs);
      actual.forEach((t, i) => expectClose(t, c.outputs[i]!, FP32, `${name} output ${i}`));
    } finally {
      await program.dispose();
    }
  }, 120_000);
});

/** Compiled once with run-time dims, run at every size PyTorch stored. */
const DYNAMIC: Array<[string, 'pt2' | 'onnx', CompileSettings]> = [
  ['mobilenet_v3_small', 'onnx', { inputs: [{ min: [1, 3, 96, 96], opt: [2, 3, 96, 96], max: [8, 3, 96, 96] }] }],
  ['mobilenet_v3_small', 'pt2', {}],
  ['llama_rotary_complex_input_dynamic', 'pt2', {}],
  ['mlp', 'pt2', {}],
];

describe.each(DYNAMIC)('%s (.%s) compiled once with run-time dims', (name, format, settings) => {
  test('matches PyTorch at every stored size', async () => {
    const fixture = loadFixture(name);
    const program = await compile(path.join(fixture.dir, fixture.files[format]!), { ...settings, backend: 'onnxruntime' });
    try {
      expectOrtSegments(program);
      for (const [k, c] of fixture.cases.entries()) {
        const actual = await program.run(c.inputs);
        actual.forEach((t, i) => expectClose(t, c.outputs[i]!, FP32, `${name} case ${k} output ${i}`));
      }
    } finally {
      await program.dispose();
    }
  }, 120_000);
});

test('a program file carries the onnxruntime engine and reloads it without the model', async () => {
  const fixture = loadFixture('squeezenet1_1');
  const c = fixture.cases[0]!;
  const program = await compile(path.join(fixture.dir, fixture.files.onnx!), { backend: 'onnxruntime', inputs: c.inputs.map((t) => ({ shape: [...t.shape] })) });
  let loaded: Program | undefined;
  try {
    const bytes = program.saveBuffer();
    loaded = await loadProgramBuffer(bytes);
    expect(loaded.backend).toBe('onnxruntime');
    const engines = loaded.data.segments.filter((s) => s.kind === 'engine');
    expect(engines.map((s) => s.kind === 'engine' && [...s.engine.subarray(0, 8)].map((b) => String.fromCharCode(b)).join(''))).toEqual(['TRTNORT1']);
    const [before, after] = [await program.run(c.inputs), await loaded.run(c.inputs)];
    after.forEach((t, i) => {
      expectClose(t, c.outputs[i]!, FP32, `reloaded output ${i}`);
      expect(Array.from(t.data as Float32Array)).toEqual(Array.from(before[i]!.data as Float32Array));
    });
  } finally {
    await program.dispose();
    await loaded?.dispose();
  }
}, 120_000);
