/**
 * The cuda backend's optimizer: the network rewrites a build runs, as an ordered list of
 * named passes (Torch-TensorRT's lowering pass list is the model). Each pass is a pure
 * function Network → Network with counts of what it did; the list is data, so it prints
 * (`formatPassList`), and each pass is tested on its own (test/backends/cuda/passes/).
 *
 * The order is a dependency order, stated once here:
 * 1. fold-affine before precision: folding a BatchNorm into its convolution needs the
 *    float32 weights;
 * 2. precision, then spell-out-quantization (the precision pass keeps quantize and
 *    dequantize layers fp32, so their spelled-out arithmetic is fp32 too), then channels-last:
 *    the layout pass converts the reduced-precision convolutions cuDNN runs channels-last;
 * 3. conv-epilogues after the layout: a channels-last convolution takes its bias, residual
 *    and ReLU like any other;
 * 4. complex-pairs, then attention (the converters' attention layers and hand-written ones
 *    as one kernel), spell-out-attention (the rest, in the precision the build chose), and
 *    rms-norm (each makes one layer of a form that later passes must not split);
 * 5. merge-matmuls after attention: the attention reads its operands through the
 *    projections' transposes, and sibling projections become one wide GEMM only after;
 * 6. recompute-casts last: casts computed once per reader, which fusion while planning then
 *    takes into each reader.
 */
import type { Network } from '../../../network';
import { reducePrecision, type PrecisionReport } from '../../../network/precision';
import type { BuildConfig } from '../../../engine/build-config';
import { expandLayers, isQuantizationLayer } from '../../../conversion/expand-layers';
import { channelsLast } from './channels-last';
import { interleaveComplexProducts } from './complex-pairs';
import { fuseConvEpilogues } from './conv-epilogue';
import { foldConvolutionAffine } from './fold-affine';
import { fuseAttention } from './fuse-attention';
import { fuseRmsNorm } from './fuse-rmsnorm';
import { mergeMatmuls } from './merge-matmuls';
import { recomputeCasts } from './recompute-casts';

/** What a pass did: the rewritten network, and named counts for the build log and tests. */
export interface PassOutcome {
  network: Network;
  counts: Readonly<Record<string, number>>;
  /** The precision pass's report (what the network computes in, which layers stayed fp32). */
  precision?: PrecisionReport;
}

/** What every pass may read of the build. */
export interface PassContext {
  precisions: BuildConfig['precisions'];
}

/** One rewrite of the list: its name, what it does (one line), and the rewrite. */
export interface NetworkPass {
  readonly name: string;
  readonly does: string;
  run(network: Network, context: PassContext): PassOutcome;
  /** The build log's line for an outcome, or null when the pass changed nothing worth a line. */
  describe(counts: Readonly<Record<string, number>>): string | null;
}

/** The outcome of {@link runPasses}: the final network, each pass's counts, and the precision report. */
export interface PassesResult {
  network: Network;
  /** Per pass, in order: its name and counts. */
  outcomes: Array<{ pass: string; counts: Readonly<Record<string, number>> }>;
  precision: PrecisionReport;
}

/** A pass whose result is a network and plain counts (every pass of this folder). */
function counted<R extends { network: Network }>(name: string, does: string, rewrite: (n: Network) => R, describe: NetworkPass['describe']): NetworkPass {
  return {
    name,
    does,
    run(network) {
      const result = rewrite(network);
      const counts: Record<string, number> = {};
      for (const [k, v] of Object.entries(result)) if (typeof v === 'number') counts[k] = v;
      return { network: result.network, counts };
    },
    describe,
  };
}

