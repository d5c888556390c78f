/**
 * Backend resolution (lib/backends/registry.ts): `auto` tries backends by priority and keeps
 * every refusal; a named backend that refuses is E_TENSORRT_MISSING (tensorrt) or
 * E_BACKEND_UNAVAILABLE (any other, and `auto` with none left) with its reasons; the
 * declared-but-unwritten backends say why and refuse to build or load.
 */
import { BACKENDS, BACKEND_NAMES, backendAvailability, backendsByPriority, getBackend, resolveBackend, type Availability, type Backend, type BackendName } from '../../lib/backends';
import { referenceBackend } from '../../lib/backends/reference';
import { BackendUnavailableError, TensorRTMissingError, InvalidArgumentError } from '../../lib/errors';
import { Network } from '../../lib/network';

/** A backend that answers `availability` and counts how often it was asked. */
function fake<N extends BackendName>(name: N, priority: number, availability: Availability | Error): Backend<N> & { asked: number } {
  const b = {
    ...referenceBackend,
    name,
    priority,
    asked: 0,
    async available(): Promise<Availability> {
      b.asked++;
      if (availability instanceof Error) throw availability;
      return availability;
    },
  };
  return b as unknown as Backend<N> & { asked: number };
}

function table(over: Partial<Record<BackendName, Availability | Error>>): Record<BackendName, Backend & { asked: number }> {
  const no = (n: string): Availability => ({ ok: false, reasons: [`${n} is absent`] });
  return {
    tensorrt: fake('tensorrt', 3, over.tensorrt ?? no('libnvinfer')),
    cuda: fake('cuda', 2, over.cuda ?? no('libcuda')),
    onnxruntime: fake('onnxruntime', 1, over.onnxruntime ?? no('onnxruntime')),
    reference: fake('reference', 0, over.reference ?? { ok: true }),
  };
}

describe('auto resolution', () => {
  test('takes the first available backend by priority and keeps each refusal before it, in order', async () => {
    const t = table({ onnxruntime: { ok: true } });
    const r = await resolveBackend('auto', t);
    expect(r.backend).toBe(t.onnxruntime);
    expect(r.refusals).toEqual([
      { backend: 'tensorrt', reasons: ['libnvinfer is absent'] },
      { backend: 'cuda', reasons: ['libcuda is absent'] },
    ]);
    expect(t.reference.asked).toBe(0);
  });

  test('the highest priority wins when several are available; nothing is refused', async () => {
    const t = table({ tensorrt: { ok: true }, cuda: { ok: true } });
    const r = await resolveBackend('auto', t);
    expect(r.backend.name).toBe('tensorrt');
    expect(r.refusals).toEqual([]);
    expect(t.cuda.asked).toBe(0);
  });

  test('a probe that throws is a refusal with its message, not a crash', async () => {
    const r = await resolveBackend('auto', table({ tensorrt: new Error('dlopen exploded') }));
    expect(r.refusals[0]).toEqual({ backend: 'tensorrt', reasons: ['its probe failed: dlopen exploded'] });
    expect(r.backend.name).toBe('reference');
  });

  test('nothing available: E_BACKEND_UNAVAILABLE listing every backend and reason (TensorRT is not the one thing missing)', async () => {
    const e = await resolveBackend('auto', table({ reference: { ok: false, reasons: ['disabled'] } })).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(BackendUnavailableError);
    expect((e as BackendUnavailableError).code).toBe('E_BACKEND_UNAVAILABLE');
    expect((e as BackendUnavailableError).message).toContain('tensorrt: libnvinfer is absent | cuda: libcuda is absent | onnxruntime: onnxruntime is absent | reference: disabled');
    expect((e as BackendUnavailableError).details).toMatchObject({
      backend: 'auto',
      reasons: ['tensorrt: libnvinfer is absent', 'cuda: libcuda is absent', 'onnxruntime: onnxruntime is absent', 'reference: disabled'],
    });
    expect((e as BackendUnavailableError).details.refusals).toHaveLength(4);
  });

  test.each([
    ['cuda', 'libcuda is absent'],
    ['onnxruntime', 'onnxruntime is absent'],
    ['reference', 'disabled'],
  ] as const)('%s by name is the only one tried; refusing, it is E_BACKEND_UNAVAILABLE naming it and its reasons', async (name, why) => {
    const t = table({ reference: { ok: false, reasons: ['disabled'] } });
    const e = await resolveBackend(name, t).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(BackendUnavailableError);
    expect(e).not.toBeInstanceOf(TensorRTMissingError);
    expect((e as BackendUnavailableError).details).toEqual({ backend: name, reasons: [why], refusals: [{ backend: name, reasons: [why] }] });
    expect((e as Error).message).toContain(`backend "${name}" was asked for, but it is not usable here (${name}: ${why})`);
    expect(t.tensorrt.asked).toBe(0);
  });

  test('tensorrt by name, refusing, stays E_TENSORRT_MISSING with its reasons; a usable named backend resolves', async () => {
    const t = table({});
    const e = await resolveBackend('tensorrt', t).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(TensorRTMissingError);
    expect((e as TensorRTMissingError).details).toMatchObject({ backend: 'tensorrt', reasons: ['libnvinfer is absent'] });
    expect(t.cuda.asked).toBe(0);
    expect((await resolveBackend('reference', t)).backend).toBe(t.reference);
  });
});

