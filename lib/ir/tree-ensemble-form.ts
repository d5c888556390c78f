/**
 * The words of a tree ensemble's IR form (lib/ir/ops/ml.ts), shared by the op's type rules and
 * the kernel that computes it (lib/kernels/tree-ensemble.ts): how its trees' values are
 * combined, the transform applied to the scores, and the columns of its encoded node table.
 */

export type Aggregate = 'SUM' | 'AVERAGE' | 'MIN' | 'MAX';
export type PostTransform = 'NONE' | 'LOGISTIC' | 'SOFTMAX' | 'SOFTMAX_ZERO' | 'PROBIT';

export const AGGREGATES: readonly Aggregate[] = ['SUM', 'AVERAGE', 'MIN', 'MAX'];
export const POST_TRANSFORMS: readonly PostTransform[] = ['NONE', 'LOGISTIC', 'SOFTMAX', 'SOFTMAX_ZERO', 'PROBIT'];

/** Columns of the encoded `nodes` table (int32 [M, 9]). */
export const NODE_COLUMNS = ['mode', 'feature', 'true_child', 'false_child', 'missing_tracks_true', 'set_start', 'set_end', 'weight_start', 'weight_end'] as const;
