/** Report text: wrapping at the report width, model names for segment I/O, op counts that say what they count. */
import { formatOpCounts, formatSegmentIO, ioLabeler, wrapList, wrapText } from '../../lib/partitioning/report-format';
import type { PartitionReport } from '../../lib/partitioning/partition';

test('wrapList breaks between items, never inside one, and keeps every item', () => {
  const items = Array.from({ length: 30 }, (_, i) => `item_${i} (aten.view.default) → trt.reshape_dyn`);
  const lines = wrapList('  runs as _dyn variants (30):', items);
  expect(lines.length).toBeGreaterThan(5);
  for (const l of lines) expect(l.length).toBeLessThanOrEqual(100);
  expect(lines.slice(1).every((l) => l.startsWith('    item_'))).toBe(true);
  expect(lines.join(' ').replace(/\s+/g, ' ')).toBe(`  runs as _dyn variants (30): ${items.join(', ')}`.replace(/\s+/g, ' '));
  // One item longer than the width stays whole on its own line.
  expect(wrapList('head:', ['x'.repeat(120)], 4, 100)).toEqual([`head: ${'x'.repeat(120)}`]);
});

test('wrapText', () => {
  expect(wrapText('aaa bbb ccc ddd', 2, 8)).toEqual(['aaa bbb', '  ccc', '  ddd']);
});

test('segment values print by the model name, with the value where they differ', () => {
  const label = ioLabeler({ inputs: [{ name: 'x', value: 'x' }], outputs: [{ name: 'logits', value: 'add_3' }] });
  expect(formatSegmentIO(['x'], ['relu_1', 'add_3'], label)).toBe('x -> relu_1, logits (value add_3)');
  expect(formatSegmentIO([], [], label)).toBe('- -> -');
});

test('op counts say what they count and how many ops static shapes folded away', () => {
  const op = (converted: boolean) => ({ node: 'n', target: 't', converted, reasons: [], segment: 0 });
  const report: PartitionReport = {
    ops: [op(true), op(true), op(false)],
    segments: [
      { index: 0, kind: 'tensorrt', ops: 2, inputs: [], outputs: [] },
      { index: 1, kind: 'fallback', ops: 1, inputs: [], outputs: [] },
    ],
    modelOps: 7,
  };
  expect(formatOpCounts(report)).toEqual([
    '2/3 ops in TensorRT segments (1 TensorRT and 1 fallback segment(s))',
    '  (counting ops after shape specialization and constant folding; the model has 7 at import, 4 folded away for these shapes)',
  ]);
});