export const CUDA_PASSES: readonly NetworkPass[] = [
  counted('fold-affine', 'per-channel scale and shift after a convolution (BatchNorm) folded into its weights and bias', foldConvolutionAffine, (c) =>
    c.foldedLayers! > 0 ? `${c.foldedLayers} per-channel affine layers folded into convolutions` : null,
  ),
  {
    name: 'precision',
    does: 'the build precisions applied: layers computed in fp16/bf16 where the precision rules allow (lib/network/precision.ts)',
    run(network, context) {
      const { network: reduced, report } = reducePrecision(network, context.precisions);
      const counts = { reducedLayers: report.reducedLayers, fp32Layers: report.fp32Layers.length, casts: report.casts, clampedValues: report.clampedValues };
      return { network: reduced, counts, precision: report };
    },
    describe: () => null,
  },
  counted(
    'spell-out-quantization',
    'quantize and dequantize layers as float arithmetic and int8/uint8 casts (lib/conversion/expand-layers.ts), those of constants as the constants they compute; float8e4m3fn and int4 otherwise refused',
    (n) => expandLayers(n, isQuantizationLayer),
    (c) => (c.quantizations! + c.foldedQuantizations! > 0 ? `${c.quantizations} quantize/dequantize layers spelled out, ${c.foldedQuantizations} computed at build` : null),
  ),
  counted('channels-last', 'reduced-precision convolutions channels-last, for cuDNN tensor-core kernels, with the transposes this needs', channelsLast, (c) =>
    c.convolutions! > 0 ? `${c.convolutions} convolutions channels-last (${c.transposes} transposes)` : null,
  ),
  counted('conv-epilogues', "a convolution's ReLU and residual sum applied in its cuDNN call", fuseConvEpilogues, (c) =>
    c.fused! > 0 ? `${c.fused} convolutions with a fused ReLU (${c.residuals} with the residual)` : null,
  ),
  counted('complex-pairs', 'complex products over whole (re, im) pairs instead of split halves', interleaveComplexProducts, (c) =>
    c.products! > 0 ? `${c.products} complex products computed over whole pairs` : null,
  ),
  counted('attention', 'attention layers (and attentions a model wrote out) as one tensor-core kernel, reading Q, K and V through the views before them', fuseAttention, (c) =>
    c.attentions! > 0 ? `${c.attentions} attentions as one kernel each (${c.causal} causal, ${c.written} found written out)` : null,
  ),
  counted('spell-out-attention', "the attention layers the kernel does not take (fp32, run-time shapes, head sizes) as primitive layers (lib/conversion/expand-layers.ts)", (n) => expandLayers(n, (l) => l.params.kind === 'attention'), (c) =>
    c.attentions! > 0 ? `${c.attentions} attentions spelled out` : null,
  ),
  counted('rms-norm', 'RMSNorm written out as reduce/rsqrt/multiply as one normalization layer', fuseRmsNorm, (c) =>
    c.norms! > 0 ? `${c.norms} RMSNorms as one normalization each` : null,
  ),
  counted('merge-matmuls', 'sibling projections of one input as one wide GEMM', mergeMatmuls, (c) =>
    c.groups! > 0 ? `${c.merged} projections computed as ${c.groups} wide GEMMs` : null,
  ),
  counted('recompute-casts', 'a cast read by a few layers computed once per reader (fused into each)', recomputeCasts, (c) =>
    c.casts! > 0 ? `${c.casts} casts computed once per reader` : null,
  ),
];

/** Runs `passes` in order over `source`. Pure. */
export function runPasses(source: Network, context: PassContext, passes: readonly NetworkPass[] = CUDA_PASSES): PassesResult {
  let network = source;
  const outcomes: PassesResult['outcomes'] = [];
  let precision: PrecisionReport | undefined;
  for (const pass of passes) {
    const outcome = pass.run(network, context);
    network = outcome.network;
    precision = outcome.precision ?? precision;
    outcomes.push({ pass: pass.name, counts: outcome.counts });
  }
  return { network, outcomes, precision: precision ?? reducePrecision(source, ['fp32']).report };
}

/** The counts `pass` reported in `result` (empty when it did not run). */
export const countsOf = (result: PassesResult, pass: string): Readonly<Record<string, number>> => result.outcomes.find((o) => o.pass === pass)?.counts ?? {};

/** The pass list as text: one line per pass, `name: what it does`, in order. */
export const formatPassList = (passes: readonly NetworkPass[] = CUDA_PASSES): string => passes.map((p, i) => `${i + 1}. ${p.name}: ${p.does}`).join('\n');
