/**
 * native/nccl and lib/collectives against a fake libnccl.so.2 and a fake driver whose "device"
 * memory is host memory (fake-nccl.ts): the library search and version check, the config and
 * environment NCCL sees at init, error mapping, and the abort of a communicator whose peers never
 * join or die. Each scenario runs in its own node process: the addon opens NCCL once per process.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';

import { DIST_INDEX, makeTempDir, removeTempDir, requireBuild, runCli, runNode } from '../helpers/built-package';
import { buildFakeCudaWithMemory, buildFakeNccl, type FakeNcclScenario } from './fake-nccl';

const describeOnLinux = process.platform === 'linux' ? describe : describe.skip;
const COLLECTIVES = path.join(path.dirname(DIST_INDEX), 'collectives', 'index.js');

interface Outcome {
  ok: boolean;
  value?: unknown;
  error?: { name: string; code: string; message: string; details: Record<string, unknown> };
}

let tmp = '';
let nccl = {} as Record<FakeNcclScenario, string>;
let cuda = '';
let logCount = 0;

/** Runs `body` (`c` = lib/collectives, `lib` = the package) in a child; returns its outcome and NCCL's call log. */
function probe(body: string, scenario: FakeNcclScenario | null, env: Record<string, string> = {}): { outcome: Outcome; log: string[] } {
  const log = path.join(tmp, `calls-${logCount++}.log`);
  const script = `
    const c = require(${JSON.stringify(COLLECTIVES)});
    const lib = require(${JSON.stringify(DIST_INDEX)});
    (async () => { ${body} })().then(
      (value) => console.log(JSON.stringify({ ok: true, value })),
      (e) => console.log(JSON.stringify({ ok: false, error: { name: e.name, code: e.code, message: e.message, details: e.details } })));`;
  const base: Record<string, string> = { TENSORRT_NODE_CUDA_LIBRARY: cuda, FAKE_NCCL_LOG: log };
  if (scenario !== null) base.TENSORRT_NODE_NCCL_LIBRARY = nccl[scenario];
  const result = runNode(['-e', script], { ...base, ...env });
  if (result.status !== 0) throw new Error(`probe failed (${result.status}): ${result.stdout}\n${result.stderr}`);
  const calls = fs.existsSync(log) ? fs.readFileSync(log, 'utf8').trim().split('\n') : [];
  return { outcome: JSON.parse(result.stdout) as Outcome, log: calls };
}

const ONE_RANK = `const id = await c.NcclCommunicator.uniqueId();
  const comm = await c.NcclCommunicator.create({ id, size: 1, rank: 0, device: 0, timeoutMs: 2000 });`;

beforeAll(() => {
  requireBuild();
  tmp = makeTempDir('fake-nccl');
  nccl = buildFakeNccl(tmp);
  cuda = buildFakeCudaWithMemory(tmp);
}, 60_000);

afterAll(() => removeTempDir(tmp));

