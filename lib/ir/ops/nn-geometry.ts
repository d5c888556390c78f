/**
 * Convolution and pooling geometry as their ops' static int arguments give it. Shape inference
 * (./nn.ts) and the converters (lib/conversion/converters/nn.ts) read the same arguments
 * through different accessors; these functions are the one place that maps them to geometry.
 */

/** A reader of an op's static arguments. */
export interface GeometryArgs {
  /** An int list; a single value is repeated to `n`; an empty list is kept when `allowEmpty`. */
  list(name: string, n: number, allowEmpty?: boolean): number[];
  int(name: string): number;
  bool(name: string): boolean;
  /** Rejects arguments that break the op's rules. */
  fail(message: string): never;
}

export interface ConvGeometry {
  stride: number[];
  padBegin: number[];
  padEnd: number[];
  dilation: number[];
  groups: number;
  transposed: boolean;
  /** Transposed only: extra output rows at the end of each spatial dim. */
  outputPadding: number[];
}

export interface PoolGeometry {
  kernel: number[];
  stride: number[];
  padBegin: number[];
  padEnd: number[];
  dilation: number[];
  ceilMode: boolean;
}

const filled = (n: number, v: number): number[] => new Array<number>(n).fill(v);

/**
 * Geometry of an ATen convolution from its padding, stride, dilation, output_padding (when
 * `withOutputPadding`, else zeros) and groups arguments, read in that order.
 */
export function atenConvGeometry(args: GeometryArgs, n: number, withOutputPadding: boolean): Omit<ConvGeometry, 'transposed'> {
  const padding = args.list('padding', n);
  return {
    stride: args.list('stride', n),
    padBegin: padding,
    padEnd: padding,
    dilation: args.list('dilation', n),
    outputPadding: withOutputPadding ? args.list('output_padding', n) : filled(n, 0),
    groups: args.list('groups', 1)[0]!,
  };
}

/**
 * Geometry of the ONNX-form trt convolutions from their stride, pads_begin, pads_end,
 * dilation and groups arguments, read in that order; no output padding.
 */
export function paddedConvGeometry(args: GeometryArgs, n: number, transposed: boolean): ConvGeometry {
  return {
    stride: args.list('stride', n),
    padBegin: args.list('pads_begin', n),
    padEnd: args.list('pads_end', n),
    dilation: args.list('dilation', n),
    outputPadding: filled(n, 0),
    groups: args.int('groups'),
    transposed,
  };
}

/** kernel_size, stride (default, as []: the kernel), padding, dilation and ceil_mode of an ATen pool. */
export function atenPoolGeometry(args: GeometryArgs, n: number, hasDilation: boolean): PoolGeometry {
  const kernel = args.list('kernel_size', n);
  const stride = args.list('stride', n, true);
  const padding = args.list('padding', n);
  const dilation = hasDilation ? args.list('dilation', n) : filled(n, 1);
  // PyTorch: "pad should be at most half of effective kernel size".
  padding.forEach((p, i) => {
    const limit = hasDilation ? Math.floor(((kernel[i]! - 1) * dilation[i]! + 1) / 2) : Math.floor(kernel[i]! / 2);
    if (p > limit) args.fail(`padding ${p} should be at most half of the kernel size (${limit})`);
  });
  return {
    kernel,
    stride: stride.length === 0 ? kernel : stride,
    padBegin: padding,
    padEnd: padding,
    dilation,
    ceilMode: args.bool('ceil_mode'),
  };
}

/** Pool geometry of the ONNX-form trt pools (begin/end pads, stride given). */
export function paddedPoolGeometry(args: GeometryArgs, n: number, hasDilation: boolean): PoolGeometry {
  return {
    kernel: args.list('kernel_size', n),
    stride: args.list('stride', n),
    padBegin: args.list('pads_begin', n),
    padEnd: args.list('pads_end', n),
    dilation: hasDilation ? args.list('dilation', n) : filled(n, 1),
    ceilMode: args.bool('ceil_mode'),
  };
}

/**
 * Output size of a sliding window along one dim, PyTorch's pooling_output_shape with
 * separate begin/end pads: with ceil mode the last window must start inside the input or
 * the begin padding.
 */
export function pooledSize(inSize: number, kernel: number, stride: number, padBegin: number, padEnd: number, dilation: number, ceilMode: boolean): number {
  const room = inSize + padBegin + padEnd - dilation * (kernel - 1) - 1;
  if (room < 0) return 0;
  let out = (ceilMode ? Math.ceil(room / stride) : Math.floor(room / stride)) + 1;
  if (ceilMode && (out - 1) * stride >= inSize + padBegin) out--;
  return out;
}
