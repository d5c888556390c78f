/**
 * The KV-cache layout of a causal language model, found from its input and output names and
 * shapes: the layout Hugging Face Optimum and transformers.js export decoders "with past" in.
 *
 * inputs:  input_ids        int64 [batch, seq]
 *          attention_mask   int64 [batch, past + seq]
 *          position_ids     int64 [batch, seq]               (optional)
 *          use_cache_branch bool  [1]                        (optional: merged decoders)
 *          past_key_values.N.key / .value  [batch, heads, past, headDim], N = 0 .. layers-1
 * outputs: logits           [batch, seq, vocab]
 *          present.N.key / .value          [batch, heads, past + seq, headDim]
 *                           (`present_key_values.N.key` is read too)
 *
 * Other outputs are ignored; any other input is refused, since generate() would not know what
 * to feed it. Everything missing or misshapen is listed in one error.
 */
import { InvalidArgumentError } from '../errors';
import type { DType } from '../ir/dtype';
import { formatShape, isStatic, type Dim } from '../ir/symbolic';

/** An input or output as the layout needs to see it: a program's ProgramIO, or a model graph's value. */
export interface NamedIO {
  readonly name: string;
  readonly dtype: DType;
  readonly shape: readonly Dim[];
}

/** One layer's cache: the names of its past inputs and present outputs. */
export interface KvCacheLayer {
  readonly pastKey: string;
  readonly pastValue: string;
  readonly presentKey: string;
  readonly presentValue: string;
  /** Key/value heads of this layer's cache (dim 1). */
  readonly heads: number;
  /** The head size of the keys (dim 3); the values' may differ. */
  readonly keyDim: number;
  readonly valueDim: number;
}

/** Where a program keeps its KV cache, and what it takes besides. */
export interface KvCacheLayout {
  readonly inputIds: string;
  readonly attentionMask: string;
  /** Absent when the model computes positions itself. */
  readonly positionIds?: string;
  /** Merged decoders' switch between their first-step and cached graphs: fed `past > 0`. */
  readonly useCacheBranch?: string;
  readonly logits: string;
  readonly layers: readonly KvCacheLayer[];
  /** The dtype of every past input (float32, or float16/bfloat16 for half-precision exports). */
  readonly cacheDType: DType;
  /** The vocabulary size when the logits' last dim is static. */
  readonly vocab?: number;
  /** The dtype of every input by name (ids and masks may be int64 or int32). */
  readonly dtypes: Readonly<Record<string, DType>>;
}

const PAST = /^past_key_values\.(\d+)\.(key|value)$/;
const PRESENT = /^(?:present|present_key_values)\.(\d+)\.(key|value)$/;
const INT_INPUTS = ['int64', 'int32'];

/** The one error for a program or model that is not a KV-cache LM: every problem, and the layout expected. */
function notAKvCacheLm(what: string, problems: readonly string[]): InvalidArgumentError {
  return new InvalidArgumentError(
    `${what} is not a causal LM with a KV cache in the layout generate() takes: ${problems.join('; ')}. ` +
      'Expected inputs input_ids [batch, seq], attention_mask [batch, past + seq], optionally position_ids [batch, seq], ' +
      'and past_key_values.N.key / past_key_values.N.value [batch, heads, past, headDim] for each layer N; outputs logits [batch, seq, vocab] ' +
      'and present.N.key / present.N.value (the layout of Hugging Face Optimum exports "with past")',
    { details: { problems: [...problems] } },
  );
}

/**
 * The layout of a model or program whose inputs and outputs are `inputs` and `outputs`.
 * `what` names it in the error ("the program", a file name).
 *
 * @throws {InvalidArgumentError} `E_INVALID_ARGUMENT` listing every missing or misshapen input
 *   and output (`details.problems`).
 */
