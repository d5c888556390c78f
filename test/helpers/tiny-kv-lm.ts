/**
 * A tiny GPT-2-shaped causal language model with a KV cache, as ONNX bytes, laid out the way
 * Hugging Face Optimum (and transformers.js) export decoders "with past": inputs `input_ids`
 * int64 [batch, sequence_length], `attention_mask` int64 [batch, past_sequence_length +
 * sequence_length] (its own dim_param, as Optimum writes it), `position_ids` int64 [batch,
 * sequence_length] (optional), `past_key_values.N.key` / `.value` float32 [batch, heads,
 * past_sequence_length, headDim]; outputs `logits` [batch, sequence_length, vocab] and
 * `present.N.key` / `.value` [batch, heads, past + sequence_length, headDim].
 *
 * Each block is GPT-2's: LayerNorm, one q/k/v projection split in three, heads by
 * Reshape/Transpose, the past concatenated before the new keys and values, scores scaled by
 * 1/sqrt(headDim), a causal mask built from the shapes (query i sits at absolute position
 * total - seq + i and sees keys j <= that) and'ed with the padding mask from `attention_mask`
 * and applied as an additive -1e9, softmax, the output projection, a residual; then LayerNorm,
 * an MLP with GELU (Erf form) and a residual. A final LayerNorm and an LM head of its own (a
 * head tied to the embedding makes so small a model repeat its last token). Weights are seeded
 * pseudo-random (test/helpers/random.ts); the default seed gives varied greedy continuations
 * with no step near a tie.
 */
import { Tensor } from '../../lib/ir/tensor';
import { buildSymbolicModel, i64, type SymNode } from './onnx-symbolic-model';
import { Random } from './random';

export interface TinyKvLmOptions {
  layers?: number;
  heads?: number;
  headDim?: number;
  vocab?: number;
  /** Positions the learned position table holds (default 64). */
  maxPositions?: number;
  /** Whether the model takes `position_ids` (default true); without it positions are 0.. in order of the sequence, past included. */
  positionIds?: boolean;
  seed?: number;
}

export interface TinyKvLm {
  model: Uint8Array;
  layers: number;
  heads: number;
  headDim: number;
  vocab: number;
  /** Whether the model takes `position_ids`. */
  positionIds: boolean;
}

const f32 = (x: number): Tensor => Tensor.scalar('float32', x);

