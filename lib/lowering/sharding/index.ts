/**
 * Tensor parallelism over the Graph IR: rewrite ONNX-export forms of Llama blocks into the
 * matched ones ({@link canonicalizeOnnxForms}), find Llama-style blocks by pattern
 * ({@link findBlocks}), split them into one graph per rank ({@link shardGraph}), and cut a
 * rank graph at its all-reduce collectives ({@link splitAtCollectives}) for runtimes that run
 * the ranks in lockstep.
 */
export { findBlocks, isProjection } from './match';
export type { ColumnRole, MatchedBlock } from './match';
export { canonicalizeOnnxForms } from '../exported-forms';
export { shardGraph } from './shard';
export type { BlockSharding, ShardedGraph, ShardedWeight } from './shard';
export { hasCollectives, splitAtCollectives } from './split';
export type { AllReduceStep, CollectiveStep, GraphStep } from './split';
export { columnSliceCopy, leadingSliceView } from './weights';
export type { WeightLayout } from './weights';
