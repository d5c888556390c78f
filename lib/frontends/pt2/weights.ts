/**
 * Weights and constants of a .pt2 archive: `data/weights/<model>_weights_config.json` (and
 * `data/constants/<model>_constants_config.json`) map each parameter/buffer/constant name to a
 * raw little-endian file holding the tensor's whole storage, with the tensor's dtype, sizes,
 * strides and storage offset. Each becomes a contiguous Tensor.
 *
 * A tensor may need more bytes than its storage holds: a fake (meta) storage saved without
 * data loads as zeros, zero or overlapping strides repeat elements, and several weights may
 * share one storage. Those made-up bytes cost memory that the file does not pay for, so they
 * are bounded for the whole load by a {@link WeightBudget}, not only per tensor.
 */
import { BadModelError, InvalidArgumentError, ResourceLimitError, UnsupportedOpError } from '../../errors';
import { dtypeInfo } from '../../ir/dtype';
import { Tensor } from '../../ir/tensor';
import { checkedTensorSize } from '../tensor-size';
import type { Pt2Archive } from './archive';
import { dtypeFromScalarType, isObject, type PayloadMetaJson, type SymIntJson, type TensorMetaJson } from './serde';

/**
 * Default of `maxUnbackedWeightBytes` (loadPt2's option): the most bytes one load may make up
 * beyond those the archive holds for its weights and constants, in all (64 MiB).
 */
export const DEFAULT_MAX_UNBACKED_WEIGHT_BYTES = 64 * 2 ** 20;

/**
 * The made-up bytes of one archive's load. Each storage entry's bytes back the tensors read
 * from it once: the first tensors to read it claim its bytes, and whatever a tensor needs
 * beyond its share of unclaimed storage is made up (zeros of a fake storage, repeats of zero
 * or overlapping strides, a second copy of a storage that two weights share). The sum is
 * checked before each tensor is allocated, against the limit plus the bytes of the storages
 * read so far: tied weights (an embedding and an output projection on one storage, as GPT-2
 * saves them) copy what the file holds, at most once more, while a few bytes of file still
 * cannot ask for more than the limit.
 */
export class WeightBudget {
  /** Made-up bytes so far. */
  private madeUp = 0;
  /** Bytes of the storage entries read so far. */
  private stored = 0;
  /** Bytes of each storage entry (by relative path) that no tensor has claimed yet. */
  private readonly unclaimed = new Map<string, number>();

  /** `maxUnbackedBytes` must be a non-negative integer (InvalidArgumentError naming the option otherwise). */
  constructor(readonly maxUnbackedBytes: number = DEFAULT_MAX_UNBACKED_WEIGHT_BYTES) {
    if (!Number.isSafeInteger(maxUnbackedBytes) || maxUnbackedBytes < 0) {
      throw new InvalidArgumentError(`loadPt2 options: maxUnbackedWeightBytes must be a non-negative integer (bytes), not ${String(maxUnbackedBytes)}`);
    }
  }

  /**
   * Charges a tensor of `needed` bytes read from `storage` (`held` bytes); returns the load's
   * made-up total with it, or calls `over` with that total when it passes the limit (nothing
   * is charged then).
   */
  charge(storage: string, held: number, needed: number, over: (total: number) => never): number {
    const seen = this.unclaimed.get(storage);
    const free = seen ?? held;
    const stored = this.stored + (seen === undefined ? held : 0);
    const backed = Math.min(needed, free);
    const total = this.madeUp + (needed - backed);
    if (total > this.maxUnbackedBytes + stored) over(total);
    this.unclaimed.set(storage, free - backed);
    this.stored = stored;
    this.madeUp = total;
    return total;
  }
}

export interface PayloadConfig {
  /** The config entry, for messages. */
  readonly entry: string;
  /** The folder of its files, relative to the archive root (`data/weights/`). */
  readonly dir: string;
  readonly config: ReadonlyMap<string, PayloadMetaJson>;
  /** The config entry is absent from the archive (fine until something needs it). */
  readonly missing?: boolean;
}

/** Reads a payload config; a missing or malformed one is E_BAD_MODEL naming it (absent constants config: empty). */
export function readPayloadConfig(archive: Pt2Archive, dir: string, file: string, what: string, required: boolean): PayloadConfig {
  const relative = dir + file;
  const entry = archive.entryName(relative);
  if (!archive.has(relative) && !required) return { entry, dir, config: new Map(), missing: true };
  const json = archive.json(relative, what);
  const config = isObject(json) ? json.config : undefined;
  if (!isObject(config)) {
    throw new BadModelError(`${archive.source}: entry "${entry}" (${what}) has no "config" object`, { details: { file: archive.source, entry } });
  }
  const map = new Map<string, PayloadMetaJson>();
  for (const [name, meta] of Object.entries(config)) {
    if (!isObject(meta) || typeof meta.path_name !== 'string') {
      throw new BadModelError(`${archive.source}: entry "${entry}": "${name}" has no path_name`, { details: { file: archive.source, entry } });
    }
    map.set(name, meta as unknown as PayloadMetaJson);
  }
  return { entry, dir, config: map };
}

