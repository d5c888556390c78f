/**
 * The complex lowering pass (docs/complex-numbers.md): TensorRT has no complex types, so before
 * partitioning every complex value is rewritten into a real "carrier" with a trailing dim of
 * 2 (lib/lowering/complex/rewrite.ts), found by complex-subgraph detection
 * (lib/lowering/complex/detect.ts) and rewritten op by op (lib/lowering/complex/rules.ts).
 * Rotary embeddings (view_as_complex → complex mul → view_as_real) then convert into TensorRT
 * segments like any real arithmetic.
 *
 * The compiled program keeps the model's signature: complex inputs and outputs are still
 * complex64/complex128 tensors for the caller. {@link ComplexLowering} records how they map
 * to carriers, and the Program converts at its boundary (lib/runtime/complex-io.ts). The
 * lowering states that boundary in its own types (CarrierAdapter, BoundaryIO) so that it
 * depends on no runtime module: the runtime's ProgramIO fits them structurally.
 */
import type { InputShape } from '../../interpreter/bind-inputs';
import type { Graph } from '../../ir/graph';
import { verifyGraph } from '../../ir/verify';
import type { DType } from '../../ir/dtype';
import type { Dim } from '../../ir/symbolic';
import { rewriteComplexGraph, type ComplexBoundary, type ComplexRewriteOptions, type ComplexRewriteReport } from './rewrite';

export { ComplexSubgraphDetector, findComplexIndices, findComplexOpSubgraphs, formatComplexSubgraph, isComplexValue } from './detect';
export type { AnchorFilter, ComplexIndices, ComplexSubgraph } from './detect';
export { COMPLEX_RULES, RuleContext, shiftDim } from './rules';
export type { ComplexRule } from './rules';
export { rewriteComplexGraph } from './rewrite';
export type { ComplexBoundary, ComplexRewriteOptions, ComplexRewriteReport } from './rewrite';

/** How a complex program input or output travels inside the program: as a real carrier [..., 2] of this dtype. */
export interface CarrierAdapter {
  carrier: 'float32' | 'float64';
}

/** A program input or output as {@link ComplexLowering.present} reads and writes it. */
export interface BoundaryIO {
  dtype: DType;
  shape: Dim[];
  complex?: CarrierAdapter;
}

/** The result of lowering a graph's complex values, and the mapping of its boundary. */
export class ComplexLowering {
  constructor(readonly report: ComplexRewriteReport) {}

  /** True when the graph had complex values (inputs, constants or ops). */
  get changed(): boolean {
    return this.report.rewritten > 0 || this.report.inputs.length > 0 || this.report.constants.length > 0 || this.report.fallback.length > 0;
  }

  /** Input shapes given for the model's (complex) inputs → the carrier inputs' shapes. */
  carrierShapes(given: readonly InputShape[]): InputShape[] {
    const byIndex = new Map(this.report.inputs.map((b) => [b.index, b]));
    return given.map((s, i) => {
      const b = byIndex.get(i);
      return b === undefined ? s : { dtype: b.carrier, shape: [...s.shape, 2] };
    });
  }

  /**
   * The program's inputs (or outputs) as the caller sees them: complex ones get back their
   * complex dtype and shape, and record the carrier they are converted to (or from).
   */
  present<T extends BoundaryIO>(io: readonly T[], kind: 'inputs' | 'outputs'): T[] {
    const byIndex = new Map(this.report[kind].map((b) => [b.index, b]));
    return io.map((x, i) => {
      const b: ComplexBoundary | undefined = byIndex.get(i);
      if (b === undefined) return x;
      return { ...x, dtype: b.dtype, shape: x.shape.slice(0, -1), complex: { carrier: b.carrier } };
    });
  }

  /** One line per subgraph and per fallback op, for the compile log. */
  describe(): string {
    const r = this.report;
    const lines = [
      `complex lowering: ${r.subgraphs.length} complex subgraph(s), ${r.rewritten} op(s) rewritten into real arithmetic; ` +
        `complex inputs: ${r.inputs.map((b) => b.name).join(', ') || '-'}; complex outputs: ${r.outputs.map((b) => b.name).join(', ') || '-'}; ` +
        `complex buffers/constants: ${r.constants.join(', ') || '-'}`,
    ];
    for (const f of r.fallback) lines.push(`  kept complex for a fallback segment: ${f.node} (${f.target}): ${f.reason}`);
    return lines.join('\n');
  }
}

export interface LowerComplexOptions extends ComplexRewriteOptions {}

/**
 * Rewrites every complex value of `graph` (in place) into real carriers and verifies the
 * result. Throws `E_COMPLEX128` (complex128 data without truncateDouble) or
 * `E_UNSUPPORTED_OP` (ops without a rule, unless `fallback`; with it, those ops the CPU
 * interpreter cannot run on complex values either) before changing the graph.
 */
export function lowerComplex(graph: Graph, options: LowerComplexOptions = {}): ComplexLowering {
  const report = rewriteComplexGraph(graph, options);
  if (report.rewritten > 0 || report.inputs.length > 0 || report.constants.length > 0) verifyGraph(graph, 'complex-lowered graph');
  return new ComplexLowering(report);
}
