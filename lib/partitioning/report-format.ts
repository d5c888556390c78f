/**
 * The partition report as text (`compile --dry-run`, `compile`, `run`), in the vocabulary the
 * other reports share (`inspect`): segment inputs and outputs by the model's names, op counts
 * that say what they count, and long lists wrapped for a terminal.
 */
import type { PartitionReport, ReportIO } from './partition';

/** Width that long lists wrap at. */
export const REPORT_WIDTH = 100;

/** `head`, then `words` separated by spaces, wrapped at `width`; continuation lines indented by `indent`. */
function wrapWords(head: string, words: readonly string[], indent: number, width: number): string[] {
  const lines: string[] = [];
  let line = head;
  let onLine = 0;
  for (const word of words) {
    if (onLine > 0 && line.length + 1 + word.length > width) {
      lines.push(line);
      line = ' '.repeat(indent) + word;
      onLine = 1;
    } else {
      line += (line.length > 0 ? ' ' : '') + word;
      onLine++;
    }
  }
  lines.push(line);
  return lines;
}

/** `head` then `items` joined by `, `, wrapped between items at `width` columns. */
export function wrapList(head: string, items: readonly string[], indent = 4, width = REPORT_WIDTH): string[] {
  return wrapWords(head, items.map((item, i) => (i < items.length - 1 ? `${item},` : item)), indent, width);
}

/** `text` wrapped at spaces to `width` columns. */
export function wrapText(text: string, indent = 2, width = REPORT_WIDTH): string[] {
  return wrapWords('', text.split(' '), indent, width);
}

/**
 * How a value reads in a segment list: by the model's name when it is a model input or
 * output (`output0`, or `output0 (value add_3)` where the two differ), else by value name.
 */
export function ioLabeler(io: { inputs: readonly ReportIO[]; outputs: readonly ReportIO[] } | undefined): (value: string) => string {
  const names = new Map<string, string>();
  for (const x of [...(io?.inputs ?? []), ...(io?.outputs ?? [])]) names.set(x.value, x.name === x.value ? x.name : `${x.name} (value ${x.value})`);
  return (value) => names.get(value) ?? value;
}

/** `inputs -> outputs` of a segment, labelled by {@link ioLabeler}. */
export function formatSegmentIO(inputs: readonly string[], outputs: readonly string[], label: (value: string) => string): string {
  return `${inputs.map(label).join(', ') || '-'} -> ${outputs.map(label).join(', ') || '-'}`;
}

/** `n word` or `n words`. */
function count(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? '' : 's'}`;
}

/**
 * The op counts, the same in every report: converted/total ops and the segments they make
 * (`122/122 ops converted, in 1 engine segment (cuda)`; the backend is named when the
 * report has one, which a dry run's has not), then (second line) what they count: call
 * nodes after shape specialization and constant folding, compared with the model as
 * imported (static shapes fold shape arithmetic away, so a run at fixed shapes counts fewer
 * ops than a dynamic dry run of the same model).
 */
export function formatOpCounts(report: PartitionReport): [string, string] {
  const converted = report.ops.filter((o) => o.converted).length;
  const engines = report.segments.filter((s) => s.kind === 'engine').length;
  const fallback = report.segments.length - engines;
  const total = report.ops.length;
  let basis = 'counting ops after shape specialization and constant folding';
  if (report.modelOps !== undefined) {
    const folded = report.modelOps - total;
    basis += folded > 0 ? `; the model has ${report.modelOps} at import, ${folded} folded away for these shapes` : `; the model has ${report.modelOps} at import`;
  }
  const backend = report.backend === undefined ? '' : ` (${report.backend})`;
  const where = engines > 0 ? `, in ${count(engines, 'engine segment')}${backend}` : ': no engine segment';
  const rest = fallback === 0 ? '' : engines > 0 ? `, plus ${count(fallback, 'fallback segment')}` : `, ${count(fallback, 'fallback segment')}`;
  return [`${converted}/${total} ops converted${where}${rest}`, `  (${basis})`];
}

/** {@link formatOpCounts} on one line (JSON `summary` fields). */
export function opCountSummary(report: PartitionReport): string {
  return formatOpCounts(report).map((l) => l.trim()).join(' ');
}

/** The report as text: what `compile --dry-run` prints. */
export function formatPartitionReport(report: PartitionReport): string {
  const label = ioLabeler(report.io);
  const lines: string[] = [...formatOpCounts(report)];
  for (const s of report.segments) {
    lines.push(`segment ${s.index} [${s.kind}] ${s.ops} op(s): ${formatSegmentIO(s.inputs, s.outputs, label)}`);
    if (s.dynamicOps && s.dynamicOps.length > 0) {
      lines.push(...wrapList(`  runs as _dyn variants (${s.dynamicOps.length}):`, s.dynamicOps.map((d) => `${d.node} (${d.target}) → ${d.variant}`)));
    }
  }
  const refused = report.ops.filter((o) => !o.converted);
  if (refused.length > 0) {
    lines.push('not converted:');
    for (const o of refused) lines.push(`  ${o.node} (${o.target}): ${o.reasons.join('; ')}`);
  }
  return lines.join('\n');
}
