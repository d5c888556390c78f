/**
 * The memory plan of one instantiated network: every intermediate tensor gets a 256-byte
 * aligned offset in one arena, and two tensors share bytes only when their lifetimes do not
 * overlap. Lifetimes are step intervals [first, last] (the step that writes the tensor to
 * the last step that reads it). Network inputs and outputs are not here: they are bound as
 * buffers of their own, so the caller's tensors never alias the arena.
 *
 * In-place reuse: a request may name a tensor whose bytes it takes over (`reuse`), for a
 * layer that only reinterprets its input (identity, a reshape). The two become one block
 * whose lifetime is the union of theirs, when the donor's block is at least as large and still
 * live where the taker is defined; otherwise the hint is ignored. The donor need not die there:
 * a tensor is written once, by its producer, and a reinterpreting layer writes nothing, so a
 * view and its source can share bytes for as long as either is read.
 *
 * Placement is greedy by size (largest first, lowest offset that fits between the blocks
 * already placed whose lifetimes overlap), the strategy TFLite's arena planner uses.
 */
import { InternalError } from '../../../errors';

/** Every offset is a multiple of this (what cuBLASLt, cuDNN and vector loads want). */
export const ARENA_ALIGN = 256;

export const alignUp = (n: number, to = ARENA_ALIGN): number => Math.ceil(n / to) * to;

export interface MemoryRequest {
  /** The tensor id. */
  readonly id: number;
  readonly bytes: number;
  /** The step that writes it first. */
  readonly first: number;
  /** The step that reads it last (≥ first). */
  readonly last: number;
  /** A tensor whose bytes this one may take over (see the module comment). */
  readonly reuse?: number;
}

export interface MemoryPlan {
  /** Byte offset in the arena, by tensor id. */
  readonly offsets: ReadonlyMap<number, number>;
  /** Bytes the arena needs (a multiple of ARENA_ALIGN). */
  readonly arenaBytes: number;
  /** Tensor ids that took over another tensor's bytes, and whose. */
  readonly aliases: ReadonlyMap<number, number>;
}

interface Block {
  ids: number[];
  bytes: number;
  first: number;
  last: number;
  offset: number;
}

/** Plans the arena for `requests` (ids unique). */
export function planMemory(requests: readonly MemoryRequest[]): MemoryPlan {
  const blockOf = new Map<number, Block>();
  const aliases = new Map<number, number>();
  const byId = new Map(requests.map((r) => [r.id, r]));
  if (byId.size !== requests.length) throw new InternalError('memory plan: a tensor is requested twice');
  // Definition order, so a donor's block exists before its taker asks for it.
  for (const r of [...requests].sort((a, b) => a.first - b.first || a.id - b.id)) {
    if (!(Number.isSafeInteger(r.bytes) && r.bytes >= 0 && Number.isInteger(r.first) && r.last >= r.first)) {
      throw new InternalError(`memory plan: tensor ${r.id} has a bad request ${JSON.stringify(r)}`);
    }
    const donor = r.reuse === undefined ? undefined : blockOf.get(r.reuse);
    if (donor !== undefined && donor.last >= r.first && donor.bytes >= r.bytes) {
      donor.ids.push(r.id);
      donor.last = Math.max(donor.last, r.last);
      blockOf.set(r.id, donor);
      aliases.set(r.id, r.reuse!);
      continue;
    }
    const block: Block = { ids: [r.id], bytes: r.bytes, first: r.first, last: r.last, offset: -1 };
    blockOf.set(r.id, block);
  }
  const blocks = [...new Set(blockOf.values())].sort((a, b) => b.bytes - a.bytes || a.first - b.first || a.ids[0]! - b.ids[0]!);
  const placed: Block[] = [];
  let arenaBytes = 0;
  for (const block of blocks) {
    const size = alignUp(Math.max(block.bytes, 1));
    const busy = placed.filter((p) => p.first <= block.last && block.first <= p.last).sort((a, b) => a.offset - b.offset);
    let offset = 0;
    for (const p of busy) {
      if (offset + size <= p.offset) break;
      offset = Math.max(offset, p.offset + alignUp(Math.max(p.bytes, 1)));
    }
    block.offset = offset;
    placed.push(block);
    arenaBytes = Math.max(arenaBytes, offset + size);
  }
  const offsets = new Map<number, number>();
  for (const [id, block] of blockOf) offsets.set(id, block.offset);
  return { offsets, arenaBytes, aliases };
}
