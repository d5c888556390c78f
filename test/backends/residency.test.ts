/**
 * Value residency (lib/runtime/execute.ts, lib/runtime/residency-plan.ts): values stay where
 * the engine that computed them left them; only crossings copy, once per run and place; the
 * run counts exactly the crossings planCrossings() predicts from the segment list.
 */
import type { DeviceValue, Engine, RunValue } from '../../lib/backends';
import { ProgramRun, type LoadedSegment } from '../../lib/runtime/execute';
import { HOST_PLACE, planCrossings, totalCrossings } from '../../lib/runtime/residency-plan';
import type { ProgramData, ProgramSegment } from '../../lib/runtime/segments';
import { Tensor } from '../../lib/ir/tensor';

/** A device value: a host tensor behind a wall; reading it back counts. */
class FakeDeviceValue implements DeviceValue {
  readonly residency = { kind: 'device', ordinal: 0 } as const;
  constructor(private readonly t: Tensor) {}
  get dtype(): Tensor['dtype'] {
    return this.t.dtype;
  }
  get shape(): readonly number[] {
    return this.t.shape;
  }
  async toHost(): Promise<Tensor> {
    return new Tensor(this.t.dtype, this.t.shape, this.t.data.slice());
  }
}

const host = async (v: RunValue): Promise<Tensor> => (v instanceof Tensor ? v : v.toHost());

/** An engine that sums its inputs and adds `k`, on the host or on device 0; it refuses values in the wrong place. */
function engine(residency: 'host' | 'device', inputs: string[], output: string, k: number): Engine {
  return {
    inputNames: inputs,
    outputNames: [output],
    residency,
    deviceOrdinal: 0,
    async upload(t: Tensor) {
      return new FakeDeviceValue(t);
    },
    async run(feeds) {
      let sum: number[] | undefined;
      for (const name of inputs) {
        const v = feeds[name]!;
        if ((v instanceof Tensor) !== (residency === 'host')) throw new Error(`input ${name} is in the wrong place`);
        const xs = [...((await host(v)).data as Float32Array)];
        sum = sum === undefined ? xs : sum.map((s, i) => s + xs[i]!);
      }
      const out = Tensor.from('float32', [sum!.length], sum!.map((s) => s + k));
      return { [output]: residency === 'host' ? out : new FakeDeviceValue(out) };
    },
    dispose() {},
  };
}

const io = (name: string) => ({ name, value: name, dtype: 'float32' as const, shape: [2] });

test('only crossings copy, each once per place, and the count is the plan', async () => {
  // x → [device] a → [host] b → [device] c(a, b) → [host] d(a) ; outputs c, b
  const specs: Array<[('host' | 'device'), string[], string, number]> = [
    ['device', ['x'], 'a', 1],
    ['host', ['a'], 'b', 10],
    ['device', ['a', 'b'], 'c', 100],
    ['host', ['a'], 'd', 1000],
  ];
  const data: ProgramData = {
    inputs: [io('x')],
    outputs: [io('c'), io('b'), io('d')],
    segments: specs.map(([r, inputs, output]) => ({ kind: 'engine', backend: r === 'host' ? 'reference' : 'cuda', engine: new Uint8Array(), inputs, outputs: [output] })),
    constants: {},
  };
  const segments: LoadedSegment[] = specs.map(([r, inputs, output, k]) => ({ kind: 'engine', engine: engine(r, inputs, output, k), inputs, outputs: [output] }));
  const run = new ProgramRun(data, new Map(), [Tensor.from('float32', [2], [1, 2])], 'program');
  for (const s of segments) await run.runSegment(s);
  const [c, b, d] = await run.outputs();
  // a = x+1 = [2,3]; b = a+10 = [12,13]; c = a+b+100 = [114,116]; d = a+1000 = [1002,1003]
  expect([...c!.data]).toEqual([114, 116]);
  expect([...b!.data]).toEqual([12, 13]);
  expect([...d!.data]).toEqual([1002, 1003]);
  // x up; a down (once, reused by segment 3); b up; c down for the output.
  expect(run.crossings).toEqual({ hostToDevice: 2, deviceToHost: 2, deviceToDevice: 0 });
  const placeOf = (s: ProgramSegment): string => (s.kind === 'engine' && s.backend === 'cuda' ? 'device:0' : HOST_PLACE);
  expect(planCrossings(data, placeOf)).toEqual(run.crossings);
});

test('a program whose engines all keep values on the host makes no crossing', async () => {
  const data: ProgramData = {
    inputs: [io('x')],
    outputs: [io('b')],
    segments: [
      { kind: 'engine', backend: 'reference', engine: new Uint8Array(), inputs: ['x'], outputs: ['a'] },
      { kind: 'engine', backend: 'reference', engine: new Uint8Array(), inputs: ['a'], outputs: ['b'] },
    ],
    constants: {},
  };
  const run = new ProgramRun(data, new Map(), [Tensor.from('float32', [2], [1, 2])], 'program');
  await run.runSegment({ kind: 'engine', engine: engine('host', ['x'], 'a', 1), inputs: ['x'], outputs: ['a'] });
  await run.runSegment({ kind: 'engine', engine: engine('host', ['a'], 'b', 1), inputs: ['a'], outputs: ['b'] });
  expect([...(await run.outputs())[0]!.data]).toEqual([3, 4]);
  expect(totalCrossings(run.crossings)).toBe(0);
  // The real registry: reference engines live on the host.
  expect(totalCrossings(planCrossings(data))).toBe(0);
});
