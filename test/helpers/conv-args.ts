/**
 * The arguments of aten.convolution.default, which spells out every one: tests name what they
 * vary and get PyTorch's defaults for the rest (dilation 1, not transposed, no output
 * padding, one group, no bias).
 */
import type { Arg, Value } from '../../lib/ir/graph';

export interface ConvolutionArgs {
  input: Value;
  weight: Value;
  bias?: Value | null;
  stride: number[];
  padding: number[];
  dilation?: number[];
  transposed?: boolean;
  outputPadding?: number[];
  groups?: number;
}

export function convolutionArgs(a: ConvolutionArgs): Record<string, Arg> {
  return {
    input: a.input,
    weight: a.weight,
    bias: a.bias ?? null,
    stride: a.stride,
    padding: a.padding,
    dilation: a.dilation ?? a.stride.map(() => 1),
    transposed: a.transposed ?? false,
    output_padding: a.outputPadding ?? a.stride.map(() => 0),
    groups: a.groups ?? 1,
  };
}