export function discoverLayout(inputs: readonly NamedIO[], outputs: readonly NamedIO[], what = 'the program'): KvCacheLayout {
  const problems: string[] = [];
  const byName = new Map(inputs.map((io) => [io.name, io]));
  const outByName = new Map(outputs.map((io) => [io.name, io]));
  const show = (io: NamedIO): string => `${io.name}: ${io.dtype}${formatShape(io.shape)}`;

  const need = (name: string, rank: number, dtypes: readonly string[], where: 'input' | 'output'): NamedIO | undefined => {
    const io = (where === 'input' ? byName : outByName).get(name);
    if (io === undefined) {
      problems.push(`no ${where} ${name}`);
      return undefined;
    }
    if (io.shape.length !== rank || !dtypes.includes(io.dtype)) {
      problems.push(`${where} ${show(io)} should be ${dtypes.join(' or ')} of rank ${rank}`);
      return undefined;
    }
    return io;
  };
  need('input_ids', 2, INT_INPUTS, 'input');
  need('attention_mask', 2, INT_INPUTS, 'input');
  const positions = byName.has('position_ids') ? need('position_ids', 2, INT_INPUTS, 'input') : undefined;
  const branch = byName.has('use_cache_branch') ? need('use_cache_branch', 1, ['bool'], 'input') : undefined;
  const logits = need('logits', 3, ['float32', 'float16', 'bfloat16'], 'output');

  // The caches, by layer number: every layer from 0 up needs its two past inputs and two present outputs.
  const pasts = new Map<number, { key?: NamedIO; value?: NamedIO }>();
  const presents = new Map<number, { key?: string; value?: string }>();
  const unknown: string[] = [];
  for (const io of inputs) {
    const m = PAST.exec(io.name);
    if (m !== null) {
      const entry = pasts.get(Number(m[1])) ?? {};
      entry[m[2] as 'key' | 'value'] = io;
      pasts.set(Number(m[1]), entry);
    } else if (!['input_ids', 'attention_mask', 'position_ids', 'use_cache_branch'].includes(io.name)) {
      unknown.push(show(io));
    }
  }
  for (const io of outputs) {
    const m = PRESENT.exec(io.name);
    if (m === null) continue;
    const entry = presents.get(Number(m[1])) ?? {};
    entry[m[2] as 'key' | 'value'] = io.name;
    presents.set(Number(m[1]), entry);
  }
  if (unknown.length > 0) problems.push(`input${unknown.length > 1 ? 's' : ''} ${unknown.join(', ')} (generate() feeds only the inputs of this layout)`);
  const count = Math.max(pasts.size === 0 ? 0 : Math.max(...pasts.keys()) + 1, presents.size === 0 ? 0 : Math.max(...presents.keys()) + 1);
  if (count === 0) problems.push('no past_key_values.N.key / .value inputs and no present.N.key / .value outputs (a model exported without its KV cache)');

  const layers: KvCacheLayer[] = [];
  let cacheDType: DType | undefined;
  for (let l = 0; l < count; l++) {
    const past = pasts.get(l) ?? {};
    const present = presents.get(l) ?? {};
    const missing = [
      ...(past.key === undefined ? [`input past_key_values.${l}.key`] : []),
      ...(past.value === undefined ? [`input past_key_values.${l}.value`] : []),
      ...(present.key === undefined ? [`output present.${l}.key`] : []),
      ...(present.value === undefined ? [`output present.${l}.value`] : []),
    ];
    if (missing.length > 0) {
      problems.push(`layer ${l} has no ${missing.join(', ')}`);
      continue;
    }
    const shapeProblem = (io: NamedIO): boolean => {
      const [, heads, , dim] = io.shape;
      const ok = io.shape.length === 4 && heads !== undefined && isStatic(heads) && dim !== undefined && isStatic(dim);
      if (!ok) problems.push(`input ${show(io)} should be [batch, heads, past, headDim] with static heads and headDim`);
      else if (!['float32', 'float16', 'bfloat16'].includes(io.dtype)) problems.push(`input ${show(io)} should be float32, float16 or bfloat16`);
      else if (cacheDType !== undefined && io.dtype !== cacheDType) problems.push(`input ${show(io)} has another dtype than the other caches (${cacheDType})`);
      else cacheDType = io.dtype;
      return !ok;
    };
    if (shapeProblem(past.key!) || shapeProblem(past.value!)) continue;
    const heads = past.key!.shape[1] as number;
    if (past.value!.shape[1] !== heads) problems.push(`inputs past_key_values.${l}.key and .value have different head counts`);
    layers.push({
      pastKey: past.key!.name,
      pastValue: past.value!.name,
      presentKey: present.key!,
      presentValue: present.value!,
      heads,
      keyDim: past.key!.shape[3] as number,
      valueDim: past.value!.shape[3] as number,
    });
  }
  if (problems.length > 0) throw notAKvCacheLm(what, problems);
  const vocab = logits!.shape[2]!;
  return {
    inputIds: 'input_ids',
    attentionMask: 'attention_mask',
    ...(positions === undefined ? {} : { positionIds: positions.name }),
    ...(branch === undefined ? {} : { useCacheBranch: branch.name }),
    logits: 'logits',
    layers,
    cacheDType: cacheDType!,
    ...(isStatic(vocab) ? { vocab } : {}),
    dtypes: Object.fromEntries(inputs.map((io) => [io.name, io.dtype])),
  };
}
