/**
 * compile(model, {tensorParallel: n}) end to end on the CPU reference backend: one program
 * per rank, run in lockstep on a worker thread with the in-process all-reduce. Every rank's
 * output must match the outputs PyTorch stored (fp32 rtol 1e-4 / atol 1e-5) and the
 * unsharded compiled program, and be identical across ranks. Needs dist/ (npm run build:ts).
 */
import * as path from 'node:path';

import { compile } from '../../lib/compile';
import { deserializeGraphFromBuffer } from '../../lib/ir/serialize';
import { allReduce } from '../../lib/runtime/tensor-parallel/execute';
import { TensorParallelProgram } from '../../lib/runtime/tensor-parallel/program';
import { Tensor } from '../../lib/ir/tensor';
import { expectClose, expectExact, expectTensor, FP32 } from '../helpers/compare';
import { rejection } from '../helpers/errors';
import { loadFixture } from '../helpers/fixtures';

const staticShapes = (inputs: readonly Tensor[]) => inputs.map((t) => ({ shape: [...t.shape] }));

describe.each([2, 4])('llama_rotary_complex_input, tensorParallel %i', (n) => {
  const fixture = loadFixture('llama_rotary_complex_input');
  const file = path.join(fixture.dir, fixture.files.pt2!);
  const { inputs, outputs } = fixture.cases[0]!;
  let program: TensorParallelProgram;

  beforeAll(async () => {
    program = await compile(file, { backend: 'reference', tensorParallel: n, inputs: staticShapes(inputs) });
  }, 120_000);
  afterAll(async () => program?.dispose());

  test('one program per rank, each with its target GPU and an all-reduce segment per row-parallel layer', () => {
    expect(program).toBeInstanceOf(TensorParallelProgram);
    expect(program.size).toBe(n);
    expect(program.backend).toBe('reference');
    expect(program.blocks.map((b) => b.layer)).toEqual(['p_layers_0_attention', 'p_layers_0_feed_forward', 'p_layers_1_attention', 'p_layers_1_feed_forward']);
    program.ranks.forEach((rank, r) => {
      expect(rank.rank).toBe(r);
      expect(rank.targetDevice).toEqual({ type: 'gpu', gpuId: r });
      expect(rank.collectives).toBe(4);
      for (const i of rank.collectiveSegments) {
        const seg = rank.data.segments[i]!;
        expect(seg.kind).toBe('fallback');
        const g = deserializeGraphFromBuffer((seg as { graph: Uint8Array }).graph);
        expect(g.calls().map((c) => c.target)).toEqual(['trt.all_reduce']);
      }
      // No other segment holds an all-reduce: each is a boundary of its own.
      rank.data.segments.forEach((seg, i) => {
        if (seg.kind !== 'fallback' || rank.collectiveSegments.includes(i)) return;
        expect(deserializeGraphFromBuffer(seg.graph).calls().some((c) => c.target === 'trt.all_reduce')).toBe(false);
      });
      expect(rank.inputs.map((io) => `${io.name}:${io.dtype}`)).toEqual(['x:float32', 'freqs_cis:complex64']);
    });
    expect(String(program)).toContain(`x${n} ranks`);
  });

  test('every rank matches PyTorch and the unsharded program; the ranks agree exactly', async () => {
    const perRank = await program.runAllRanks(inputs);
    expect(perRank).toHaveLength(n);
    const whole = await compile(file, { backend: 'reference', inputs: staticShapes(inputs) });
    let unsharded: Tensor[];
    try {
      unsharded = await whole.run(inputs);
    } finally {
      await whole.dispose();
    }
    perRank.forEach(([out], r) => {
      expectClose(out!, outputs[0]!, FP32, `rank ${r} vs PyTorch`);
      expectClose(out!, unsharded[0]!, FP32, `rank ${r} vs unsharded`);
      expectExact(out!, perRank[0]![0]!, `rank ${r} vs rank 0`);
    });
    // run() gives rank 0's outputs; inputs by name work too.
    const [byName] = await program.run({ x: inputs[0]!, freqs_cis: inputs[1]! });
    expectExact(byName!, perRank[0]![0]!, 'run() by name');
  });
});

describe.each([2, 4])('llama_rotary_complex_input_dynamic, tensorParallel %i, compiled for each sequence length', (n) => {
  const fixture = loadFixture('llama_rotary_complex_input_dynamic');
  const file = path.join(fixture.dir, fixture.files.pt2!);

  test.each([0, 1])('case %i (seq 8, then 16) matches PyTorch on every rank', async (c) => {
    const { inputs, outputs } = fixture.cases[c]!;
    const program = await compile(file, { backend: 'reference', tensorParallel: n, inputs: staticShapes(inputs) });
    try {
      const perRank = await program.runAllRanks(inputs);
      perRank.forEach(([out], r) => {
        expectClose(out!, outputs[0]!, FP32, `seq ${inputs[0]!.shape[1]}, rank ${r} vs PyTorch`);
        expectExact(out!, perRank[0]![0]!, `rank ${r} vs rank 0`);
      });
    } finally {
      await program.dispose();
    }
  }, 120_000);
});