/** The serialized model and its sizes. */
export function tinyKvLm(options: TinyKvLmOptions = {}): TinyKvLm {
  const { layers = 2, heads = 2, headDim = 4, vocab = 17, maxPositions = 64, positionIds = true, seed = 5 } = options;
  const hidden = heads * headDim;
  const inner = 4 * hidden;
  const rnd = new Random(seed);
  const weight = (shape: number[], scale: number): Tensor => rnd.tensor(shape, 'float32', -scale, scale);
  const init: Record<string, Tensor> = {
    wte: weight([vocab, hidden], 1),
    wpe: weight([maxPositions, hidden], 0.5),
    scale: f32(1 / Math.sqrt(headDim)),
    neg: f32(-1e9),
    zero: f32(0),
    half: f32(0.5),
    one: f32(1),
    rsqrt2: f32(Math.SQRT1_2),
    i0: Tensor.scalar('int64', 0),
    i1: Tensor.scalar('int64', 1),
    ax0: i64([0]),
    ax1: i64([1]),
    ax12: i64([1, 2]),
    idx1: i64([1]),
    split3: i64([hidden, hidden, hidden]),
    heads_shape: i64([0, 0, heads, headDim]),
    merged_shape: i64([0, 0, hidden]),
  };
  init.lm_head = weight([hidden, vocab], 1);
  const norm = (name: string): void => {
    init[`${name}.g`] = rnd.tensor([hidden], 'float32', 0.8, 1.2);
    init[`${name}.b`] = weight([hidden], 0.1);
  };
  for (let l = 0; l < layers; l++) {
    norm(`h${l}.ln1`);
    norm(`h${l}.ln2`);
    init[`h${l}.qkv.w`] = weight([hidden, 3 * hidden], 0.8);
    init[`h${l}.qkv.b`] = weight([3 * hidden], 0.1);
    init[`h${l}.proj.w`] = weight([hidden, hidden], 0.6);
    init[`h${l}.proj.b`] = weight([hidden], 0.1);
    init[`h${l}.fc.w`] = weight([hidden, inner], 0.6);
    init[`h${l}.fc.b`] = weight([inner], 0.1);
    init[`h${l}.fc2.w`] = weight([inner, hidden], 0.4);
    init[`h${l}.fc2.b`] = weight([hidden], 0.1);
  }
  norm('ln_f');

  const nodes: SymNode[] = [];
  let n = 0;
  const node = (op: string, inputs: string[], attrs?: SymNode['attrs'], outputs?: string[]): string => {
    const out = outputs ?? [`t${n++}`];
    nodes.push({ op, inputs, outputs: out, ...(attrs === undefined ? {} : { attrs }) });
    return out[0]!;
  };
  const layerNorm = (x: string, name: string): string => node('LayerNormalization', [x, `${name}.g`, `${name}.b`], { axis: -1, epsilon: 1e-5 });
  const linear = (x: string, name: string): string => node('Add', [node('MatMul', [x, `${name}.w`]), `${name}.b`]);

  // Sizes from the shapes: the new tokens, and all tokens (what attention_mask covers).
  const seqLen = node('Gather', [node('Shape', ['input_ids']), 'i1'], { axis: 0 });
  const total = node('Gather', [node('Shape', ['attention_mask']), 'i1'], { axis: 0 });
  const pastLen = node('Sub', [total, seqLen]);

  const positions = positionIds ? 'position_ids' : node('Unsqueeze', [node('Range', [pastLen, total, 'i1']), 'ax0']);
  let h = node('Add', [node('Gather', ['wte', 'input_ids'], { axis: 0 }), node('Gather', ['wpe', positions], { axis: 0 })]);

  // The additive mask [batch, 1, seq, total]: causal over absolute positions, and'ed with the padding.
  const keyPos = node('Unsqueeze', [node('Range', ['i0', total, 'i1']), 'ax0']);
  const queryPos = node('Unsqueeze', [node('Range', [pastLen, total, 'i1']), 'ax1']);
  const causal = node('LessOrEqual', [keyPos, queryPos]);
  const padding = node('Unsqueeze', [node('Cast', ['attention_mask'], { to: 9 }), 'ax12']);
  const allowed = node('And', [causal, padding]);
  const mask = node('Where', [allowed, 'zero', 'neg']);

  for (let l = 0; l < layers; l++) {
    const x = layerNorm(h, `h${l}.ln1`);
    const qkv = linear(x, `h${l}.qkv`);
    const [q, k, v] = [`h${l}.q`, `h${l}.k`, `h${l}.v`];
    node('Split', [qkv, 'split3'], { axis: 2 }, [q, k, v]);
    const headsOf = (t: string): string => node('Transpose', [node('Reshape', [t, 'heads_shape'])], { perm: [0, 2, 1, 3] });
    const keys = node('Concat', [`past_key_values.${l}.key`, headsOf(k)], { axis: 2 }, [`present.${l}.key`]);
    const values = node('Concat', [`past_key_values.${l}.value`, headsOf(v)], { axis: 2 }, [`present.${l}.value`]);
    const scores = node('Mul', [node('MatMul', [headsOf(q), node('Transpose', [keys], { perm: [0, 1, 3, 2] })]), 'scale']);
    const probs = node('Softmax', [node('Add', [scores, mask])], { axis: -1 });
    const context = node('Reshape', [node('Transpose', [node('MatMul', [probs, values])], { perm: [0, 2, 1, 3] }), 'merged_shape']);
    h = node('Add', [h, linear(context, `h${l}.proj`)]);
    const up = linear(layerNorm(h, `h${l}.ln2`), `h${l}.fc`);
    const gelu = node('Mul', [node('Mul', [up, 'half']), node('Add', ['one', node('Erf', [node('Mul', [up, 'rsqrt2'])])])]);
    h = node('Add', [h, linear(gelu, `h${l}.fc2`)]);
  }
  node('MatMul', [layerNorm(h, 'ln_f'), 'lm_head'], undefined, ['logits']);

  const past = 'past_sequence_length';
  const inputs: Record<string, { dtype: 'int64' | 'float32'; dims: Array<number | string> }> = {
    input_ids: { dtype: 'int64', dims: ['batch_size', 'sequence_length'] },
    attention_mask: { dtype: 'int64', dims: ['batch_size', 'past_sequence_length + sequence_length'] },
  };
  if (positionIds) inputs.position_ids = { dtype: 'int64', dims: ['batch_size', 'sequence_length'] };
  for (let l = 0; l < layers; l++) {
    inputs[`past_key_values.${l}.key`] = { dtype: 'float32', dims: ['batch_size', heads, past, headDim] };
    inputs[`past_key_values.${l}.value`] = { dtype: 'float32', dims: ['batch_size', heads, past, headDim] };
  }
  const outputs = ['logits', ...Array.from({ length: layers }, (_, l) => [`present.${l}.key`, `present.${l}.value`]).flat()];
  return { model: buildSymbolicModel({ inputs, initializers: init, nodes, outputs, opset: 17 }), layers, heads, headDim, vocab, positionIds };
}

/** A model that is not a KV-cache LM: `input_ids` → `logits` through the embedding alone. */
export function tinyLmWithoutCache(vocab = 17, hidden = 8): Uint8Array {
  const rnd = new Random(3);
  return buildSymbolicModel({
    inputs: { input_ids: { dtype: 'int64', dims: ['batch_size', 'sequence_length'] } },
    initializers: { wte: rnd.tensor([vocab, hidden]), head: rnd.tensor([hidden, vocab]) },
    nodes: [
      { op: 'Gather', inputs: ['wte', 'input_ids'], outputs: ['h'], attrs: { axis: 0 } },
      { op: 'MatMul', inputs: ['h', 'head'], outputs: ['logits'] },
    ],
    outputs: ['logits'],
  });
}
