/**
 * Without onnxruntime-node (simulated by making its module resolution fail): the backend
 * says why and how to add it, `auto` passes over it to the next backend and warns once about
 * the cost, asking for it by name or loading its engines is E_BACKEND_UNAVAILABLE, and
 * `doctor` says what is missing, what that costs and how to add it. Malformed engine bytes
 * are a BadModelError whether or not onnxruntime is there. The whole path through the compile
 * worker and a program's worker is in ./absent-process.test.ts.
 */
import { ORT_PEER_RANGE } from '../../../lib/backends/onnxruntime';

/** The install command, written out (a change to it must show here). */
const INSTALL = 'ONNXRUNTIME_NODE_INSTALL=skip npm install "onnxruntime-node@>=1.30.0 <1.32.0"';

function withoutOrt(): typeof import('../../../lib/backends') {
  jest.resetModules();
  jest.doMock('onnxruntime-node', () => {
    const e = new Error("Cannot find module 'onnxruntime-node' from 'lib/backends/onnxruntime/ort-module.ts'") as Error & { code: string };
    e.code = 'MODULE_NOT_FOUND';
    throw e;
  });
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  return require('../../../lib/backends');
}

afterEach(() => {
  jest.dontMock('onnxruntime-node');
  jest.resetModules();
});

describe('the onnxruntime backend without onnxruntime-node', () => {
  it('is unavailable, saying how to add it', async () => {
    const { getBackend } = withoutOrt();
    const a = await getBackend('onnxruntime').available();
    expect(a.ok).toBe(false);
    const reasons = a.ok ? [] : a.reasons.join(' ');
    expect(reasons).toContain('onnxruntime-node is not installed');
    expect(reasons).toContain(INSTALL);
  });

  it('is passed over by auto (which says why) and refused by name', async () => {
    const { resolveBackend } = withoutOrt();
    const { backend, refusals } = await resolveBackend('auto');
    expect(backend.name).toBe('reference');
    expect(refusals.map((r) => r.backend)).toEqual(['tensorrt', 'cuda', 'onnxruntime']);
    expect(refusals.find((r) => r.backend === 'onnxruntime')!.reasons.join(' ')).toContain('not installed');
    const named = resolveBackend('onnxruntime');
    // Classes differ between module registries (jest.resetModules): compare the stable code.
    await expect(named).rejects.toMatchObject({
      code: 'E_BACKEND_UNAVAILABLE',
      name: 'BackendUnavailableError',
      details: { backend: 'onnxruntime', reasons: [expect.stringContaining(`onnxruntime-node is not installed (it is an optional peer dependency): install it next to tensorrt-node: \`${INSTALL}\``)] },
    });
    await expect(named).rejects.toThrow(/onnxruntime-node is not installed/);
  });

  it('is listed by doctor: missing, what that costs, and the command that adds it', async () => {
    withoutOrt();
    const { doctor, formatDoctorReport } = require('../../../lib/doctor') as typeof import('../../../lib/doctor');
    const report = await doctor();
    expect(report.onnxruntimeNode).toEqual({ found: false, problem: 'missing', reason: expect.stringContaining('onnxruntime-node is not installed'), install: INSTALL });
    const lines = formatDoctorReport(report).split('\n');
    expect(lines).toContain('Backend       onnxruntime: not usable');
    const at = lines.findIndex((l) => l.startsWith('onnxruntime   '));
    expect(lines[at]).toBe(
      'onnxruntime   onnxruntime-node is not installed: where no GPU backend is usable, `auto` runs engine segments on the reference backend, ' +
        'which computes in JavaScript, 50–100× slower (mobilenet_v3_small at 1×3×96×96, median run: 25–45 ms against 0.25–0.7 ms)',
    );
    expect(lines[at + 1]).toBe(`                install it: ${INSTALL}`);
  });

  it('`auto` landing on the reference backend warns once per process, at warn, with the cost and the install command', async () => {
    const { resolveBackend } = withoutOrt();
    const { warnReferenceFallback } = require('../../../lib/compile/backend-fallback') as typeof import('../../../lib/compile/backend-fallback');
    const { resolveLogger } = require('../../../lib/logger') as typeof import('../../../lib/logger');
    const { backend, refusals } = await resolveBackend('auto');
    const said: Array<[string, string]> = [];
    const log = (level: string, message: string): void => void said.push([level, message]);
    // Named, the reference backend is what the caller wants: nothing to warn about.
    warnReferenceFallback('reference', 'reference', [], log);
    // The default logger (no DEBUG) tells no one, so it does not use the warning up.
    const debug = process.env.DEBUG;
    delete process.env.DEBUG;
    try {
      warnReferenceFallback('auto', backend.name, refusals, resolveLogger());
    } finally {
      if (debug !== undefined) process.env.DEBUG = debug;
    }
    expect(said).toEqual([]);
    warnReferenceFallback('auto', backend.name, refusals, log);
    warnReferenceFallback('auto', backend.name, refusals, log);
    expect(said).toEqual([
      [
        'warn',
        '`auto` runs engine segments on the reference backend, which computes in JavaScript, 50–100× slower (mobilenet_v3_small at 1×3×96×96, median run: ' +
          `25–45 ms against 0.25–0.7 ms), because onnxruntime-node is not installed (it is an optional peer dependency): install it next to tensorrt-node: \`${INSTALL}\` ` +
          '(the variable stops its install script from downloading the CUDA provider, which this CPU backend does not use). This warning is given once per process.',
      ],
    ]);
  });

  it('warns about nothing where `auto` took a backend other than the reference one, or passed over no onnxruntime', () => {
    withoutOrt();
    const { warnReferenceFallback } = require('../../../lib/compile/backend-fallback') as typeof import('../../../lib/compile/backend-fallback');
    const said: string[] = [];
    const log = (_level: string, message: string): void => void said.push(message);
    const missing = [{ backend: 'onnxruntime' as const, reasons: ['onnxruntime-node is not installed'] }];
    warnReferenceFallback('auto', 'cuda', missing, log);
    warnReferenceFallback('auto', 'reference', [{ backend: 'cuda', reasons: ['no GPU'] }], log);
    expect(said).toEqual([]);
    warnReferenceFallback('auto', 'reference', missing, log);
    expect(said).toHaveLength(1);
  });

  it('refuses to load engines with the same hint', async () => {
    const { getBackend } = withoutOrt();
    const { buildOrtEngine } = require('../../../lib/backends/onnxruntime') as typeof import('../../../lib/backends/onnxruntime');
    const { Network } = require('../../../lib/network') as typeof import('../../../lib/network');
    const network = new Network('n');
    const x = network.addInput('x', 'float32', [2]);
    network.markOutput(network.add1({ kind: 'unary', op: 'exp' }, [x], 'exp'), 'y');
    const engine = buildOrtEngine(network, { intraOpThreads: 1, interOpThreads: 1 });
    const load = getBackend('onnxruntime').load(engine, null);
    await expect(load).rejects.toThrow(/cannot load engines here: onnxruntime-node is not installed/);
    await expect(load).rejects.toMatchObject({ code: 'E_BACKEND_UNAVAILABLE', details: { backend: 'onnxruntime', reasons: [expect.stringContaining(INSTALL)] } });
  });
});

