/**
 * Graph values (tensors and string tensors) compared with what another runtime gave for the
 * same model: strings and integer tensors exactly, floats to FP32's tolerance.
 */
import { isFloating } from '../../lib/ir/dtype';
import { Tensor } from '../../lib/ir/tensor';
import { StringTensor, type GraphValue } from '../../lib/ir/values';
import { expectClose, FP32 } from './compare';

export function expectSameGraphValues(actual: readonly GraphValue[], expected: readonly GraphValue[]): void {
  expect(actual).toHaveLength(expected.length);
  actual.forEach((a, i) => {
    const e = expected[i]!;
    if (e instanceof StringTensor) {
      expect(a).toBeInstanceOf(StringTensor);
      expect((a as StringTensor).shape).toEqual(e.shape);
      expect((a as StringTensor).data).toEqual(e.data);
    } else if (e instanceof Tensor && isFloating(e.dtype)) {
      expectClose(a as Tensor, e, FP32, `output ${i}`);
    } else if (e instanceof Tensor) {
      expect((a as Tensor).dtype).toBe(e.dtype);
      expect((a as Tensor).shape).toEqual(e.shape);
      expect(Array.from((a as Tensor).data as ArrayLike<number | bigint>)).toEqual(Array.from(e.data as ArrayLike<number | bigint>));
    } else {
      throw new Error(`output ${i}: expected a tensor or string tensor, got ${String(e)}`);
    }
  });
}
