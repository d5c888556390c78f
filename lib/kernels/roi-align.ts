/**
 * ONNX RoiAlign in float64: each region of interest is cut into output_height x
 * output_width bins, each bin sampled on a regular grid with bilinear interpolation, and the
 * samples averaged ('avg') or maximized ('max'). It follows ONNX's reference
 * (onnx/reference/ops/op_roi_align.py, itself onnxruntime's CPU kernel), including where that
 * differs from plain bilinear sampling:
 *
 * - a sample further than one pixel outside the map has all four weights 0, so it adds 0 to a
 *   bin's average and counts as the value 0 in a bin's maximum;
 * - a sample is moved to the last row or column when it lies past it, and to 0 when it lies
 *   in (-1, 0);
 * - 'max' does not take the maximum of interpolated values: per sample it takes the largest of
 *   the four weighted corner terms (w1·v1, w2·v2, w3·v3, w4·v4), then the largest over the
 *   bin's samples;
 * - with sampling_ratio 0 each region's grid is ceil(region size / output size) per axis, so
 *   it depends on the region's coordinates; a region whose grid is empty gives 0.
 */
import { BadInputError, InvalidArgumentError } from '../errors';
import type { Tensor } from '../ir/tensor';
import { fromNumbers, readNumberView } from './access';

export interface RoiAlignArgs {
  /** [N, C, H, W]. */
  input: Tensor;
  /** [R, 4]: x1, y1, x2, y2 per region, in the input's coordinates before spatial_scale. */
  rois: Tensor;
  /** [R]: the batch item each region is taken from. */
  batchIndices: Tensor;
  mode: 'avg' | 'max';
  outputHeight: number;
  outputWidth: number;
  /** Samples per bin and axis; 0 picks them per region (adaptive). */
  samplingRatio: number;
  spatialScale: number;
  /** half_pixel (coordinates shifted by -0.5) or output_half_pixel (unshifted, regions at least 1x1). */
  halfPixel: boolean;
}

/** The four corner offsets (into one H·W plane) and weights of one sample. */
interface Taps {
  pos: [number, number, number, number];
  w: [number, number, number, number];
}

/** One sample's taps at (y, x) in a height x width map, as ONNX's reference computes them. */
function taps(y: number, x: number, height: number, width: number): Taps {
  if (y < -1 || y > height || x < -1 || x > width) return { pos: [0, 0, 0, 0], w: [0, 0, 0, 0] };
  let yy = Math.max(y, 0);
  let xx = Math.max(x, 0);
  let yLow = Math.trunc(yy);
  let xLow = Math.trunc(xx);
  let yHigh: number;
  let xHigh: number;
  if (yLow >= height - 1) {
    yHigh = yLow = height - 1;
    yy = yLow;
  } else {
    yHigh = yLow + 1;
  }
  if (xLow >= width - 1) {
    xHigh = xLow = width - 1;
    xx = xLow;
  } else {
    xHigh = xLow + 1;
  }
  const ly = yy - yLow;
  const lx = xx - xLow;
  const hy = 1 - ly;
  const hx = 1 - lx;
  return {
    pos: [yLow * width + xLow, yLow * width + xHigh, yHigh * width + xLow, yHigh * width + xHigh],
    w: [hy * hx, hy * lx, ly * hx, ly * lx],
  };
}

/** [R, C, output_height, output_width] in the input's dtype. */
export function roiAlign(a: RoiAlignArgs): Tensor {
  const op = 'roi_align';
  const { input, rois, batchIndices } = a;
  if (input.rank !== 4) throw new InvalidArgumentError(`${op}: input must be [N, C, H, W], got [${input.shape.join(', ')}]`);
  const [n, c, height, width] = input.shape as [number, number, number, number];
  const r = rois.shape[0] ?? 0;
  if (rois.rank !== 2 || rois.shape[1] !== 4 || batchIndices.rank !== 1 || batchIndices.shape[0] !== r) {
    throw new InvalidArgumentError(`${op}: rois [${rois.shape.join(', ')}] must be [R, 4] and batch_indices [${batchIndices.shape.join(', ')}] [R]`);
  }
  const ph = a.outputHeight;
  const pw = a.outputWidth;
  const x = readNumberView(input);
  const boxes = readNumberView(rois);
  const batch = readNumberView(batchIndices);
  const out = new Float64Array(r * c * ph * pw);
  const plane = height * width;
  const offset = a.halfPixel ? 0.5 : 0;
  for (let k = 0; k < r; k++) {
    const b = batch[k]!;
    if (!Number.isInteger(b) || b < 0 || b >= n) {
      const exact = String(batchIndices.data[k]);
      throw new BadInputError(`${op}: batch index ${exact} of region ${k} is out of range [0, ${n})`, { details: { index: exact, dim: n } });
    }
    const startW = boxes[k * 4]! * a.spatialScale - offset;
    const startH = boxes[k * 4 + 1]! * a.spatialScale - offset;
    const endW = boxes[k * 4 + 2]! * a.spatialScale - offset;
    const endH = boxes[k * 4 + 3]! * a.spatialScale - offset;
    let roiW = endW - startW;
    let roiH = endH - startH;
    if (!a.halfPixel) {
      // output_half_pixel: a malformed region is taken as 1x1.
      roiW = Math.max(roiW, 1);
      roiH = Math.max(roiH, 1);
    }
    const binH = roiH / ph;
    const binW = roiW / pw;
    const gridH = a.samplingRatio > 0 ? a.samplingRatio : Math.ceil(roiH / ph);
    const gridW = a.samplingRatio > 0 ? a.samplingRatio : Math.ceil(roiW / pw);
    const count = Math.max(gridH * gridW, 1);
    // The taps of every sample of every bin, shared by the channels.
    const samples: Taps[] = [];
    for (let i = 0; i < ph; i++) {
      for (let j = 0; j < pw; j++) {
        for (let iy = 0; iy < gridH; iy++) {
          const y = startH + i * binH + ((iy + 0.5) * binH) / gridH;
          for (let ix = 0; ix < gridW; ix++) samples.push(taps(y, startW + j * binW + ((ix + 0.5) * binW) / gridW, height, width));
        }
      }
    }
    const perBin = Math.max(gridH, 0) * Math.max(gridW, 0);
    for (let ch = 0; ch < c; ch++) {
      const base = (b * c + ch) * plane;
      for (let bin = 0; bin < ph * pw; bin++) {
        let value = 0;
        for (let s = 0; s < perBin; s++) {
          const t = samples[bin * perBin + s]!;
          if (a.mode === 'avg') {
            value += t.w[0] * x[base + t.pos[0]]! + t.w[1] * x[base + t.pos[1]]! + t.w[2] * x[base + t.pos[2]]! + t.w[3] * x[base + t.pos[3]]!;
          } else {
            const v = Math.max(t.w[0] * x[base + t.pos[0]]!, t.w[1] * x[base + t.pos[1]]!, t.w[2] * x[base + t.pos[2]]!, t.w[3] * x[base + t.pos[3]]!);
            value = s === 0 ? v : Math.max(value, v);
          }
        }
        out[(k * c + ch) * ph * pw + bin] = a.mode === 'avg' ? value / count : value;
      }
    }
  }
  return fromNumbers(input.dtype, [r, c, ph, pw], out);
}