describe('the real registry', () => {
  test('every name has its own backend, and priorities follow BACKEND_NAMES', () => {
    for (const name of BACKEND_NAMES) expect(BACKENDS[name].name).toBe(name);
    expect(backendsByPriority().map((b) => b.name)).toEqual([...BACKEND_NAMES]);
    expect(getBackend('reference')).toBe(referenceBackend);
  });

  test('a name outside the union is E_INVALID_ARGUMENT naming it (and a type error at compile time)', () => {
    expect(() => getBackend('tensorrtt')).toThrow(InvalidArgumentError);
    expect(() => getBackend('tensorrtt')).toThrow('no backend named "tensorrtt" exists (known: tensorrt, cuda, onnxruntime, reference)');
    // @ts-expect-error the registry has no such entry: resolveBackend takes only the closed union
    void resolveBackend('tensorrtt').catch(() => undefined);
  });

  test('tensorrt (built without TensorRT) and cuda (no GPU) say why not; auto takes onnxruntime (a devDependency here)', async () => {
    const all = await backendAvailability();
    expect(all.map((b) => [b.backend, b.ok])).toEqual([
      ['tensorrt', false],
      ['cuda', false],
      ['onnxruntime', true],
      ['reference', true],
    ]);
    const reasons = Object.fromEntries(all.map((b) => [b.backend, b.ok ? [] : b.reasons]));
    // This addon is built without TensorRT's headers (CI builds it so): the first reason says how to get them.
    expect(reasons.tensorrt![0]).toContain('the native addon was built without TensorRT: rebuild it with TENSORRT_ROOT');
    // The machines these tests run on have no CUDA driver (test/gpu/ covers the GPU machine).
    expect(reasons.cuda![0]).toMatch(/^no CUDA driver: /);
    expect(reasons.onnxruntime).toEqual([]);
    const r = await resolveBackend('auto');
    expect(r.backend).toBe(getBackend('onnxruntime'));
    expect(r.refusals.map((x) => x.backend)).toEqual(['tensorrt', 'cuda']);
  });

  test('tensorrt, built without TensorRT here, refuses to build with E_TENSORRT_MISSING and its reasons; malformed engine bytes are E_BAD_MODEL', async () => {
    const b = getBackend('tensorrt');
    expect(b.implemented).toBe(false); // this addon is built without TensorRT's headers
    const net = new Network('n');
    net.markOutput(net.add1({ kind: 'unary', op: 'exp' }, [net.addInput('x', 'float32', [1])], 'L'), 'y');
    const cpu = { type: 'cpu', gpuId: null, dlaCore: null, allowGpuFallback: false, computeCapability: null, deviceName: null, hardwareCompatibility: 'none', backend: 'tensorrt', backendVersion: 'x' } as const;
    const build = b.build(net, (await import('../../lib/backends')).DEFAULT_BUILD_CONFIG, cpu);
    await expect(build).rejects.toThrow(TensorRTMissingError);
    await expect(build).rejects.toThrow('the tensorrt backend cannot build engines here: the native addon was built without TensorRT');
    await expect(b.load(new Uint8Array(8), null)).rejects.toMatchObject({ code: 'E_BAD_MODEL' });
    expect(() => b.inspect(new Uint8Array(8))).toThrow(expect.objectContaining({ code: 'E_BAD_MODEL' }));
  });
});
