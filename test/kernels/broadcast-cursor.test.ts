/**
 * BroadcastCursor (the chunked kernels' source indices) against NumPy's broadcasting rule
 * written out here independently: out index → per-axis coordinates → the input's coordinate
 * (0 where its dim is 1) → row-major offset. Any chunk size gives the same indices.
 */
import { BroadcastCursor } from '../../lib/kernels/access';

function expected(shape: number[], out: number[]): number[] {
  const n = out.reduce((a, b) => a * b, 1);
  const result: number[] = [];
  for (let k = 0; k < n; k++) {
    let rest = k;
    const coord = new Array<number>(out.length);
    for (let i = out.length - 1; i >= 0; i--) {
      coord[i] = rest % out[i]!;
      rest = Math.floor(rest / out[i]!);
    }
    let offset = 0;
    shape.forEach((d, i) => {
      const c = d === 1 ? 0 : coord[out.length - shape.length + i]!;
      offset = offset * d + c;
    });
    result.push(offset);
  }
  return result;
}

test.each([
  [[1], [5]],
  [[3, 1], [3, 4]],
  [[1, 4], [3, 4]],
  [[4], [2, 3, 4]],
  [[2, 1, 4], [2, 3, 4]],
  [[], [2, 2]],
  [[2, 3], [2, 3]],
  [[], []],
])('input %p broadcast to %p, in chunks of 1, 3 and all', (shape, out) => {
  const want = expected(shape, out);
  for (const chunk of [1, 3, Math.max(want.length, 1)]) {
    const cursor = new BroadcastCursor(shape, out);
    const got: number[] = [];
    const into = new Int32Array(chunk);
    for (let done = 0; done < want.length; done += chunk) {
      const count = Math.min(chunk, want.length - done);
      cursor.next(count, into);
      got.push(...into.subarray(0, count));
    }
    expect(got).toEqual(want);
  }
});