describe('all-reduces inside larger fallback segments', () => {
  test('with everything in fallback, each all-reduce is cut out as its own segment and the ranks still match PyTorch', async () => {
    const fixture = loadFixture('llama_rotary_complex_input');
    const { inputs, outputs } = fixture.cases[0]!;
    const program = await compile(path.join(fixture.dir, fixture.files.pt2!), { backend: 'reference', tensorParallel: 2, minBlockSize: 10_000 });
    try {
      expect(program.report.segments.map((s) => s.kind)).toEqual(['fallback']);
      for (const rank of program.ranks) {
        expect(rank.collectives).toBe(4);
        // fallback piece, then (all_reduce, fallback piece) four times
        expect(rank.data.segments).toHaveLength(9);
      }
      const perRank = await program.runAllRanks(inputs);
      perRank.forEach(([out], r) => expectClose(out!, outputs[0]!, FP32, `rank ${r} vs PyTorch`));
    } finally {
      await program.dispose();
    }
  }, 120_000);
});

describe('settings and errors', () => {
  const fixture = loadFixture('llama_rotary_complex_input');
  const file = path.join(fixture.dir, fixture.files.pt2!);

  test('tensorParallel must be an integer >= 1', async () => {
    for (const bad of [0, -2, 1.5, '2']) {
      const e = await rejection(compile(file, { backend: 'reference', tensorParallel: bad as number }));
      expect(e.code).toBe('E_INVALID_ARGUMENT');
      expect(e.message).toContain('tensorParallel must be an integer >= 1');
    }
  });

  test('heads that do not divide reject with E_SHARDING naming the layer', async () => {
    const e = await rejection(compile(file, { backend: 'reference', tensorParallel: 3 }));
    expect(e.code).toBe('E_SHARDING');
    expect(e.message).toContain('"p_layers_0_attention"');
  });

  test('a model without a Llama-style block rejects with E_SHARDING', async () => {
    const mlp = loadFixture('mlp');
    const e = await rejection(compile(path.join(mlp.dir, mlp.files.pt2!), { backend: 'reference', tensorParallel: 2, inputs: [{ shape: [2, 32] }] }));
    expect(e.code).toBe('E_SHARDING');
    expect(e.message).toContain('no Llama-style block');
  });

  test('collectives is checked, and needs tensorParallel', async () => {
    const bad = await rejection(compile(file, { backend: 'reference', tensorParallel: 2, collectives: 'mpi' as 'nccl' }));
    expect(bad.code).toBe('E_INVALID_ARGUMENT');
    expect(bad.message).toContain(`collectives must be one of 'auto', 'nccl', 'host', got "mpi"`);
    const alone = await rejection(compile(file, { backend: 'reference', collectives: 'host' } as never));
    expect(alone.code).toBe('E_INVALID_ARGUMENT');
    expect(alone.message).toContain('collectives applies to tensor-parallel programs only');
  });

  test("collectives 'nccl' on CPU ranks rejects the run with E_NCCL naming the all-reduce; 'host' runs as 'auto' does", async () => {
    const { inputs, outputs } = fixture.cases[0]!;
    const nccl = await compile(file, { backend: 'reference', tensorParallel: 2, collectives: 'nccl', inputs: staticShapes(inputs) });
    const onHost = await compile(file, { backend: 'reference', tensorParallel: 2, collectives: 'host', inputs: staticShapes(inputs) });
    try {
      expect(nccl.collectives).toBe('nccl');
      const e = await rejection(nccl.run(inputs));
      expect(e.code).toBe('E_NCCL');
      expect(e.message).toMatch(/^all-reduce \S+ cannot run through NCCL, as the collectives policy 'nccl' requires: rank 0's tensor is on the host/);
      // The failed run leaves the program usable: the same error again, not a dead worker.
      expect((await rejection(nccl.run(inputs))).code).toBe('E_NCCL');
      const [out] = await onHost.run(inputs);
      expectClose(out!, outputs[0]!, FP32, 'collectives host vs PyTorch');
    } finally {
      await nccl.dispose();
      await onHost.dispose();
    }
  }, 120_000);

  test('bad run inputs reject with E_BAD_INPUT; a disposed program rejects runs', async () => {
    const program = await compile(file, { backend: 'reference', tensorParallel: 2, inputs: staticShapes(fixture.cases[0]!.inputs) });
    expect((await rejection(program.run([fixture.cases[0]!.inputs[0]!]))).code).toBe('E_BAD_INPUT');
    await program.dispose();
    await program.dispose();
    expect((await rejection(program.run(fixture.cases[0]!.inputs))).code).toBe('E_INVALID_ARGUMENT');
  }, 120_000);
});

describe('allReduce (the in-process collective)', () => {
  const a = Tensor.from('float32', [2, 2], [1, 2, 3, 4]);
  const b = Tensor.from('float32', [2, 2], [10, -20, 0.5, 4]);

  test('sum, avg, prod, max, min elementwise', () => {
    expectTensor(allReduce([a, b], 'sum'), 'float32', [2, 2], [11, -18, 3.5, 8]);
    expectTensor(allReduce([a, b], 'avg'), 'float32', [2, 2], [5.5, -9, 1.75, 4]);
    expectTensor(allReduce([a, b], 'prod'), 'float32', [2, 2], [10, -40, 1.5, 16]);
    expectTensor(allReduce([a, b], 'max'), 'float32', [2, 2], [10, 2, 3, 4]);
    expectTensor(allReduce([a, b], 'min'), 'float32', [2, 2], [1, -20, 0.5, 4]);
    expectTensor(allReduce([Tensor.from('int32', [2], [1, 2]), Tensor.from('int32', [2], [3, 4])], 'sum'), 'int32', [2], [4, 6]);
  });

  test('ranks that disagree on the shape are an internal error', () => {
    expect(() => allReduce([a, Tensor.from('float32', [4], [1, 2, 3, 4])], 'sum')).toThrow(/the ranks disagree/);
  });
});
