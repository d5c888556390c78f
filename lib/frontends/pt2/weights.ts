/**
 * Weights and constants of a .pt2 archive: `data/weights/<model>_weights_config.json` (and
 * `data/constants/<model>_constants_config.json`) map each parameter/buffer/constant name to a
 * raw little-endian file holding the tensor's whole storage, with the tensor's dtype, sizes,
 * strides and storage offset. Each becomes a contiguous Tensor.
 */
import { BadModelError, UnsupportedOpError } from '../../errors';
import { dtypeInfo } from '../../ir/dtype';
import { boxOffsets } from '../../kernels/access';
import { Tensor } from '../../ir/tensor';
import { checkedTensorSize } from '../tensor-size';
import type { Pt2Archive } from './archive';
import { dtypeFromScalarType, isObject, type PayloadMetaJson, type SymIntJson, type TensorMetaJson } from './serde';

/**
 * Most bytes a loaded tensor may have beyond those its payload holds: the zeros of a fake
 * (meta) storage saved without data, or the repeats of zero strides.
 */
export const MAX_UNBACKED_BYTES = 64 * 2 ** 20;

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
 * The tensor `name` of `payload`, made contiguous. Pickled payloads (`use_pickle: true`: tensor
 * subclasses, custom objects), unknown dtypes, missing files and files too short for the
 * sizes/strides/offset are errors naming the archive entry.
 */
export function loadPayloadTensor(archive: Pt2Archive, payload: PayloadConfig, name: string, what: string): Tensor {
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
  const bytes = archive.bytes(relative, `${what} "${name}"`);
  if (count === 0) return new Tensor(dtype, sizes);
  // A fake (meta) storage or zero strides make a tensor bigger than its bytes; bounded, so
  // that a few bytes of archive cannot ask for gigabytes.
  if (needed > bytes.length + MAX_UNBACKED_BYTES) {
    fail(
      `needs ${needed} bytes for sizes [${sizes.join(', ')}] but the archive holds ${bytes.length}; ` +
        `tensorrt-node makes up at most ${MAX_UNBACKED_BYTES} bytes (zeros of a fake storage, repeats of zero strides)`,
    );
  }
  if (bytes.length === 0) return new Tensor(dtype, sizes); // a fake (meta) tensor was saved: torch loads zeros too
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
  const result = new Tensor(dtype, sizes);
  // Copy into an aligned buffer of the storage type, then gather if strided.
  const isContiguous = sizes.every((d, i) => d === 1 || st[i] === contiguous[i]);
  const out = new Uint8Array(result.data.buffer, result.data.byteOffset, result.data.byteLength);
  if (isContiguous) {
    out.set(bytes.subarray(offset * info.itemBytes, (offset + count) * info.itemBytes));
    return result;
  }
  const offsets = boxOffsets(sizes, st);
  for (let n = 0; n < count; n++) {
    const src = offset + offsets[n]!;
    out.set(bytes.subarray(src * info.itemBytes, (src + 1) * info.itemBytes), n * info.itemBytes);
  }
  return result;
}