describeOnLinux('NCCL', () => {
  test('not installed: E_CUDA_LIBRARY_MISSING names libnccl.so.2, the override variable and how to install NCCL', () => {
    const { outcome } = probe('return await c.NcclCommunicator.uniqueId();', null);
    expect(outcome.error).toMatchObject({ name: 'CudaLibraryMissingError', code: 'E_CUDA_LIBRARY_MISSING', details: { library: 'nccl' } });
    expect((outcome.error!.details.tried as string[]).map((t) => t.split(':')[0])).toEqual(['libnccl.so.2']);
    expect(outcome.error!.message).toMatch(/Install NCCL 2\.17 or newer/);
    expect(outcome.error!.message).toMatch(/TENSORRT_NODE_NCCL_LIBRARY/);
  });

  test('an NCCL older than 2.17 is refused with its version', () => {
    const { outcome } = probe('return await c.ncclStatus();', 'old');
    expect(outcome.value).toMatchObject({ found: false, error: { code: 'E_CUDA_LIBRARY_MISSING' } });
    expect((outcome.value as { error: { message: string } }).error.message).toMatch(/it is NCCL 2\.15\.0 \(ncclGetVersion 21500\), and 2\.17 or newer is needed/);
  });

  test('a library without ncclCommGetAsyncError is refused naming it', () => {
    const { outcome } = probe('return await c.NcclCommunicator.uniqueId();', 'noAsyncError');
    expect(outcome.error).toMatchObject({ code: 'E_CUDA_LIBRARY_MISSING' });
    expect(outcome.error!.message).toMatch(/lacks ncclCommGetAsyncError/);
  });

  test('a one-rank communicator: non-blocking config of NCCL 2.17 layout, NVLS off, finalized then destroyed', () => {
    const { outcome, log } = probe(
      `${ONE_RANK}
       const before = { rank: comm.rank, size: comm.size, device: comm.device, state: comm.state };
       await comm.dispose();
       await comm.dispose();
       return { before, after: comm.state, id: Array.from(id.slice(0, 3)) };`,
      'ok',
    );
    expect(outcome.value).toEqual({ before: { rank: 0, size: 1, device: 0, state: 'ready' }, after: 'destroyed', id: [1, 8, 15] });
    // size 48 = sizeof(our ncclConfig_t prefix) on LP64; magic and version as NCCL_CONFIG_INITIALIZER would set for 2.17.
    expect(log).toEqual(['init nranks=1 rank=0 blocking=0 id1=8', 'config size=48 magic=cafebeef version=21700 nvls=0', 'finalize rank=0', 'destroy rank=0']);
  });

  test("the user's NCCL_NVLS_ENABLE is left alone", () => {
    const { log } = probe(`${ONE_RANK} await comm.abort();`, 'ok', { NCCL_NVLS_ENABLE: '1' });
    expect(log[1]).toMatch(/nvls=1$/);
    expect(log[2]).toBe('abort rank=0');
  });

  test('an init failure is E_NCCL naming the call, the result and NCCL\'s last error', () => {
    const { outcome } = probe(ONE_RANK, 'duplicateGpu');
    expect(outcome.error).toMatchObject({
      name: 'NcclError',
      code: 'E_NCCL',
      details: { call: 'ncclCommInitRankConfig', ncclResult: 'ncclInvalidUsage', ncclResultCode: 5, rank: 0, nranks: 1, device: 0 },
    });
    expect(outcome.error!.message).toBe(
      'ncclCommInitRankConfig failed with ncclInvalidUsage (invalid usage (run with NCCL_DEBUG=WARN for details)): ' +
        'Duplicate GPU detected : rank 0 and rank 1 both on CUDA device 60 [rank 0 of 1 on device 0]',
    );
  });

  test('peers that never join: init times out, the communicator is aborted, and nothing hangs', () => {
    const { outcome, log } = probe(
      `const id = await c.NcclCommunicator.uniqueId();
       await c.NcclCommunicator.create({ id, size: 2, rank: 1, device: 0, timeoutMs: 200 });`,
      'initHangs',
    );
    expect(outcome.error).toMatchObject({ code: 'E_NCCL', details: { call: 'ncclCommInitRankConfig', reason: 'timeout', timeoutMs: 200, rank: 1, nranks: 2 } });
    expect(outcome.error!.message).toMatch(/did not complete within 200 ms \[rank 1 of 2 on device 0\]; the communicator was aborted \(ncclCommAbort\)/);
    expect(log[log.length - 1]).toBe('abort rank=1');
  });

  test('argument errors are E_INVALID_ARGUMENT before NCCL is called', () => {
    const { outcome } = probe(
      `const id = await c.NcclCommunicator.uniqueId();
       const errors = [];
       for (const options of [{ id: new Uint8Array(4), size: 1, rank: 0 }, { id, size: 2, rank: 2 }, { id, size: 0, rank: 0 }, { id, size: 1, rank: 0, timeoutMs: 0 }]) {
         try { await c.NcclCommunicator.create(options); } catch (e) { errors.push(e.code + ': ' + e.message); }
       }
       try { await c.NcclCommunicator.createAll([0, 0]); } catch (e) { errors.push(e.code + ': ' + e.message); }
       return errors;`,
      'ok',
    );
    expect(outcome.value).toEqual([
      'E_INVALID_ARGUMENT: the NCCL id must be the 128-byte Uint8Array from NcclCommunicator.uniqueId()',
      'E_INVALID_ARGUMENT: rank must be an integer in [0, 2), got 2',
      'E_INVALID_ARGUMENT: size must be an integer >= 1, got 0',
      'E_INVALID_ARGUMENT: timeoutMs must be a whole number of milliseconds >= 1, got 0',
      'E_INVALID_ARGUMENT: createAll needs distinct devices (NCCL refuses two ranks on one GPU), got [0, 0]',
    ]);
  });

  test('ncclCommInitAll: one communicator per device, rank i on devices[i]', () => {
    const { outcome, log } = probe(
      `const comms = await c.NcclCommunicator.createAll([1, 0]);
       const seen = comms.map((m) => [m.rank, m.size, m.device, m.state]);
       await Promise.all(comms.map((m) => m.dispose()));
       return seen;`,
      'ok',
    );
    expect(outcome.value).toEqual([[0, 2, 1, 'ready'], [1, 2, 0, 'ready']]);
    expect(log.slice(0, 2)).toEqual(['initAll device=1 rank=0 of 2', 'initAll device=0 rank=1 of 2']);
  });

  test('one rank: all-reduce is the identity, in place or into an output, for float32, int64 and bool', () => {
    const { outcome, log } = probe(
      `${ONE_RANK}
       const x = await lib.toDevice(new lib.Tensor('float32', [2, 2], new Float32Array([1.5, -2, 3e-8, 7])));
       const out = await lib.DeviceTensor.allocate('float32', [2, 2]);
       const same = await comm.allReduce(x, 'avg', { output: out });
       const i = await lib.toDevice(new lib.Tensor('int64', [2], new BigInt64Array([-(2n ** 62n), 5n])));
       await comm.allReduce(i, 'max');
       const b = await lib.toDevice(new lib.Tensor('bool', [3], new Uint8Array([1, 0, 1])));
       await comm.allReduce(b, 'min');
       return { same: same === out, f: Array.from((await out.toHost()).data), i: Array.from((await i.toHost()).data, String),
                b: Array.from((await b.toHost()).data) };`,
      'ok',
    );
    expect(outcome.value).toEqual({ same: true, f: [1.5, -2, Math.fround(3e-8), 7], i: [String(-(2n ** 62n)), '5'], b: [1, 0, 1] });
    // ncclFloat32/ncclAvg, ncclInt64/ncclMax, bool as ncclUint8/ncclMin.
    expect(log.filter((l) => l.startsWith('allreduce'))).toEqual([
      'allreduce count=4 dtype=7 op=4 nranks=1',
      'allreduce count=2 dtype=4 op=2 nranks=1',
      'allreduce count=3 dtype=1 op=3 nranks=1',
    ]);
  });

  test('a peer that dies mid-collective: E_NCCL with NCCL\'s error, the communicator aborted, later calls refused at once', () => {
    const { outcome, log } = probe(
      `${ONE_RANK}
       const x = await lib.toDevice(new lib.Tensor('float32', [2], new Float32Array([1, 2])));
       const errors = [];
       for (let k = 0; k < 2; k++) {
         try { await comm.allReduce(x); } catch (e) { errors.push({ code: e.code, message: e.message, details: e.details }); }
       }
       return { errors, state: comm.state };`,
      'peerDies',
    );
    const { errors, state } = outcome.value as { errors: Outcome['error'][]; state: string };
    expect(state).toBe('aborted');
    expect(errors[0]).toMatchObject({ code: 'E_NCCL', details: { call: 'ncclAllReduce', ncclResult: 'ncclRemoteError', lastError: 'peer rank 1 exited' } });
    expect(errors[0]!.message).toBe(
      'ncclAllReduce failed with ncclRemoteError (remote process exited or there was a network error): peer rank 1 exited [rank 0 of 1 on device 0]',
    );
    expect(errors[1]).toMatchObject({ code: 'E_NCCL', details: { call: 'ncclAllReduce', reason: 'aborted' } });
    expect(errors[1]!.message).toMatch(/^ncclAllReduce on a communicator that was aborted \[rank 0 of 1 on device 0\]: ncclAllReduce failed with ncclRemoteError/);
    expect(log.filter((l) => l.startsWith('allreduce') || l.startsWith('abort'))).toEqual(['allreduce count=2 dtype=7 op=0 nranks=1', 'abort rank=0']);
  });

  test('bad all-reduce arguments are E_INVALID_ARGUMENT and reach no NCCL call', () => {
    const { outcome, log } = probe(
      `${ONE_RANK}
       const x = await lib.toDevice(new lib.Tensor('float32', [2], new Float32Array([1, 2])));
       const onOther = await lib.toDevice(new lib.Tensor('float32', [2], new Float32Array([1, 2])), 1);
       const wrong = await lib.DeviceTensor.allocate('float16', [2]);
       const gone = await lib.toDevice(new lib.Tensor('float32', [2], new Float32Array([1, 2])));
       gone.dispose();
       const errors = [];
       for (const call of [() => comm.allReduce(x, 'sum', { output: wrong }), () => comm.allReduce(onOther), () => comm.allReduce(gone),
                           () => comm.allReduce(x, 'sum', { timeoutMs: -1 }), () => comm.allReduce({}), () => comm.allReduce(x, 'xor')]) {
         try { await call(); } catch (e) { errors.push(e.code + ': ' + e.message); }
       }
       return errors;`,
      'ok',
    );
    expect(outcome.value).toEqual([
      'E_INVALID_ARGUMENT: allReduce output (float16 [2]) must match the input (float32 [2])',
      "E_INVALID_ARGUMENT: rank 0's communicator is on device 0, and the tensor is on device 1",
      'E_INVALID_ARGUMENT: allReduce input is a disposed DeviceTensor',
      'E_INVALID_ARGUMENT: timeoutMs must be a whole number of milliseconds >= 1, got -1',
      'E_INVALID_ARGUMENT: allReduce input must be a DeviceTensor',
      'E_INVALID_ARGUMENT: unknown all-reduce op "xor"; expected one of sum, prod, max, min, avg',
    ]);
    expect(log.some((l) => l.startsWith('allreduce'))).toBe(false);
  });

  test('one thread, two devices: a grouped all-reduce sums across the communicators of ncclCommInitAll', () => {
    const { outcome, log } = probe(
      `const comms = await c.NcclCommunicator.createAll([0, 1]);
       const a = await lib.toDevice(new lib.Tensor('float32', [3], new Float32Array([1, 2, 3])), 0);
       const b = await lib.toDevice(new lib.Tensor('float32', [3], new Float32Array([10, 20, 0.5])), 1);
       await c.allReduceGroup(comms, [a, b], 'sum');
       return [Array.from((await a.toHost()).data), Array.from((await b.toHost()).data)];`,
      'ok',
    );
    expect(outcome.value).toEqual([[11, 22, 3.5], [11, 22, 3.5]]);
    expect(log.slice(2)).toEqual(['groupStart', 'allreduce count=3 dtype=7 op=0 nranks=2', 'allreduce count=3 dtype=7 op=0 nranks=2', 'groupEnd ranks=2']);
  });

  test('a grouped all-reduce into separate outputs leaves the inputs as they were', () => {
    const { outcome } = probe(
      `const comms = await c.NcclCommunicator.createAll([0, 1]);
       const a = await lib.toDevice(new lib.Tensor('float32', [2], new Float32Array([1, 2])), 0);
       const b = await lib.toDevice(new lib.Tensor('float32', [2], new Float32Array([3, -5])), 1);
       const outputs = [await lib.DeviceTensor.allocate('float32', [2], 0), await lib.DeviceTensor.allocate('float32', [2], 1)];
       const got = await c.allReduceGroup(comms, [a, b], 'sum', { outputs });
       const wrongDevice = await c.allReduceGroup(comms, [a, b], 'sum', { outputs: [outputs[1], outputs[0]] }).catch((e) => e.message);
       return [got[0] === outputs[0], ...(await Promise.all([a, b, ...outputs].map(async (t) => Array.from((await t.toHost()).data)))), wrongDevice];`,
      'ok',
    );
    expect(outcome.value).toEqual([true, [1, 2], [3, -5], [4, -3], [4, -3], "rank 0's communicator is on device 0, and the tensor is on device 1"]);
  });

  describe("a tensor-parallel program's collectives (lib/runtime/tensor-parallel/collectives.ts)", () => {
    const TP = path.join(path.dirname(DIST_INDEX), 'runtime', 'tensor-parallel', 'collectives.js');

    test('DeviceCollectives: communicators made once (ncclCommInitAll) for every all-reduce, results in fresh tensors, destroyed by dispose()', () => {
      const { outcome, log } = probe(
        `const { DeviceCollectives, chooseCollectivePath, placeOfValue } = require(${JSON.stringify(TP)});
         const a = await lib.toDevice(new lib.Tensor('float32', [3], new Float32Array([1, 2, 3])), 0);
         const b = await lib.toDevice(new lib.Tensor('float32', [3], new Float32Array([10, 20, 0.5])), 1);
         const path = chooseCollectivePath('auto', [a, b].map(placeOfValue), 'float32', await DeviceCollectives.ncclAvailable(), 'all_reduce');
         const d = new DeviceCollectives();
         const first = await d.allReduce([a, b], path.devices, 'sum', 'all_reduce');
         const second = await d.allReduce(first, path.devices, 'sum', 'all_reduce_1');
         const moved = await d.allReduce([b, a], [1, 0], 'sum', 'all_reduce_2').catch((e) => [e.code, e.message]);
         await d.dispose();
         const host = async (t) => Array.from((await t.toHost()).data);
         return [path, await host(a), await host(b), await host(first[0]), await host(first[1]), await host(second[1]), moved];`,
        'ok',
      );
      expect(outcome.value).toEqual([
        { path: 'nccl', devices: [0, 1] },
        [1, 2, 3],
        [10, 20, 0.5],
        [11, 22, 3.5],
        [11, 22, 3.5],
        [22, 44, 7],
        ['E_NCCL', "all-reduce all_reduce_2: the ranks' tensors are on devices [1, 0], but the communicators were made on [0, 1]"],
      ]);
      expect(log.filter((l) => l.startsWith('initAll'))).toHaveLength(2);
      expect(log.filter((l) => l.startsWith('groupStart'))).toHaveLength(2);
      // dispose() destroys the communicators concurrently (Promise.allSettled), so in either order: each once.
      expect(log.filter((l) => l.startsWith('destroy')).sort()).toEqual(['destroy rank=0', 'destroy rank=1']);
    });

    test('without libnccl, auto takes the host and nccl says why', () => {
      const { outcome } = probe(
        `const { DeviceCollectives, chooseCollectivePath, placeOfValue } = require(${JSON.stringify(TP)});
         const a = await lib.toDevice(new lib.Tensor('float32', [1], new Float32Array([1])), 0);
         const b = await lib.toDevice(new lib.Tensor('float32', [1], new Float32Array([2])), 1);
         const available = await DeviceCollectives.ncclAvailable();
         const auto = chooseCollectivePath('auto', [a, b].map(placeOfValue), 'float32', available, 'all_reduce');
         const refused = (() => { try { chooseCollectivePath('nccl', [a, b].map(placeOfValue), 'float32', available, 'all_reduce'); } catch (e) { return e.code; } })();
         return [auto.path, auto.why.startsWith('NCCL is not available: '), refused];`,
        null,
        { TENSORRT_NODE_NCCL_LIBRARY: path.join(tmp, 'absent', 'libnccl.so.2') },
      );
      expect(outcome.value).toEqual(['host', true, 'E_NCCL']);
    });
  });

  test('doctor lists NCCL with its version, or why not', () => {
    const found = runCli(['doctor'], { TENSORRT_NODE_NCCL_LIBRARY: nccl.ok });
    expect(found.stdout).toContain(`nccl          2.28.3 (${nccl.ok})`);
    const json = JSON.parse(runCli(['doctor', '--json'], { TENSORRT_NODE_NCCL_LIBRARY: '/no/libnccl.so.2' }).stdout) as { nccl: unknown };
    expect(json.nccl).toMatchObject({ found: false, path: null, version: null, error: { code: 'E_CUDA_LIBRARY_MISSING' } });
  });
});
