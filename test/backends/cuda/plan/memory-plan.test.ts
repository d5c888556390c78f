/**
 * The arena plan (lib/backends/cuda/plan/memory-plan.ts): no two tensors alive at the same step
 * share a byte, offsets are 256-aligned, the arena holds everything, and in-place reuse is
 * taken only when it is safe. The property test draws random lifetimes and sizes.
 */
import { ARENA_ALIGN, planMemory, type MemoryRequest } from '../../../../lib/backends/cuda/plan/memory-plan';
import { InternalError } from '../../../../lib/errors';
import { Network } from '../../../../lib/network';
import { FP32 } from '../../../helpers/compare';
import { Random } from '../../../helpers/random';
import { expectEmulatedMatches } from '../emulated-network';

const overlapsInTime = (a: MemoryRequest, b: MemoryRequest): boolean => a.first <= b.last && b.first <= a.last;

/** Checks every rule of a plan over `requests`; aliased pairs are exempt from the overlap rule. */
function checkPlan(requests: readonly MemoryRequest[]): ReturnType<typeof planMemory> {
  const plan = planMemory(requests);
  const sameBlock = (a: number, b: number): boolean => {
    const root = (id: number): number => (plan.aliases.has(id) ? root(plan.aliases.get(id)!) : id);
    return root(a) === root(b);
  };
  for (const r of requests) {
    const at = plan.offsets.get(r.id)!;
    expect(at % ARENA_ALIGN).toBe(0);
    expect(at + r.bytes).toBeLessThanOrEqual(plan.arenaBytes);
  }
  for (let i = 0; i < requests.length; i++) {
    for (let j = i + 1; j < requests.length; j++) {
      const a = requests[i]!;
      const b = requests[j]!;
      if (!overlapsInTime(a, b) || sameBlock(a.id, b.id)) continue;
      const [oa, ob] = [plan.offsets.get(a.id)!, plan.offsets.get(b.id)!];
      const disjoint = oa + Math.max(a.bytes, 1) <= ob || ob + Math.max(b.bytes, 1) <= oa;
      if (!disjoint) throw new Error(`tensors ${a.id} [${a.first}, ${a.last}] and ${b.id} [${b.first}, ${b.last}] overlap at ${oa}/${ob}`);
    }
  }
  return plan;
}

