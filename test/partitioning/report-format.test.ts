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
      { index: 0, kind: 'engine', ops: 2, inputs: [], outputs: [] },
      { index: 1, kind: 'fallback', ops: 1, inputs: [], outputs: [] },
    ],
    modelOps: 7,
  };
  expect(formatOpCounts(report)).toEqual([
    '2/3 ops converted, in 1 engine segment, plus 1 fallback segment',
    '  (counting ops after shape specialization and constant folding; the model has 7 at import, 4 folded away for these shapes)',
  ]);
});

test('op counts name the backend of the engine segments when the report has one, and never say TensorRT for another backend', () => {
  const op = (converted: boolean) => ({ node: 'n', target: 't', converted, reasons: [], segment: 0 });
  const engine = (index: number) => ({ index, kind: 'engine' as const, ops: 1, inputs: [], outputs: [] });
  const fallback = (index: number) => ({ index, kind: 'fallback' as const, ops: 1, inputs: [], outputs: [] });
  const counts = (report: PartitionReport): string => formatOpCounts(report)[0];
  expect(counts({ ops: [op(true), op(true)], segments: [engine(0)], backend: 'cuda' })).toBe('2/2 ops converted, in 1 engine segment (cuda)');
  expect(counts({ ops: [op(true), op(false), op(true)], segments: [engine(0), fallback(1), engine(2)], backend: 'onnxruntime' })).toBe(
    '2/3 ops converted, in 2 engine segments (onnxruntime), plus 1 fallback segment',
  );
  expect(counts({ ops: [op(true)], segments: [engine(0)], backend: 'tensorrt' })).toBe('1/1 ops converted, in 1 engine segment (tensorrt)');
  // A dry run chooses no backend: its report names none.
  expect(counts({ ops: [op(true), op(true)], segments: [engine(0)] })).toBe('2/2 ops converted, in 1 engine segment');
  expect(counts({ ops: [op(false), op(false)], segments: [fallback(0), fallback(1)], backend: 'cuda' })).toBe('0/2 ops converted: no engine segment, 2 fallback segments');
  expect(counts({ ops: [], segments: [], backend: 'cuda' })).toBe('0/0 ops converted: no engine segment');
});
