/**
 * Partitioning: runs of convertible ops become engine segments, short runs fall back
 * (minBlockSize), forced ops fall back, requireFullCompilation names every refusal, and the
 * report says what happened to each op. Only relu is convertible here (registered by this
 * test), gelu is not.
 */
import { call } from '../../lib/ir/builder';
import { Graph, tensorType, type Value } from '../../lib/ir/graph';
import '../../lib/ir/ops';
import { registerConverter } from '../../lib/conversion/registry';
import { partition } from '../../lib/partitioning/partition';
import { formatPartitionReport } from '../../lib/partitioning/report-format';
import { UnsupportedOpError } from '../../lib/errors';

registerConverter('aten.relu.default', () => []);

/** x → r1 r2 g1 r3 r4 r5 r6 r7 (relu r*, gelu g1). */
function chain(): Graph {
  const g = new Graph('chain');
  let v: Value = g.addInput('x', tensorType('float32', [2, 3]));
  for (const name of ['r1', 'r2', 'g1', 'r3', 'r4', 'r5', 'r6', 'r7']) {
    v = call(g, name.startsWith('r') ? 'aten.relu.default' : 'aten.gelu.default', { self: v }, { name }).output;
  }
  g.setOutputs([v], ['y']);
  return g;
}

const kinds = (p: ReturnType<typeof partition>): string[] => p.segments.map((s) => `${s.kind}:${s.nodes.map((n) => n.name).join(',')}`);

test('a run shorter than minBlockSize falls back and merges with its fallback neighbour', () => {
  const p = partition(chain());
  expect(kinds(p)).toEqual(['fallback:r1,r2,g1', 'engine:r3,r4,r5,r6,r7']);
  expect(p.segments.map((s) => [s.inputs.map((v) => v.name), s.outputs.map((v) => v.name)])).toEqual([
    [['x'], ['g1']],
    [['g1'], ['r7']],
  ]);
  const r1 = p.report.ops.find((o) => o.node === 'r1')!;
  expect(r1).toMatchObject({ converted: false, segment: 0 });
  expect(r1.reasons[0]).toMatch(/block has 2 op\(s\), fewer than minBlockSize 5/);
  expect(p.report.ops.find((o) => o.node === 'g1')!.reasons).toEqual(['no converter is registered for aten.gelu.default']);
  expect(p.report.ops.find((o) => o.node === 'r5')).toMatchObject({ converted: true, converter: 'aten.relu.default', segment: 1 });
});

test('minBlockSize 2 keeps both relu runs in engine segments', () => {
  expect(kinds(partition(chain(), { minBlockSize: 2 }))).toEqual(['engine:r1,r2', 'fallback:g1', 'engine:r3,r4,r5,r6,r7']);
});

test('a forced op splits a run; the short pieces fall back and merge', () => {
  expect(kinds(partition(chain(), { torchExecutedOps: new Set(['r4']) }))).toEqual(['fallback:r1,r2,g1,r3,r4,r5,r6,r7']);
  const p = partition(chain(), { torchExecutedOps: new Set(['r4']), minBlockSize: 3 });
  expect(kinds(p)).toEqual(['fallback:r1,r2,g1,r3,r4', 'engine:r5,r6,r7']);
  expect(p.report.ops.find((o) => o.node === 'r4')!.reasons).toEqual(['forced to a fallback segment by torchExecutedOps']);
});

test('requireFullCompilation fails naming every op that cannot be converted, with its reason', () => {
  expect(() => partition(chain(), { requireFullCompilation: true })).toThrow(UnsupportedOpError);
  let message = '';
  try {
    partition(chain(), { requireFullCompilation: true, torchExecutedOps: new Set(['r2']) });
  } catch (e) {
    message = (e as Error).message;
  }
  expect(message).toContain('requireFullCompilation is set, but 2 op(s) cannot be converted:\n');
  expect(message).toContain('node r2 (aten.relu.default): forced to a fallback segment by torchExecutedOps');
  expect(message).toContain('node g1 (aten.gelu.default): no converter is registered for aten.gelu.default');
});

test('the report prints as the dry run shows it', () => {
  const text = formatPartitionReport(partition(chain()).report);
  expect(text.split('\n')).toEqual([
    '5/8 ops converted, in 1 engine segment, plus 1 fallback segment',
    '  (counting ops after shape specialization and constant folding)',
    'segment 0 [fallback] 3 op(s): x -> g1',
    'segment 1 [engine] 5 op(s): g1 -> r7',
    'not converted:',
    '  r1 (aten.relu.default): convertible (aten.relu.default), but its engine block has 2 op(s), fewer than minBlockSize 5',
    '  r2 (aten.relu.default): convertible (aten.relu.default), but its engine block has 2 op(s), fewer than minBlockSize 5',
    '  g1 (aten.gelu.default): no converter is registered for aten.gelu.default',
  ]);
});

test('a report that names its backend (what compile() makes) says which backend built the engine segments', () => {
  const report = { ...partition(chain()).report, backend: 'cuda' };
  expect(formatPartitionReport(report).split('\n')[0]).toBe('5/8 ops converted, in 1 engine segment (cuda), plus 1 fallback segment');
});
