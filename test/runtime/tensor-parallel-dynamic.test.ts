/**
 * compile(model, {tensorParallel: 2}) on the dynamic Llama fixture (sequence s25 ∈ [2, 64]),
 * compiled once with the sequence left a run-time dim, on the CPU reference backend. The
 * collective segments hold tensors whose shapes use s25, so their graphs must declare it
 * (with its range), as every other segment graph does. The ranks must match the outputs
 * PyTorch stored at both sequence lengths (fp32 rtol 1e-4 / atol 1e-5), the single-rank
 * program compiled the same way, and each other exactly; a saved and reloaded program must
 * give the same bits. Needs dist/ (npm run build:ts).
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

import { compile } from '../../lib/compile';
import { deserializeGraphFromBuffer } from '../../lib/ir/serialize';
import { symbolsOf } from '../../lib/ir/symbolic';
import type { Tensor } from '../../lib/ir/tensor';
import { loadTensorParallelProgram, loadTensorParallelProgramBuffer } from '../../lib/runtime/tensor-parallel/file-load';
import type { TensorParallelProgram } from '../../lib/runtime/tensor-parallel/program';
import { expectClose, expectExact, FP32 } from '../helpers/compare';
import { loadFixture } from '../helpers/fixtures';

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'trtp-tp-dyn-'));
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

const fixture = loadFixture('llama_rotary_complex_input_dynamic', FP32);
const modelFile = path.join(fixture.dir, fixture.files.pt2!);

describe('llama_rotary_complex_input_dynamic, tensorParallel 2, compiled once for every sequence length', () => {
  let program: TensorParallelProgram;
  /** Per fixture case, the single-rank program's outputs. */
  const unsharded: Tensor[][] = [];

  beforeAll(async () => {
    program = await compile(modelFile, { backend: 'reference', tensorParallel: 2 });
    const whole = await compile(modelFile, { backend: 'reference' });
    try {
      for (const { inputs } of fixture.cases) unsharded.push(await whole.run(inputs));
    } finally {
      await whole.dispose();
    }
  }, 120_000);
  afterAll(async () => program?.dispose());

  test('the sequence stays a run-time dim, and every collective segment graph declares the symbols its values use, with their ranges', () => {
    expect(fixture.cases.map((c) => c.inputs[0]!.shape[1])).toEqual([8, 16]);
    expect(program.inputs[0]!.shape.some((d) => typeof d !== 'number')).toBe(true);
    program.ranks.forEach((rank) => {
      expect(rank.collectives).toBe(4);
      for (const i of rank.collectiveSegments) {
        const seg = rank.data.segments[i]!;
        if (seg.kind !== 'fallback') throw new Error(`collective segment ${i} is ${seg.kind}`);
        // Deserializing verifies the graph: a symbol used but not declared is E_BAD_MODEL here.
        const g = deserializeGraphFromBuffer(seg.graph);
        expect(g.calls().map((c) => c.target)).toEqual(['trt.all_reduce']);
        const used = new Set<string>();
        for (const v of [...g.inputs, ...g.outputs]) for (const d of v.tensorType.shape) symbolsOf(d, used);
        expect([...used]).toEqual(['s25']);
        expect(g.symbols.get('s25')).toMatchObject({ min: 2, max: 64 });
      }
    });
  });

  test('at seq 8 and 16 every rank matches PyTorch and the single-rank program; the ranks agree exactly', async () => {
    for (const [c, { inputs, outputs }] of fixture.cases.entries()) {
      const seq = inputs[0]!.shape[1];
      const perRank = await program.runAllRanks(inputs);
      expect(perRank).toHaveLength(2);
      perRank.forEach(([out], r) => {
        expect(out!.shape).toEqual([1, seq, 64]);
        expectClose(out!, outputs[0]!, FP32, `seq ${seq}, rank ${r} vs PyTorch`);
        expectClose(out!, unsharded[c]![0]!, FP32, `seq ${seq}, rank ${r} vs single-rank`);
        expectExact(out!, perRank[0]![0]!, `seq ${seq}, rank ${r} vs rank 0`);
      });
      const [y] = await program.run(inputs);
      expectExact(y!, perRank[0]![0]!, `seq ${seq}, run() vs rank 0`);
    }
  }, 60_000);

  test('saved to a buffer and to a file, loaded back, it runs to the same bits at both sequence lengths', async () => {
    const file = path.join(tmp, 'llama-dynamic-tp2.trtp');
    await program.save(file);
    const bytes = program.saveBuffer();
    expect(Buffer.from(bytes).equals(fs.readFileSync(file))).toBe(true);
    const fromFile = await loadTensorParallelProgram(file);
    const fromBuffer = await loadTensorParallelProgramBuffer(bytes);
    try {
      expect(fromFile.inputs).toEqual(program.inputs);
      for (const { inputs, outputs } of fixture.cases) {
        const seq = inputs[0]!.shape[1];
        const [expected] = await program.run(inputs);
        for (const [label, loaded] of [['file', fromFile], ['buffer', fromBuffer]] as const) {
          const [y] = await loaded.run(inputs);
          expectExact(y!, expected!, `seq ${seq}, loaded from ${label} vs in-memory`);
          expectClose(y!, outputs[0]!, FP32, `seq ${seq}, loaded from ${label} vs PyTorch`);
        }
      }
    } finally {
      await fromFile.dispose();
      await fromBuffer.dispose();
    }
  }, 60_000);
});
