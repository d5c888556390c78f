/** Interpreter implementations of lib/ir/ops/numeric.ts. */
import type { DType } from '../../ir/dtype';
import type { Tensor } from '../../ir/tensor';
import { bitcast, cumprod, det } from '../../kernels/numeric';
import { defineImpl } from '../registry';

defineImpl('trt.cumprod_onnx', (a) => [cumprod(a.self as Tensor, a.dim as number, { exclusive: a.exclusive as boolean, reverse: a.reverse as boolean })]);
defineImpl('aten.linalg_det.default', (a) => [det(a.A as Tensor)]);
defineImpl('trt.bitcast', (a) => [bitcast(a.self as Tensor, a.dtype as DType)]);