function staticInts(list: SymIntJson[] | SymIntJson | undefined, label: string, fail: (m: string) => never): number[] {
  const items = list === undefined ? [] : Array.isArray(list) ? list : [list];
  return items.map((s, i) => {
    if (!isObject(s as never) || typeof s.as_int !== 'number') fail(`${label}[${i}] is not a static integer`);
    return s.as_int!;
  });
}

/**
 * Copies the strided view of `src` (sizes, strides in elements, from element `offset`) into
 * `out`, contiguous. Dims of size 1 are dropped; trailing dims laid out contiguously in the
 * storage are copied as one run; a zero-stride dim copies its first slice once and repeats it
 * by doubling copies, so an expanded tensor costs a few large copies, not one per element.
 */
function gather(src: Uint8Array, out: Uint8Array, itemBytes: number, sizes: readonly number[], strides: readonly number[], offset: number): void {
  const dims: number[] = [];
  const st: number[] = [];
  sizes.forEach((d, i) => {
    if (d !== 1) {
      dims.push(d);
      st.push(strides[i]!);
    }
  });
  // The trailing dims whose strides are those of a contiguous layout form one run.
  let run = 1;
  let k = dims.length;
  while (k > 0 && st[k - 1] === run) {
    run *= dims[k - 1]!;
    k--;
  }
  const runBytes = run * itemBytes;
  // Bytes of `out` one index of dim i spans.
  const block: number[] = new Array<number>(k);
  for (let i = k - 1, b = runBytes; i >= 0; i--) {
    block[i] = b;
    b *= dims[i]!;
  }
  const fill = (dim: number, from: number, at: number): void => {
    if (dim === k) {
      out.set(src.subarray(from * itemBytes, from * itemBytes + runBytes), at);
      return;
    }
    const n = dims[dim]!;
    const s = st[dim]!;
    const b = block[dim]!;
    if (s === 0) {
      fill(dim + 1, from, at);
      for (let done = 1; done < n; ) {
        const c = Math.min(done, n - done);
        out.copyWithin(at + done * b, at, at + c * b);
        done += c;
      }
    } else if (dim === k - 1 && runBytes === itemBytes) {
      // The innermost strided dim, element by element.
      for (let j = 0; j < n; j++) {
        const f = (from + j * s) * itemBytes;
        const t = at + j * itemBytes;
        for (let q = 0; q < itemBytes; q++) out[t + q] = src[f + q]!;
      }
    } else {
      for (let j = 0; j < n; j++) fill(dim + 1, from + j * s, at + j * b);
    }
  };
  fill(0, offset, 0);
}

/**
 * The tensor `name` of `payload`, made contiguous. Pickled payloads (`use_pickle: true`: tensor
 * subclasses, custom objects), unknown dtypes, missing files and files too short for the
 * sizes/strides/offset are errors naming the archive entry. `budget` is the load's: a tensor
 * that alone makes up more than its limit is E_BAD_MODEL, one that takes the load's total
 * past it E_RESOURCE_LIMIT, both before the tensor is allocated.
 */