describe('planMemory', () => {
  test('a chain reuses memory: three tensors in a row need two slots', () => {
    const plan = checkPlan([
      { id: 1, bytes: 1000, first: 0, last: 1 },
      { id: 2, bytes: 1000, first: 1, last: 2 },
      { id: 3, bytes: 1000, first: 2, last: 3 },
    ]);
    expect(plan.arenaBytes).toBe(2 * 1024);
    expect(plan.offsets.get(1)).toBe(plan.offsets.get(3));
  });

  test('offsets are 256-aligned even for odd sizes; empty tensors still get a slot of their own', () => {
    const plan = checkPlan([
      { id: 1, bytes: 3, first: 0, last: 0 },
      { id: 2, bytes: 0, first: 0, last: 0 },
      { id: 3, bytes: 257, first: 0, last: 0 },
    ]);
    expect([...plan.offsets.values()].sort((a, b) => a - b)).toEqual([0, 512, 768]);
    expect(plan.arenaBytes).toBe(1024);
  });

  test('no requests: an empty arena', () => {
    expect(planMemory([])).toEqual({ offsets: new Map(), arenaBytes: 0, aliases: new Map() });
  });

  test('in-place reuse: a reshape whose input dies at it takes the input\'s bytes', () => {
    const plan = checkPlan([
      { id: 1, bytes: 600, first: 0, last: 1 },
      { id: 2, bytes: 600, first: 1, last: 2, reuse: 1 },
      { id: 3, bytes: 600, first: 2, last: 2 },
    ]);
    expect(plan.aliases).toEqual(new Map([[2, 1]]));
    expect(plan.offsets.get(2)).toBe(plan.offsets.get(1));
    expect(plan.offsets.get(3)).not.toBe(plan.offsets.get(2));
  });

  test('in-place reuse when the donor lives on: one block, live until the last of them is read', () => {
    const livesOn = checkPlan([
      { id: 1, bytes: 600, first: 0, last: 3 },
      { id: 2, bytes: 600, first: 1, last: 2, reuse: 1 },
      // Two views of one tensor, and a view of a view.
      { id: 3, bytes: 300, first: 2, last: 5, reuse: 1 },
      { id: 4, bytes: 300, first: 4, last: 6, reuse: 3 },
      // Defined while the block is live: must not share its bytes.
      { id: 5, bytes: 600, first: 6, last: 7 },
    ]);
    expect(livesOn.aliases).toEqual(new Map([[2, 1], [3, 1], [4, 3]]));
    expect(new Set([1, 2, 3, 4].map((id) => livesOn.offsets.get(id))).size).toBe(1);
    expect(livesOn.offsets.get(5)).not.toBe(livesOn.offsets.get(1));
  });

  test('in-place reuse is refused when the donor is smaller or already dead', () => {
    const dead = checkPlan([
      { id: 1, bytes: 600, first: 0, last: 1 },
      { id: 2, bytes: 600, first: 2, last: 3, reuse: 1 },
    ]);
    expect(dead.aliases.size).toBe(0);
    const smaller = checkPlan([
      { id: 1, bytes: 100, first: 0, last: 1 },
      { id: 2, bytes: 600, first: 1, last: 2, reuse: 1 },
    ]);
    expect(smaller.aliases.size).toBe(0);
  });

  test('a bad request (last before first, a repeated id) is an InternalError', () => {
    expect(() => planMemory([{ id: 1, bytes: 4, first: 2, last: 1 }])).toThrow(InternalError);
    expect(() => planMemory([{ id: 1, bytes: 4, first: 0, last: 1 }, { id: 1, bytes: 4, first: 0, last: 1 }])).toThrow('requested twice');
  });

  test('property: over 300 random programs, no two live tensors overlap and the arena is no larger than the sum of sizes', () => {
    const rng = new Random(17);
    for (let trial = 0; trial < 300; trial++) {
      const steps = 1 + rng.int(0, 30);
      const count = rng.int(0, 40);
      const requests: MemoryRequest[] = [];
      for (let id = 0; id < count; id++) {
        const first = rng.int(0, steps - 1);
        const last = first + rng.int(0, Math.min(6, steps - 1 - first));
        const bytes = rng.next() < 0.1 ? 0 : rng.int(1, 5000);
        // Some requests name a random earlier tensor as a donor; the planner decides.
        const reuse = id > 0 && rng.next() < 0.3 ? rng.int(0, id - 1) : undefined;
        requests.push(reuse === undefined ? { id, bytes, first, last } : { id, bytes, first, last, reuse });
      }
      const plan = checkPlan(requests);
      const total = requests.reduce((a, r) => a + Math.ceil(Math.max(r.bytes, 1) / ARENA_ALIGN) * ARENA_ALIGN, 0);
      expect(plan.arenaBytes).toBeLessThanOrEqual(total);
      // An alias is only ever taken from a donor whose block is live where the taker starts,
      // and the taker fits in the bytes its block was placed with (the chain's first tensor's).
      const root = (id: number): number => (plan.aliases.has(id) ? root(plan.aliases.get(id)!) : id);
      for (const [taker, donor] of plan.aliases) {
        expect(requests[donor]!.first).toBeLessThanOrEqual(requests[taker]!.first);
        expect(requests[root(taker)]!.bytes).toBeGreaterThanOrEqual(requests[taker]!.bytes);
      }
    }
  });
});

describe('views that outlive their donor on the emulator', () => {
  test('a reshape of a tensor that is read again later shares its bytes, and every reader sees the right values', () => {
    // a = exp(x); v = reshape(a) is read after a's other reader and after layers that allocate in between.
    const net = new Network('views');
    const x = net.addInput('x', 'float32', [4, 6]);
    const a = net.add1({ kind: 'unary', op: 'exp' }, [x], 'a');
    const v = net.add1({ kind: 'shuffle', reshape: [6, 4], zeroIsPlaceholder: false }, [a], 'v');
    const r = net.add1({ kind: 'reduce', op: 'sum', axes: [1], keepDims: false }, [a], 'r');
    const big = net.add1({ kind: 'unary', op: 'neg' }, [net.add1({ kind: 'unary', op: 'sin' }, [x], 's')], 'big');
    const w = net.add1({ kind: 'reduce', op: 'max', axes: [0], keepDims: false }, [v], 'w');
    net.markOutput(r, 'r');
    net.markOutput(big, 'big');
    net.markOutput(net.add1({ kind: 'unary', op: 'abs' }, [w], 'out'), 'w');
    const { fused } = expectEmulatedMatches(net, { x: new Random(9).tensor([4, 6]) }, FP32);
    expect(fused.aliases.get(v.id)).toBe(a.id);
  });
});

describe('views of weights', () => {
  test('a reshape of a constant reads the weight where it is: no copy step, the same results', () => {
    const net = new Network('weight_view');
    const x = net.addInput('x', 'float32', [3, 4]);
    const w = net.add1({ kind: 'constant', weights: new Random(10).tensor([2, 2, 5]) }, [], 'w');
    const flat = net.add1({ kind: 'shuffle', reshape: [4, 5], zeroIsPlaceholder: false }, [w], 'flat');
    net.markOutput(net.add1({ kind: 'matmul', opA: 'none', opB: 'none' }, [x, flat], 'mm'), 'y');
    const { fused } = expectEmulatedMatches(net, { x: new Random(11).tensor([3, 4]) }, FP32);
    expect(fused.steps).toEqual(['gemm']);
  });
});
