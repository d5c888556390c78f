/**
 * Convolution and transposed convolution on TensorRT's (de)convolution layers, which take
 * static weights and 2-D or 3-D spatial inputs: a 1-D convolution runs as 2-D with a
 * trailing unit dim; a transposed convolution's output padding becomes less end padding,
 * or when it exceeds the padding, extra zero rows with the bias added afterwards.
 */
import { InternalError } from '../../errors';
import type { ConvGeometry } from '../../ir/ops/nn-geometry';
import { cast as castKernel } from '../../kernels/unary';
import type { NetTensor } from '../../network';
import { Tensor } from '../../ir/tensor';
import type { ConversionContext } from '../context';
import { cast, elementwise, reshape } from './basic';
import { axesOf, reshapeFromDims } from './dynamic';
import { alongAxis, sliceSized } from './nn-util';

/** Geometry of a (transposed) convolution, as shape inference reads it from the node. */
export type ConvSpec = ConvGeometry;

/** Weights in the TensorRT type of the activations (float64 weights under truncateDouble). */
function weightsFor(t: Tensor, x: NetTensor): Tensor {
  return t.dtype === x.dtype ? t : castKernel(t, x.dtype);
}

/**
 * (Transposed) convolution of a batched [N, C, ...spatial] input with `weight` (PyTorch
 * layout: [Cout, Cin/groups, k...] or transposed [Cin, Cout/groups, k...]): constant weights,
 * or a tensor of static shape (a dequantized quantized weight), which the layer takes as its
 * kernel input (its `kernel` parameter then empty).
 */
export function convolution(ctx: ConversionContext, x: NetTensor, weight: Tensor | NetTensor, bias: Tensor | null, spec: ConvSpec): NetTensor {
  const n = weight.shape.length - 2;
  if (n < 1 || n > 3 || x.shape.length !== n + 2) throw new InternalError(`${ctx.name()}: input [${x.shape}] does not fit weight [${weight.shape}]`);
  const tensorKernel = weight instanceof Tensor ? null : weight;
  if (tensorKernel !== null && tensorKernel.shape.some((d) => d < 0)) throw new InternalError(`${ctx.name()}: a kernel tensor needs static dims, got [${tensorKernel.shape}]`);
  let kernel = tensorKernel === null ? weightsFor(weight as Tensor, x) : new Tensor(x.dtype, [0]);
  let kernelIn = tensorKernel === null ? null : cast(ctx, tensorKernel, x.dtype, 'kernel_cast');
  let kernelShape = [...weight.shape];
  let b = bias === null ? null : weightsFor(bias, x);
  let input = x;
  let s = spec;
  if (n === 1) {
    // 1-D as 2-D: a trailing spatial dim of 1 with a 1-wide kernel.
    input = reshapeFromDims(ctx, x, [...axesOf(x), 1], 'as_2d');
    kernelShape = [...kernelShape, 1];
    if (kernelIn === null) kernel = kernel.reshape(kernelShape);
    else kernelIn = reshape(ctx, kernelIn, kernelShape, 'kernel_as_2d');
    s = {
      ...spec,
      stride: [...spec.stride, 1],
      padBegin: [...spec.padBegin, 0],
      padEnd: [...spec.padEnd, 0],
      dilation: [...spec.dilation, 1],
      outputPadding: [...spec.outputPadding, 0],
    };
  }
  const kernelSize = kernelShape.slice(2);
  const inputs = kernelIn === null ? [input] : [input, kernelIn];
  let out: NetTensor;
  if (!s.transposed) {
    out = ctx.add(
      {
        kind: 'convolution',
        nbOutputMaps: kernelShape[0]!,
        kernelSize,
        stride: s.stride,
        prePadding: s.padBegin,
        postPadding: s.padEnd,
        dilation: s.dilation,
        groups: s.groups,
        kernel,
        bias: b,
      },
      inputs,
    );
  } else {
    const cout = kernelShape[1]! * s.groups;
    // Output padding extends the end: less end padding, or rows beyond the full output.
    const post = s.padEnd.map((p, i) => p - s.outputPadding[i]!);
    const extra = post.map((p) => Math.max(0, -p));
    const grow = extra.some((e) => e > 0);
    out = ctx.add(
      {
        kind: 'deconvolution',
        nbOutputMaps: cout,
        kernelSize,
        stride: s.stride,
        prePadding: s.padBegin,
        postPadding: post.map((p) => Math.max(0, p)),
        dilation: s.dilation,
        groups: s.groups,
        kernel,
        bias: grow ? null : b,
      },
      inputs,
    );
    if (grow) {
      // Rows past the full transposed-convolution output hold only the bias.
      // The batch may be a run-time dim (copied); spatial dims are static here (checked by the converter).
      const size = out.shape.map((d, i) => (i === 0 ? { axis: 0 } : i < 2 ? d : d + extra[i - 2]!));
      out = sliceSized(ctx, out, out.shape.map(() => 0), size, out.shape.map(() => 1), 'output_padding', 0);
      if (b !== null) {
        const biasT = ctx.constant(b.reshape(alongAxis(out.shape.length, 1, cout)), ctx.name('bias'));
        out = elementwise(ctx, out, biasT, 'sum', out.dtype, 'add_bias');
      }
      b = null;
    }
  }
  return n === 1 ? reshapeFromDims(ctx, out, axesOf(out, 0, 3), 'as_1d') : out;
}
