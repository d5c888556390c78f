/**
 * Where a tensor-parallel all-reduce runs (lib/runtime/tensor-parallel/collectives.ts): the pure
 * choice between NCCL and the host, every reason that keeps NCCL out, and the `nccl` policy's
 * error. The NCCL path itself runs on the GPU machine (test/gpu/tensor-parallel-file.check.js).
 */
import { chooseCollectivePath, placeOfValue, type RankPlace } from '../../lib/runtime/tensor-parallel/collectives';
import { collectivesPolicyProblem } from '../../lib/runtime/tensor-parallel/collectives-policy';
import { Tensor } from '../../lib/ir/tensor';

const gpu = (ordinal: number, dtype = 'float32'): RankPlace => ({ kind: 'device', ordinal, dtype });
const host: RankPlace = { kind: 'host' };

describe('chooseCollectivePath', () => {
  test('every rank on a GPU of its own, in the collective dtype, NCCL loaded: NCCL on those devices', () => {
    expect(chooseCollectivePath('auto', [gpu(0), gpu(1)], 'float32', true, 'all_reduce_3')).toEqual({ path: 'nccl', devices: [0, 1] });
    expect(chooseCollectivePath('nccl', [gpu(2)], 'float32', true, 'all_reduce_3')).toEqual({ path: 'nccl', devices: [2] });
  });

  test.each<[string, RankPlace[], string, true | string, RegExp]>([
    ['a rank on the host', [gpu(0), host], 'float32', true, /rank 1's tensor is on the host/],
    ["a backend's own device value", [{ kind: 'foreign', ordinal: 0 }, gpu(1)], 'float32', true, /rank 0's tensor is a device value of its backend's own, not a DeviceTensor/],
    ['two ranks on one GPU', [gpu(0), gpu(1), gpu(1)], 'float32', true, /ranks 1 and 2 are both on device 1 \(NCCL takes one rank per GPU\)/],
    ['a rank in another dtype', [gpu(0), gpu(1, 'float16')], 'float32', true, /rank 1's tensor is float16, the collective works in float32/],
    ['no NCCL', [gpu(0), gpu(1)], 'float32', 'libnccl.so.2: cannot open shared object file', /NCCL is not available: libnccl.so.2: cannot open/],
  ])('%s: the host under auto, E_NCCL naming the node and the reason under nccl', (_, places, dtype, nccl, why) => {
    const chosen = chooseCollectivePath('auto', places, dtype, nccl, 'all_reduce_7');
    expect(chosen.path).toBe('host');
    expect((chosen as { why: string }).why).toMatch(why);
    let error: (Error & { code?: string; details?: Record<string, unknown> }) | undefined;
    try {
      chooseCollectivePath('nccl', places, dtype, nccl, 'all_reduce_7');
    } catch (e) {
      error = e as typeof error;
    }
    expect(error?.code).toBe('E_NCCL');
    expect(error?.message).toMatch(/^all-reduce all_reduce_7 cannot run through NCCL, as the collectives policy 'nccl' requires: /);
    expect(error?.message).toMatch(why);
    expect(error?.details).toEqual({ node: 'all_reduce_7', reason: (chosen as { why: string }).why });
  });

  test('the host policy never takes NCCL, even where it could', () => {
    expect(chooseCollectivePath('host', [gpu(0), gpu(1)], 'float32', true, 'n')).toEqual({ path: 'host', why: 'the collectives policy is host' });
  });

  test('a host Tensor is on the host; a device value that is not a DeviceTensor is foreign', () => {
    expect(placeOfValue(Tensor.from('float32', [1], [1]))).toEqual(host);
    const handle = { dtype: 'float32' as const, shape: [1], residency: { kind: 'device' as const, ordinal: 3 }, toHost: async () => Tensor.from('float32', [1], [1]) };
    expect(placeOfValue(handle)).toEqual({ kind: 'foreign', ordinal: 3 });
  });
});

describe('collectivesPolicyProblem', () => {
  test('auto, nccl, host and undefined are policies; anything else is named', () => {
    for (const ok of ['auto', 'nccl', 'host', undefined]) expect(collectivesPolicyProblem(ok, 'collectives')).toBeNull();
    expect(collectivesPolicyProblem('gloo', 'collectives')).toBe(`collectives must be one of 'auto', 'nccl', 'host', got "gloo"`);
    expect(collectivesPolicyProblem(1, 'load options: collectives')).toBe(`load options: collectives must be one of 'auto', 'nccl', 'host', got 1`);
  });
});
