/**
 * Constants as the lowering gives them to onnxruntime (lib/backends/onnxruntime/layers/data.ts,
 * layers/pointwise.ts): a constant reshaped for broadcasting is folded into an initializer,
 * an elementwise operand loses its leading 1s (onnxruntime's GELU, bias and layer-norm
 * fusions take only scalars and 1-D biases), and the initializers left unread are dropped.
 * The numbers are checked against the reference backend; the structure on the ONNX graph.
 */
import { onnxruntimeBackend } from '../../../../lib/backends/onnxruntime';
import { lowerNetwork } from '../../../../lib/backends/onnxruntime/layers/index';
import { Network } from '../../../../lib/network';
import { Tensor } from '../../../../lib/ir/tensor';
import { expectClose } from '../../../helpers/compare';
import { Random } from '../../../helpers/random';
import { runNetwork } from '../../reference/helpers';
import { runOrtEngine } from '../engine-worker';

const rng = new Random(20261202);

interface GraphShape {
  node: Array<{ opType: string; input: string[] }>;
  initializer: Array<{ name: string; dims: number[] }>;
}

/** x·0.5·(1 + erf(x / √2)) + bias, the constants shaped [1, 1, k] the way converters broadcast them. */
function geluNetwork(): Network {
  const n = new Network('gelu');
  const x = n.addInput('x', 'float32', [2, 4, 3]);
  const broadcast = (values: Tensor, name: string) =>
    n.add1({ kind: 'shuffle', reshape: [1, 1, values.shape[0]!], zeroIsPlaceholder: false }, [n.add1({ kind: 'constant', weights: values }, [], `${name}_w`)], name);
  const scalar = (v: number, name: string) => broadcast(Tensor.from('float32', [1], [v]), name);
  const biased = n.add1({ kind: 'elementwise', op: 'sum' }, [x, broadcast(rng.tensor([3]), 'bias')], 'biased');
  const erf = n.add1({ kind: 'unary', op: 'erf' }, [n.add1({ kind: 'elementwise', op: 'div' }, [biased, scalar(Math.SQRT2, 'sqrt2')], 'scaled')], 'erf');
  const onePlus = n.add1({ kind: 'elementwise', op: 'sum' }, [erf, scalar(1, 'one')], 'one_plus');
  const gelu = n.add1({ kind: 'elementwise', op: 'prod' }, [n.add1({ kind: 'elementwise', op: 'prod' }, [biased, onePlus], 'x_times'), scalar(0.5, 'half')], 'gelu');
  n.markOutput(gelu, 'y');
  return n;
}

test('constants reshaped for broadcasting become initializers without leading 1s, and nothing unread is kept', () => {
  const { graph } = lowerNetwork(geluNetwork()) as { graph: GraphShape };
  expect(graph.node.map((x) => x.opType)).not.toContain('Reshape');
  const read = new Set(graph.node.flatMap((x) => x.input));
  expect(graph.initializer.filter((i) => !read.has(i.name))).toEqual([]);
  expect(graph.initializer.map((i) => i.dims).sort()).toEqual([[], [], [], [3]]);
});

test('the lowered network computes what the reference backend does', async () => {
  const network = geluNetwork();
  const feeds = { x: rng.tensor([2, 4, 3], 'float32', -2, 2) };
  const expected = await runNetwork(network, feeds);
  const actual = await runOrtEngine(await onnxruntimeBackend.build(network, {} as never, { type: 'cpu' } as never), feeds);
  expectClose(actual.y!, expected.y!, { rtol: 1e-5, atol: 1e-6 }, 'gelu');
});
