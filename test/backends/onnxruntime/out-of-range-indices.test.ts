/**
 * Out-of-range indices are refused the same way on every backend. The conversion adds d to a
 * model's negative indices once, so an index below -d reaches the layer still negative: the
 * reference backend refuses it, and onnxruntime, which reads negative indices from the end,
 * used to return data for it (index -6 into 4 elements gave element 2). Gather, GatherElements,
 * GatherND and ScatterElements, below -d and at d, on both backends: E_BAD_INPUT; in-range
 * negative indices give the same answer on both.
 */
import { compile } from '../../../lib/compile';
import { loadOnnx } from '../../../lib/frontends/onnx';
import { Tensor } from '../../../lib/ir/tensor';
import { buildSingleOpModel, closeOrt, type OrtOpSpec } from '../../helpers/ort-single-op';

afterAll(() => closeOrt());

const data = Tensor.from('float32', [4], [10, 11, 12, 13]);
const i64 = (shape: number[], values: number[]): Tensor => Tensor.from('int64', shape, values);

async function both(spec: OrtOpSpec, feeds: Tensor[]): Promise<Array<{ backend: string; out?: number[]; code?: string }>> {
  const results = [];
  for (const backend of ['reference', 'onnxruntime'] as const) {
    const program = await compile(loadOnnx(buildSingleOpModel(spec)), { backend, minBlockSize: 1 });
    try {
      const [out] = await program.run(feeds);
      results.push({ backend, out: out!.toArray().map(Number) });
    } catch (error) {
      results.push({ backend, code: (error as { code?: string }).code });
    } finally {
      await program.dispose();
    }
  }
  return results;
}

const cases: Array<[string, (indices: Tensor) => [OrtOpSpec, Tensor[]], number[], number[]]> = [
  ['Gather', (idx) => [{ opType: 'Gather', inputs: [data, idx], attributes: { axis: 0 } }, [data, idx]], [-1, -4, 2], [13, 10, 12]],
  ['GatherElements', (idx) => [{ opType: 'GatherElements', inputs: [data, idx], attributes: { axis: 0 } }, [data, idx]], [-1, -4, 2], [13, 10, 12]],
  ['GatherND', (idx) => [{ opType: 'GatherND', inputs: [data, Tensor.from('int64', [idx.size, 1], idx.toArray().map(Number))] }, [data, Tensor.from('int64', [idx.size, 1], idx.toArray().map(Number))]], [-1, -4, 2], [13, 10, 12]],
  [
    'ScatterElements',
    (idx) => {
      const updates = Tensor.from('float32', [idx.size], new Array<number>(idx.size).fill(0));
      return [{ opType: 'ScatterElements', inputs: [data, idx, updates], attributes: { axis: 0 } }, [data, idx, updates]];
    },
    [-1, -4],
    [0, 11, 12, 0],
  ],
];

describe.each(cases)('%s', (_op, make, inRange, want) => {
  test('in-range negative indices: the same answer on the reference backend and onnxruntime', async () => {
    const [spec, feeds] = make(i64([inRange.length], inRange));
    for (const r of await both(spec, feeds)) expect([r.backend, r.out]).toEqual([r.backend, want]);
  });

  test.each([[-6], [-5], [4]])('index %d of 4: E_BAD_INPUT on both backends', async (index) => {
    const [spec, feeds] = make(i64([1], [index]));
    for (const r of await both(spec, feeds)) expect([r.backend, r.code]).toEqual([r.backend, 'E_BAD_INPUT']);
  });
});
