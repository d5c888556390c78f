/**
 * Without onnxruntime-node (simulated by making its module resolution fail): the backend
 * says why and how to add it, `auto` passes over it to the next backend, asking for it by
 * name is a typed refusal, and `doctor` shows the hint. Malformed engine bytes are a
 * BadModelError whether or not onnxruntime is there.
 */

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
    expect(reasons).toContain('npm install onnxruntime-node@1.30.0');
    expect(reasons).toContain('ONNXRUNTIME_NODE_INSTALL=skip');
  });

  it('is passed over by auto (which says why) and refused by name', async () => {
    const { resolveBackend } = withoutOrt();
    const { backend, refusals } = await resolveBackend('auto');
    expect(backend.name).toBe('reference');
    expect(refusals.map((r) => r.backend)).toEqual(['tensorrt', 'cuda', 'onnxruntime']);
    expect(refusals.find((r) => r.backend === 'onnxruntime')!.reasons.join(' ')).toContain('not installed');
    const named = resolveBackend('onnxruntime');
    // Classes differ between module registries (jest.resetModules): compare the stable code.
    await expect(named).rejects.toMatchObject({ code: 'E_TENSORRT_MISSING' });
    await expect(named).rejects.toThrow(/onnxruntime-node is not installed/);
  });

  it('is listed by doctor with the command that adds it', async () => {
    withoutOrt();
    const { doctor, formatDoctorReport } = require('../../../lib/doctor') as typeof import('../../../lib/doctor');
    const text = formatDoctorReport(await doctor());
    expect(text).toContain('Backend       onnxruntime: not usable');
    expect(text).toContain('ONNXRUNTIME_NODE_INSTALL=skip npm install onnxruntime-node@1.30.0');
  });

  it('refuses to load engines with the same hint', async () => {
    const { getBackend } = withoutOrt();
    const { buildOrtEngine } = require('../../../lib/backends/onnxruntime') as typeof import('../../../lib/backends/onnxruntime');
    const { Network } = require('../../../lib/network') as typeof import('../../../lib/network');
    const network = new Network('n');
    const x = network.addInput('x', 'float32', [2]);
    network.markOutput(network.add1({ kind: 'unary', op: 'exp' }, [x], 'exp'), 'y');
    const engine = buildOrtEngine(network, { intraOpThreads: 1, interOpThreads: 1 });
    await expect(getBackend('onnxruntime').load(engine, null)).rejects.toThrow(/cannot load engines here: onnxruntime-node is not installed/);
  });
});

describe('with onnxruntime-node', () => {
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
