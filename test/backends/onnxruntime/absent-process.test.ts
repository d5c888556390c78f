/**
 * Without onnxruntime-node, through the built package in a child process whose every thread
 * fails to resolve the module (test/helpers/without-onnxruntime.js): compile()'s pipeline
 * runs on the compile worker and a program on its own worker, which jest.doMock cannot reach.
 * `auto` warns once per process on the calling thread; naming the backend is
 * E_BACKEND_UNAVAILABLE saying how to add the module. A program saved with onnxruntime engines
 * loads with them rebuilt for the reference backend (a warning naming both) and gives the
 * answer onnxruntime gave; with `rebuild: 'never'` the load refuses, E_BACKEND_UNAVAILABLE.
 */
import * as path from 'node:path';

import { compile } from '../../../lib/compile';
import { Tensor } from '../../../lib/ir/tensor';
import { makeTempDir, removeTempDir, runLibScenario } from '../../helpers/built-package';
import { FIXTURES } from '../../helpers/fixtures';

const PRELOAD = path.join(__dirname, '..', '..', 'helpers', 'without-onnxruntime.js');
const MLP = path.join(FIXTURES, 'mlp', 'model.onnx');
const INSTALL = 'ONNXRUNTIME_NODE_INSTALL=skip npm install "onnxruntime-node@>=1.30.0 <1.32.0"';

let tmp: string | undefined;
let programFile: string;
/** What the program gives on onnxruntime, here, for the input the child runs. */
let expected: number[];

beforeAll(async () => {
  tmp = makeTempDir('ort-absent');
  programFile = path.join(tmp, 'mlp-onnxruntime.trtp');
  const program = await compile(MLP, { backend: 'onnxruntime', inputs: { input0: { shape: [2, 32] } } });
  try {
    await program.save(programFile);
    const [y] = await program.run([Tensor.from('float32', [2, 32], new Array(64).fill(0.5))]);
    expected = Array.from(y!.toArray() as number[]);
  } finally {
    await program.dispose();
  }
});

afterAll(() => removeTempDir(tmp));

test('compile, load and run in a process without onnxruntime-node', () => {
  const body = `
    const inputs = { inputs: { input0: { shape: [2, 32] } } };
    const codeOf = (e) => ({ code: e.code, name: e.name, details: e.details, message: e.message });
    const out = {};
    out.named = await lib.compile(${JSON.stringify(MLP)}, { ...inputs, backend: 'onnxruntime' }).then(() => 'compiled', codeOf);
    const said = [];
    const logger = (level, message) => said.push([level, message]);
    const backends = [];
    // The first compile has no logger: the warning reaches no one and stays unsaid.
    for (const settings of [inputs, { ...inputs, logger }, { ...inputs, logger }]) {
      const p = await lib.compile(${JSON.stringify(MLP)}, settings);
      backends.push(p.backend);
      await p.dispose();
    }
    out.backends = backends;
    out.warnings = said.filter(([level]) => level === 'warn').map(([, m]) => m);
    out.never = await lib.loadProgram(${JSON.stringify(programFile)}, { rebuild: 'never' }).then(() => 'loaded', codeOf);
    const loadLog = [];
    const program = await lib.loadProgram(${JSON.stringify(programFile)}, { logger: (level, message) => loadLog.push([level, message]) });
    try {
      out.loadWarnings = loadLog.filter(([level]) => level === 'warn').map(([, m]) => m);
      out.loadedBackend = program.backend;
      out.run = await program.run([lib.Tensor.from('float32', [2, 32], new Array(64).fill(0.5))]).then(([y]) => Array.from(y.toArray()), codeOf);
    } finally {
      await program.dispose();
    }
    out.doctor = lib.formatDoctorReport(await lib.doctor()).split('\\n').filter((l) => /onnxruntime/.test(l));
    return out;`;
  const { status, result, stderr } = runLibScenario(body, { NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ''} -r ${PRELOAD}`.trim(), DEBUG: '' }, 120_000);
  expect({ status, stderr: status === 0 ? '' : stderr, failed: result.failed }).toEqual({ status: 0, stderr: '', failed: undefined });
  const hint = expect.stringContaining(`onnxruntime-node is not installed (it is an optional peer dependency): install it next to tensorrt-node: \`${INSTALL}\``);
  expect(result.named).toMatchObject({ code: 'E_BACKEND_UNAVAILABLE', name: 'BackendUnavailableError', details: { backend: 'onnxruntime', reasons: [hint] } });
  expect(result.backends).toEqual(['reference', 'reference', 'reference']);
  expect(result.warnings).toEqual([expect.stringMatching(/^`auto` runs engine segments on the reference backend, which computes in JavaScript, 50–100× slower \(.*\), because onnxruntime-node is not installed/)]);
  expect((result.warnings as string[])[0]).toContain(INSTALL);
  expect(result.never).toMatchObject({ code: 'E_BACKEND_UNAVAILABLE', details: { backend: 'onnxruntime', reasons: [hint], segment: 0 } });
  expect((result.never as { message: string }).message).toMatch(/^program file ".*": segment 0: the onnxruntime engine cannot run here: onnxruntime-node is not installed.*, and rebuild is "never"$/);
  expect(result.loadWarnings).toEqual([expect.stringMatching(/segment 0: the onnxruntime engine cannot run here: onnxruntime-node is not installed.*; rebuilt its onnxruntime engine for the reference backend from the network the file keeps/)]);
  expect(result.loadedBackend).toBe('reference');
  const got = result.run as number[];
  expect(got).toHaveLength(expected.length);
  got.forEach((v, i) => expect(v).toBeCloseTo(expected[i]!, 5));
  expect(result.doctor).toEqual(
    expect.arrayContaining([
      expect.stringMatching(/^onnxruntime {3}onnxruntime-node is not installed: where no GPU backend is usable, `auto` runs engine segments on the reference backend, .* 50–100× slower/),
      `                install it: ${INSTALL}`,
      'Backend       onnxruntime: not usable',
    ]),
  );
});
