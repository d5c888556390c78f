/**
 * Slices with a step along a run-time dim become `trt.slice_dyn` (start and length as shape
 * tensors, the step static). A second reference, independent of the interpreter and of the
 * library's slice normalization: every row index the output holds is computed here from
 * Python's slice rules, for many (start, end, step) triples at several sizes, from one
 * compiled program.
 */
import '../../lib/conversion/converters';
import type { Value } from '../../lib/ir/graph';
import { Tensor } from '../../lib/ir/tensor';
import { expectTensor } from '../helpers/compare';
import { DynGraph, compileAndRun } from './helpers';

const END = 9223372036854775807; // torch.export's "to the end"

/** The rows x[start:end:step] selects of n rows, by Python's rules (step > 0). */
function pythonSlice(n: number, start: number, end: number, step: number): number[] {
  const norm = (i: number): number => (i < 0 ? Math.max(0, i + n) : Math.min(i, n));
  const rows: number[] = [];
  for (let r = norm(start); r < norm(end); r += step) rows.push(r);
  return rows;
}

const TRIPLES: Array<[number, number, number]> = [
  [0, END, 2],
  [1, END, 2],
  [0, END, 3],
  [2, -1, 3],
  [-5, END, 2],
  [-9, 7, 4],
  [1, 100, 5],
  [3, 2, 2],
  [0, 4, 7],
];

test('x[start:end:step] along a run-time dim keeps exactly the rows Python keeps, at every size', async () => {
  const b = new DynGraph('steps', { s: { min: 1, max: 16 } });
  const x = b.input('x', 'float32', ['s', 3]);
  const outs: Value[] = TRIPLES.map(([start, end, step]) => b.call('aten.slice.Tensor', { self: x, dim: 0, start, end, step }).output);
  const graph = b.outputs(...outs);
  const sizes = [1, 4, 7, 16];
  // Row r of x holds 10r, 10r + 1, 10r + 2: an output names the rows it took.
  const rowsOf = (n: number): Tensor => Tensor.from('float32', [n, 3], Array.from({ length: n * 3 }, (_, i) => 10 * Math.floor(i / 3) + (i % 3)));
  const { program, outputs } = await compileAndRun(graph, { minBlockSize: 1 }, sizes.map((n) => [rowsOf(n)]));
  const variants = program.report.segments.flatMap((s) => s.dynamicOps ?? []).map((d) => d.variant);
  expect(variants.filter((v) => v === 'trt.slice_dyn')).toHaveLength(TRIPLES.length);
  expect(program.report.ops.filter((o) => !o.converted)).toEqual([]);
  sizes.forEach((n, k) => {
    TRIPLES.forEach(([start, end, step], j) => {
      const rows = pythonSlice(n, start, end, step);
      expectTensor(outputs[k]![j]!, 'float32', [rows.length, 3], rows.flatMap((r) => [10 * r, 10 * r + 1, 10 * r + 2]), `n=${n} [${start}:${end}:${step}]`);
    });
  });
}, 60_000);