describe('with onnxruntime-node', () => {
  it('is one of the verified releases, inside the peer range package.json declares (optional)', () => {
    jest.resetModules();
    const { loadOrt, ORT_VERIFIED_VERSIONS } = require('../../../lib/backends/onnxruntime') as typeof import('../../../lib/backends/onnxruntime');
    const pkg = require('../../../package.json') as { peerDependencies: Record<string, string>; peerDependenciesMeta: Record<string, { optional?: boolean }>; devDependencies: Record<string, string> };
    expect(pkg.peerDependencies['onnxruntime-node']).toBe(ORT_PEER_RANGE);
    expect(pkg.peerDependenciesMeta['onnxruntime-node']).toEqual({ optional: true });
    expect(ORT_PEER_RANGE).toBe('>=1.30.0 <1.32.0');
    // What the tests run against must be a release the docs and the range claim.
    expect(ORT_VERIFIED_VERSIONS).toContain(pkg.devDependencies['onnxruntime-node']);
    const loaded = loadOrt();
    expect(loaded.ok && ORT_VERIFIED_VERSIONS.includes(loaded.version as (typeof ORT_VERIFIED_VERSIONS)[number])).toBe(true);
    // Engines record the onnxruntime-node that built them, not a constant.
    const { onnxruntimeBackend } = require('../../../lib/backends/onnxruntime') as typeof import('../../../lib/backends/onnxruntime');
    expect(onnxruntimeBackend.version).toBe(loaded.ok ? loaded.version : 'none');
  });

  it('is available and first in auto order after the GPU backends', async () => {
    jest.resetModules();
    const { getBackend, resolveBackend } = require('../../../lib/backends') as typeof import('../../../lib/backends');
    expect(await getBackend('onnxruntime').available()).toEqual({ ok: true });
    const { backend, refusals } = await resolveBackend('auto');
    expect(backend.name).toBe('onnxruntime');
    expect(refusals.map((r) => r.backend)).toEqual(['tensorrt', 'cuda']);
  });

  it('refuses malformed engine bytes with BadModelError', async () => {
    const { onnxruntimeBackend, buildOrtEngine } = require('../../../lib/backends/onnxruntime') as typeof import('../../../lib/backends/onnxruntime');
    const { Network } = require('../../../lib/network') as typeof import('../../../lib/network');
    const network = new Network('n');
    const x = network.addInput('x', 'float32', [2]);
    network.markOutput(network.add1({ kind: 'unary', op: 'exp' }, [x], 'exp'), 'y');
    const good = buildOrtEngine(network, { intraOpThreads: 1, interOpThreads: 1 });
    expect(onnxruntimeBackend.inspect(good)).toEqual({ inputNames: ['x'], outputNames: ['y'] });
    const wrongMagic = good.slice();
    wrongMagic[0] = 0x58;
    const truncated = good.subarray(0, 30);
    // The ONNX model itself corrupted (the last bytes of the blob): onnxruntime cannot parse it.
    const corrupt = good.slice();
    corrupt.fill(0xff, corrupt.length - 40);
    for (const [bytes, pattern] of [
      [wrongMagic, /not an onnxruntime engine/],
      [truncated, /onnxruntime engine/],
      [new Uint8Array(0), /truncated/],
      [corrupt, /onnxruntime cannot load the engine of network "n"/],
    ] as const) {
      const e = await onnxruntimeBackend.load(bytes, null).then(
        () => undefined,
        (error: unknown) => error,
      );
      expect(e).toMatchObject({ code: 'E_BAD_MODEL' });
      expect((e as Error).message).toMatch(pattern);
    }
    expect(() => onnxruntimeBackend.inspect('nope' as never)).toThrow(/engine bytes must be a Uint8Array/);
  });
});