export function loadPayloadTensor(archive: Pt2Archive, payload: PayloadConfig, name: string, what: string, budget: WeightBudget = new WeightBudget()): Tensor {
  const meta = payload.config.get(name);
  if (meta === undefined && payload.missing === true) {
    throw new BadModelError(`${archive.source}: the archive has no entry "${payload.entry}", which lists ${what} "${name}"`, {
      details: { file: archive.source, entry: payload.entry, name },
    });
  }
  if (meta === undefined) {
    throw new BadModelError(`${archive.source}: ${what} "${name}" is not listed in "${payload.entry}"`, {
      details: { file: archive.source, entry: payload.entry, name },
    });
  }
  const relative = payload.dir + meta.path_name;
  const entry = archive.entryName(relative);
  const fail = (message: string): never => {
    throw new BadModelError(`${archive.source}: ${what} "${name}" (entry "${entry}"): ${message}`, { details: { file: archive.source, entry, name } });
  };
  if (meta.use_pickle === true) {
    throw new BadModelError(
      `${archive.source}: ${what} "${name}" (entry "${entry}", listed in "${payload.entry}") is pickled (use_pickle: true), ` +
        'which tensorrt-node does not read: tensor subclasses and custom objects cannot be imported. Convert it to a plain tensor before exporting',
      { details: { file: archive.source, entry, name } },
    );
  }
  const tm = meta.tensor_meta as TensorMetaJson | null | undefined;
  if (!isObject(tm as never)) return fail(`"${payload.entry}" gives no tensor_meta`);
  const t = tm!;
  let dtype;
  try {
    dtype = dtypeFromScalarType(t.dtype, `${what} "${name}"`);
  } catch (e) {
    throw new UnsupportedOpError(`${archive.source}: ${(e as Error).message} (entry "${entry}")`, { details: { file: archive.source, entry, name } });
  }
  const sizes = staticInts(t.sizes, 'sizes', fail);
  const strides = t.strides === undefined ? null : staticInts(t.strides, 'strides', fail);
  const offset = t.storage_offset === undefined ? 0 : staticInts(t.storage_offset, 'storage_offset', fail)[0]!;
  // Everything is checked against the bytes present before the tensor is allocated.
  const { count, bytes: needed } = checkedTensorSize(sizes, dtype, (reason) => fail(`the tensor ${reason}`));
  if (strides !== null && strides.length !== sizes.length) fail(`${strides.length} strides for ${sizes.length} sizes`);

  const info = dtypeInfo(dtype);
  if (count === 0) {
    // Nothing to read: the entry must exist, but is not inflated.
    archive.require(relative, `${what} "${name}"`);
    return new Tensor(dtype, sizes);
  }
  const bytes = archive.bytes(relative, `${what} "${name}"`);
  // A fake (meta) storage or zero strides make a tensor bigger than its bytes; bounded, so
  // that a few bytes of archive cannot ask for gigabytes.
  const limit = budget.maxUnbackedBytes;
  if (needed > bytes.length + limit) {
    fail(
      `needs ${needed} bytes for sizes [${sizes.join(', ')}] but the archive holds ${bytes.length}; ` +
        `tensorrt-node makes up at most ${limit} bytes (zeros of a fake storage, repeats of zero strides; loadPt2's maxUnbackedWeightBytes)`,
    );
  }
  const charge = (): void => {
    budget.charge(relative, bytes.length, needed, (total) => {
      throw new ResourceLimitError(
        `${archive.source}: ${what} "${name}" (entry "${entry}", ${dtype}[${sizes.join(', ')}], ${needed} bytes from ${bytes.length} stored) ` +
          `would bring the bytes made up for this archive's weights to ${total}, more than maxUnbackedWeightBytes (${limit}) plus the bytes of the storages read. ` +
          'Zeros of fake storages, repeats of zero or overlapping strides and further copies of a shared storage count, over the whole load; ' +
          "raise loadPt2's maxUnbackedWeightBytes option to load it",
        { details: { file: archive.source, entry, name, bytes: total, maxUnbackedWeightBytes: limit } },
      );
    });
  };
  if (bytes.length === 0) {
    charge();
    return new Tensor(dtype, sizes); // a fake (meta) tensor was saved: torch loads zeros too
  }
  if (bytes.length % info.itemBytes !== 0) {
    fail(`${bytes.length} bytes is not a whole number of ${dtype} elements (${info.itemBytes} bytes each)`);
  }
  const contiguous: number[] = [];
  for (let i = sizes.length - 1, s = 1; i >= 0; i--) {
    contiguous[i] = s;
    s *= sizes[i]!;
  }
  const st = strides ?? contiguous;
  if (st.some((s) => !Number.isSafeInteger(s) || s < 0) || !Number.isSafeInteger(offset) || offset < 0) {
    fail(`strides [${st.join(', ')}] and storage offset ${offset} must be non-negative integers below 2^53`);
  }
  // The last element the tensor reads, in elements from the storage start (may be inexact
  // past 2^53, but then it is far beyond any storage present).
  const extent = offset + sizes.reduce((acc, d, i) => acc + (d - 1) * st[i]!, 0) + 1;
  const available = bytes.length / info.itemBytes;
  if (available < extent) {
    fail(
      `holds ${bytes.length} bytes, but a ${dtype} tensor of sizes [${sizes.join(', ')}]` +
        `${strides === null ? '' : `, strides [${st.join(', ')}]`}${offset ? `, storage offset ${offset}` : ''} needs ${extent * info.itemBytes}`,
    );
  }
  charge();
  const result = new Tensor(dtype, sizes);
  // Copy into an aligned buffer of the storage type, then gather if strided.
  const isContiguous = sizes.every((d, i) => d === 1 || st[i] === contiguous[i]);
  const out = new Uint8Array(result.data.buffer, result.data.byteOffset, result.data.byteLength);
  if (isContiguous) {
    out.set(bytes.subarray(offset * info.itemBytes, (offset + count) * info.itemBytes));
    return result;
  }
  gather(bytes, out, info.itemBytes, sizes, st, offset);
  return result;
}
