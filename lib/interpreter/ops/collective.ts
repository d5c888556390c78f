/**
 * Interpreter implementation of `trt.all_reduce` (lib/ir/ops/collective.ts) for a single rank:
 * the identity. Tensor-parallel runs never reach it: their runtime stops every rank at the
 * collective and combines the tensors itself (lib/runtime/tensor-parallel/program.ts).
 */
import type { Tensor } from '../../ir/tensor';
import { defineImpl } from '../registry';

defineImpl('trt.all_reduce', (args) => [args.self as Tensor]);
