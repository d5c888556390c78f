/**
 * Reference loops for the composition tests (row-major, written from PyTorch's definitions of
 * F.pad, Tensor.repeat, torch.roll and narrow), shared by the compiled and the in-process tests.
 */
import { Tensor } from '../../lib/ir/tensor';

export const stridesOf = (shape: readonly number[]): number[] => shape.map((_, i) => shape.slice(i + 1).reduce((a, d) => a * d, 1));

/** out[idx] = f(idx) over `shape`. */
export function generate(shape: number[], f: (idx: number[]) => number): Tensor {
  const n = shape.reduce((a, d) => a * d, 1);
  const st = stridesOf(shape);
  const data = Array.from({ length: n }, (_, k) => f(shape.map((d, i) => Math.floor(k / st[i]!) % d)));
  return Tensor.from('float32', shape, data);
}

export const at = (x: Tensor, idx: readonly number[]): number => {
  const st = stridesOf(x.shape);
  return (x.data as Float32Array)[idx.reduce((a, j, i) => a + j * st[i]!, 0)]!;
};

/** F.pad(x, pad, value=v) with non-negative pads (pairs from the last dim). */
export function padRef(x: Tensor, pad: number[], v: number): Tensor {
  const r = x.shape.length;
  const before = x.shape.map((_, i) => (r - 1 - i < pad.length / 2 ? pad[2 * (r - 1 - i)]! : 0));
  const after = x.shape.map((_, i) => (r - 1 - i < pad.length / 2 ? pad[2 * (r - 1 - i) + 1]! : 0));
  return generate(
    x.shape.map((d, i) => d + before[i]! + after[i]!),
    (idx) => {
      const src = idx.map((j, i) => j - before[i]!);
      return src.every((j, i) => j >= 0 && j < x.shape[i]!) ? at(x, src) : v;
    },
  );
}

/** x.repeat(reps). */
export function repeatRef(x: Tensor, reps: number[]): Tensor {
  const dims = [...new Array<number>(reps.length - x.shape.length).fill(1), ...x.shape];
  const lead = reps.length - x.shape.length;
  return generate(
    dims.map((d, i) => d * reps[i]!),
    (idx) => at(x, idx.slice(lead).map((j, i) => j % dims[lead + i]!)),
  );
}

/** torch.roll(x, shifts, dims). */
export function rollRef(x: Tensor, shifts: number[], dims: number[]): Tensor {
  return generate([...x.shape], (idx) => {
    const src = [...idx];
    dims.forEach((d, k) => {
      const n = x.shape[d]!;
      src[d] = (((idx[d]! - shifts[k]!) % n) + n) % n;
    });
    return at(x, src);
  });
}

/** Elements [from, from + count) of `axis`. */
export function narrowRef(x: Tensor, axis: number, from: number, count: number): Tensor {
  return generate(
    x.shape.map((d, i) => (i === axis ? count : d)),
    (idx) => at(x, idx.map((j, i) => (i === axis ? j + from : j))),
  );
}
