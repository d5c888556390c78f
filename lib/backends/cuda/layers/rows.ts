/**
 * Row kernels: for each "outer" index (the kept axes) walk the "inner" axes (reduced,
 * normalized, scanned or ranked). IReduceLayer, ISoftMaxLayer, INormalizationLayer,
 * ICumulativeLayer and ITopKLayer are this shape. Three ways to run a row:
 * - one thread per row walks it in order (short rows, or many rows whose inner axes are
 *   strided, where neighbouring threads then read neighbouring elements);
 * - one block per row ("cooperative"): each thread strides over the row, then warp shuffles
 *   and shared memory combine the threads' partial results. A few long rows (LayerNorm over
 *   768 channels, softmax over 128 keys) would otherwise leave most of the GPU idle;
 * - one warp per row, the row held in registers ("warp"; softmax and normalization only):
 *   picked for a row of one contiguous axis of at most 1024 elements. Each lane holds E
 *   elements, in chunks of V contiguous ones where V divides the row ({@link warpForm}; else
 *   one at a time, 32 apart), loaded once and coalesced; shuffle butterflies combine the
 *   lanes, with no shared memory and no barrier. On the H200 (2026-12-02) this ran 2.3-2.9x
 *   faster than the cooperative form (bench/gpu/kernel-lab: BERT's LayerNorm 16.9 → 7.2 µs,
 *   softmax 22.1 → 7.7): the cooperative kernel reads the row two or three times and
 *   waits at block barriers.
 * All are deterministic: the order of every combination is fixed by the row length and the
 * block size, the block size by the row length alone, and in the warp form by E (the row
 * length's bucket) alone. The forms are distinct kernel keys (`….block`, `….warp<E>`); the
 * block size is blockDim, not source text. A profile whose contiguous rows cross a threshold
 * or a bucket lowers to the forms of its min and max shapes, so build() compiles those; a
 * form picked only between them (a middle bucket, the row-count rule) is compiled when first
 * run.
 */
import type { KernelArg } from '../../../gpu/plan';
import { dims8, i32, i64, kernelSource, launch } from './kernel';
import { coalesce, mapOpParams, renamedParam, type MapSpec } from './map';
import { DTYPES, type DTypeCode } from './prelude';
import type { KernelLaunch, KernelSource } from './types';

/** A box split into outer and inner axes, and each tensor's strides over both. */
export interface RowSplit {
  outerDims: number[];
  innerDims: number[];
  /** Per tensor: [outer strides, inner strides]. */
  strides: Array<[number[], number[]]>;
}

/** Splits `dims` by `inner` axes; `tensorStrides[t]` are tensor t's strides over `dims`. */
export function splitRows(dims: readonly number[], inner: readonly number[], tensorStrides: ReadonlyArray<readonly number[]>): RowSplit {
  const isInner = (d: number): boolean => inner.includes(d);
  const outerAxes = dims.map((_, d) => d).filter((d) => !isInner(d));
  const innerAxes = [...inner].sort((a, b) => a - b);
  return {
    outerDims: outerAxes.map((d) => dims[d]!),
    innerDims: innerAxes.map((d) => dims[d]!),
    strides: tensorStrides.map((s) => [outerAxes.map((d) => s[d]!), innerAxes.map((d) => s[d]!)]),
  };
}

/** The kernel parameters of a split over `tensors` tensors (named by `names`). */
export const rowParams = (names: readonly string[]): string =>
  ['i64 outer', 'i32 orank', 'Dims8 odims', ...names.map((n) => `Dims8 o_${n}`), 'i64 inner', 'i32 irank', 'Dims8 idims', ...names.map((n) => `Dims8 i_${n}`)].join(', ');

/**
 * The arguments matching {@link rowParams}. The outer and the inner dims are each coalesced
 * over every tensor's strides (./map.ts): the same order in fewer dims, so each row's
 * offsets take fewer divisions (a softmax over dense rows walks one outer dim), and a row over
 * several axes that step through memory as one (a global pool's height and width in
 * channels-last) is walked as one axis, one multiply an element.
 */
export function rowArgs(split: RowSplit): KernelArg[] {
  const volume = (s: number[]): number => s.reduce((a, d) => a * d, 1);
  const outer = coalesce(split.outerDims, split.strides.map(([o]) => o));
  const inner = coalesce(split.innerDims, split.strides.map(([, i]) => i));
  return [
    i64(volume(split.outerDims)),
    i32(outer.dims.length),
    dims8(outer.dims),
    ...outer.strides.map((o) => dims8(o)),
    i64(volume(split.innerDims)),
    i32(inner.dims.length),
    dims8(inner.dims),
    ...inner.strides.map((i) => dims8(i)),
  ];
}

/** C: base offset of tensor `name` for outer index `o`. */
export const outerAt = (name: string): string => `strided(o, orank, odims, o_${name})`;
/** C: `const i64 off_<name>`, the row's offset in each tensor of `names`, through one strided_n (the outer index divides once, not once a tensor). */
export function outerOffsets(names: readonly string[]): string {
  return [
    `const Dims8* const ost[${names.length}] = {${names.map((n) => `&o_${n}`).join(', ')}};`,
    `i64 oo[${names.length}];`,
    `strided_n<${names.length}>(o, orank, odims, ost, oo);`,
    ...names.map((n, k) => `const i64 off_${n} = oo[${k}];`),
  ].join('\n    ');
}
/** C: offset of tensor `name` for inner index `j` (one multiply for a single inner axis). */
export const innerAt = (name: string, j = 'j'): string => `row_at(${j}, irank, idims, i_${name})`;

/** Rows at least this long run cooperatively (one block per row). */
export const COOPERATIVE_MIN_INNER = 64;
/** Strided rows run cooperatively only when there are fewer of them than this (else one thread per row reads coalesced). */
export const COOPERATIVE_MAX_STRIDED_ROWS = 16384;
/** The most blocks a cooperative launch asks for; each block loops over rows beyond it. */
const MAX_ROW_BLOCKS = 1 << 16;

/**
 * Whether the rows of `split` run one block per row. `contiguous`: some inner axis of the
 * tensor read has stride 1, so a block's threads read neighbouring elements.
 */
export function cooperative(split: RowSplit): boolean {
  const volume = (s: number[]): number => s.reduce((a, d) => a * d, 1);
  const contiguous = split.strides[0]![1].includes(1);
  return volume(split.innerDims) >= COOPERATIVE_MIN_INNER && (contiguous || volume(split.outerDims) < COOPERATIVE_MAX_STRIDED_ROWS);
}

/**
 * Threads per block for a cooperative row of `inner` elements: about four elements each, a
 * multiple of the warp, 64 to 512. At most 512 so that any register count the compiler picks
 * (up to 128 a thread) still fits a block on the SM; 1024 would need 64 or fewer.
 */
export function cooperativeThreads(inner: number): number {
  const want = Math.ceil(inner / 4);
  let t = 64;
  while (t < want && t < 512) t *= 2;
  return t;
}

/** A row-wide combination: `combine` (C, of `a` and `b`) with `identity` as its neutral value. */
export interface RowCombine {
  readonly name: string;
  readonly type: 'float' | 'i64';
  readonly combine: string;
  readonly identity: string;
}

/** The C building blocks a row kernel is written in, for one of the two ways to run it. */
export interface RowCode {
  readonly cooperative: boolean;
  /** The loop over the rows this thread (or block) handles, with `i64 o` the outer index. */
  rows(body: string): string;
  /** The loop over the inner indices `i64 j` this thread handles. */
  each(body: string): string;
  /** A statement making `v` hold `c` combined over the whole row (every thread gets the result). */
  all(c: RowCombine, v: string): string;
  /** A statement that one thread per row runs. */
  once(statement: string): string;
}

const ROW_AT = `
#ifndef TRN_ROW_AT
#define TRN_ROW_AT
__device__ __forceinline__ i64 row_at(i64 j, int rank, const Dims8& dims, const Dims8& st) { return rank == 1 ? j * st.v[0] : strided(j, rank, dims, st); }
#endif`;

/**
 * The block-wide combination `${entry}_${c.name}(v, red)`: a butterfly of shuffles within each
 * warp, the warps' results through shared memory into warp 0, a butterfly there, and the
 * result back through shared memory. The barrier before the last read also keeps a following
 * combination from overwriting `red` while a slow warp still reads it. blockDim.x is a
 * multiple of 32, at most 1024 (32 warps).
 */
function blockCombine(entry: string, c: RowCombine): string {
  const fn = `${entry}_${c.name}`;
  return `
__device__ __forceinline__ ${c.type} ${fn}_op(${c.type} a, ${c.type} b) { return ${c.combine}; }
__device__ ${c.type} ${fn}(${c.type} v, ${c.type}* red) {
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  for (int k = 16; k > 0; k >>= 1) v = ${fn}_op(v, __shfl_xor_sync(0xffffffffu, v, k));
  if (lane == 0) red[warp] = v;
  __syncthreads();
  if (warp == 0) {
    v = lane < (int)(blockDim.x >> 5) ? red[lane] : ${c.identity};
    for (int k = 16; k > 0; k >>= 1) v = ${fn}_op(v, __shfl_xor_sync(0xffffffffu, v, k));
    if (lane == 0) red[32] = v;
  }
  __syncthreads();
  return red[32];
}`;
}

function rowCode(entry: string, coop: boolean, combines: readonly RowCombine[]): RowCode {
  if (!coop) {
    return {
      cooperative: false,
      rows: (body) => `GRID_STRIDE(o, outer) {${body}\n  }`,
      each: (body) => `for (i64 j = 0; j < inner; ++j) {${body}}`,
      all: () => '',
      once: (statement) => statement,
    };
  }
  const types = [...new Set(combines.map((c) => c.type))];
  return {
    cooperative: true,
    rows: (body) => `${types.map((t) => `__shared__ ${t} red_${t}[33];`).join(' ')}
  for (i64 o = blockIdx.x; o < outer; o += gridDim.x) {${body}\n  }`,
    each: (body) => `for (i64 j = threadIdx.x; j < inner; j += blockDim.x) {${body}}`,
    all: (c, v) => `${v} = ${entry}_${c.name}(${v}, red_${c.type});`,
    once: (statement) => `if (threadIdx.x == 0) ${statement}`,
  };
}

/**
 * A row kernel in the chosen form: `key` gains `.block` when cooperative; `body` writes the
 * `extern "C"` kernel in terms of {@link RowCode}, combining only through `combines`.
 */
export function rowKernel(key: string, coop: boolean, combines: readonly RowCombine[], body: (entry: string, code: RowCode) => string): KernelSource {
  return kernelSource(coop ? `${key}.block` : key, (entry) => {
    const helpers = coop ? combines.map((c) => blockCombine(entry, c)).join('\n') : '';
    return `${ROW_AT}\n${helpers}\n${body(entry, rowCode(entry, coop, combines))}`;
  });
}

/** The elements a lane may hold in the warp form (E, a compile-time constant: one key each). */
export const WARP_BUCKETS = [1, 2, 4, 8, 16, 32, 64] as const;
/** E above this only in chunks of at least {@link WIDE_MIN_VECTOR} (64 single loads and their offsets spill). */
const WIDE_ELEMENTS = 32;
const WIDE_MIN_VECTOR = 4;
/** Rows per block of the warp form (256 threads); fewer rows than {@link WARP_SPREAD_ROWS} take 4 a block, to spread over more SMs. */
const WARP_ROWS_PER_BLOCK = 8;
const WARP_SPREAD_ROWS = 1024;

/**
 * E, the elements per lane of the warp form for `split`, or 0 where that form does not apply:
 * the row is one axis, contiguous in the tensor read (and so in the output, written at the same
 * offsets), and at most 32·64 elements (longer rows would spill the registers).
 */
export function warpElements(split: RowSplit): number {
  if (split.innerDims.length !== 1) return 0;
  const inner = split.innerDims[0]!;
  if (split.strides[0]![1][0] !== 1 || inner > 32 * WARP_BUCKETS.at(-1)!) return 0;
  return WARP_BUCKETS.find((e) => 32 * e >= inner)!;
}

/** The warp form of a row kernel: E elements a lane, read and written V contiguous at a time (V = 1: one at a time, 32 apart). */
export interface WarpForm {
  readonly elements: number;
  readonly vector: number;
  /**
   * Every slot of every lane inside the row (32·E = row: Llama's 2048 and 512, BERT's 768 and
   * 128): the kernel tests no chunk (`.full` in its key). In the kernel lab (H200, 2026-12-03)
   * dropping the per-chunk test took Llama's RMSNorm from 6.0 to 5.3 µs.
   */
  readonly full: boolean;
}

/**
 * The warp form for rows of `split` in a `bytes`-wide storage type whose tensors start at byte
 * `offsets` in their buffers (the row's input and output), or null where it does not apply
 * ({@link warpElements}). Each lane takes chunks of V contiguous elements (one load or store of
 * up to 16 bytes each; chunk c of a lane holds elements (32c + lane)·V …): the largest V of
 * 16 / bytes … 2 that divides the row and every row start, leaves no lane idle (32·V ≤ row) and
 * keeps the tensors aligned; then E = V·⌈row / 32V⌉ (LayerNorm over 768 in fp16: V = 8, E = 24).
 * In the kernel lab on the H200 hand-written kernels of this shape ran about twice as fast as
 * one element at a time. Otherwise V = 1 and E is the bucket of {@link warpElements}.
 */
export function warpForm(split: RowSplit, bytes: number, offsets: readonly number[]): WarpForm | null {
  const e = warpElements(split);
  if (e === 0) return null;
  const inner = split.innerDims[0]!;
  for (let vector = Math.floor(16 / bytes); vector >= 2; vector /= 2) {
    const fits = inner % vector === 0 && 32 * vector <= inner;
    const rowStarts = split.strides[0]![0].every((st, d) => split.outerDims[d] === 1 || st % vector === 0);
    if (fits && rowStarts && offsets.every((o) => o % (vector * bytes) === 0)) {
      const elements = vector * Math.ceil(inner / (32 * vector));
      return elements > WIDE_ELEMENTS && vector < WIDE_MIN_VECTOR ? null : { elements, vector, full: 32 * elements === inner };
    }
  }
  return e > WIDE_ELEMENTS ? null : { elements: e, vector: 1, full: 32 * e === inner };
}

/**
 * What a row kernel computes its input from (a row prologue, ./prologue.ts): a map spec,
 * and per spec input whether it walks the row (inner stride 1) or holds one value per row (0).
 */
export interface RowPrologue {
  readonly spec: MapSpec;
  readonly walks: readonly boolean[];
  /** Whether the kernel also writes the producer's output (`px`, over the input's own strides): later layers read it. */
  readonly stores?: boolean;
}

/** C, inside the row loop: the prologue's per-element function, `producer`. */
export function prologueLambda(p: RowPrologue): string {
  return `auto producer = [&](${mapOpParams(p.spec)}) -> ${DTYPES[p.spec.output].compute} {
${p.spec.body}
    };`;
}

/** C: the producer's value at element `args` of its operands in its output's storage dtype (the bits a store would write). */
export function prologueStored(p: RowPrologue, args: readonly string[]): string {
  const extra = (p.spec.extra ?? []).map((d) => renamedParam(d, 'p_').name);
  return DTYPES[p.spec.output].store(`producer(${[...args, ...extra].join(', ')})`);
}

/** C: the producer's value at element `args` of its operands, rounded to its output's storage dtype and back (as a store and a load would). */
export function prologueCall(p: RowPrologue, args: readonly string[]): string {
  return DTYPES[p.spec.output].load(prologueStored(p, args));
}

/** The C building blocks of a warp-form row kernel; each lane's slots are `v[k]`, k < E. */
export interface WarpCode {
  /** Elements per lane (a compile-time constant of the source). */
  readonly elements: number;
  /** Elements per chunk: slot k = c·V + t holds element (32c + lane)·V + t (`c` and `t` are loop constants in {@link indexed} and {@link store}). */
  readonly vector: number;
  /** The loop over the rows this warp handles, with `i64 o` the outer index and `int lane`. */
  rows(body: string): string;
  /** A loop over this lane's slots `int k` (unrolled). */
  slots(body: string): string;
  /** {@link slots} with `int j`, slot k's inner index, and `bool inside`, whether j < inner (else the slot holds an identity and is never stored). */
  indexed(body: string): string;
  /** A loop over this lane's chunks `int c` (unrolled), with `int j0`, the chunk's first inner index, and `bool inside`. */
  chunks(body: string): string;
  /** A statement making `v` hold `c` combined over the warp (every lane gets the result). */
  all(c: RowCombine, v: string): string;
  /** Fills every slot `v[k]` from the row at `row` (storage `t`, converted by `load`), `identity` where the slot is outside the row. */
  load(t: DTypeCode, row: string, identity: string): string;
  /** Writes `value` (C in `k` and `j`, converted by `t.store`) to every slot inside the row at `row`. */
  store(t: DTypeCode, row: string, value: string): string;
  /**
   * {@link load} of a row computed by `p` from its operands' rows (`pr<n>`, see prologueRows):
   * each slot is the producer's value rounded to its output's storage dtype and back, as a store
   * and a load between two kernels would round it; `identity` where the slot is outside the row.
   * A stored prologue also writes those rounded values to the row at `px + base`.
   */
  produce(p: RowPrologue, identity: string): string;
}

/** The butterfly `${entry}_${c.name}(v)` over the 32 lanes: a fixed order, the same in every lane. */
function warpCombine(entry: string, c: RowCombine): string {
  const fn = `${entry}_${c.name}`;
  return `
__device__ __forceinline__ ${c.type} ${fn}_op(${c.type} a, ${c.type} b) { return ${c.combine}; }
__device__ __forceinline__ ${c.type} ${fn}(${c.type} v) {
#pragma unroll
  for (int k = 16; k > 0; k >>= 1) v = ${fn}_op(v, __shfl_xor_sync(0xffffffffu, v, k));
  return v;
}`;
}

/**
 * A warp-form row kernel: `key` gains `.warp<E>` (`.warp<E>v<V>` when chunks are V wide, then
 * `.full` when every chunk is inside the row). A
 * warp's lanes all take the same rows, so every lane reaches every shuffle.
 */
export function warpRowKernel(key: string, form: WarpForm, combines: readonly RowCombine[], body: (entry: string, code: WarpCode) => string): KernelSource {
  const { elements: E, vector: V, full } = form;
  const chunks = E / V;
  // Slot k = c·V + t of chunk c holds element j = (32c + lane)·V + t; a chunk is inside the
  // row or not as a whole (V divides the row). j stays in 32 bits (a row holds at most 2048):
  // with a row pointer each slot's address is the lane's plus a constant. 64-bit offsets per
  // slot took 125 registers a thread at E = 32 (a quarter occupancy) and ran no faster than
  // the block form on the H200.
  const eachChunk = (b: string): string => `
#pragma unroll
    for (int c = 0; c < ${chunks}; ++c) {
      const int j0 = (c * 32 + lane) * ${V};
      const bool inside = ${full ? 'true' : 'j0 < (int)inner'};${b}
    }`;
  const eachSlot = (b: string): string => `
#pragma unroll
      for (int t = 0; t < ${V}; ++t) {
        const int k = c * ${V} + t, j = j0 + t;${b}
      }`;
  const vec = (t: DTypeCode): string => `VecN<${t.storage}, ${V}>`;
  return kernelSource(`${key}.warp${E}${V > 1 ? `v${V}` : ''}${full ? '.full' : ''}`, (entry) => {
    const code: WarpCode = {
      elements: E,
      vector: V,
      rows: (b) => `const int lane = threadIdx.x & 31;
  for (i64 o = ((i64)blockIdx.x * blockDim.x + threadIdx.x) >> 5; o < outer; o += ((i64)blockDim.x * gridDim.x) >> 5) {${b}\n  }`,
      slots: (b) => `
#pragma unroll
    for (int k = 0; k < ${E}; ++k) {${b}}`,
      indexed: (b) => eachChunk(eachSlot(b)),
      chunks: (b) => eachChunk(b),
      all: (c, v) => `${v} = ${entry}_${c.name}(${v});`,
      load: (t, row, identity) =>
        V > 1
          ? eachChunk(`
      ${vec(t)} q;
      if (inside) q = *reinterpret_cast<const ${vec(t)}*>(${row} + j0);${eachSlot(`
        v[k] = inside ? ${t.load('q.v[t]')} : ${identity};`)}`)
          : eachChunk(eachSlot(`
        v[k] = inside ? ${t.load(`${row}[j]`)} : ${identity};`)),
      store: (t, row, value) =>
        V > 1
          ? eachChunk(`
      if (inside) {
        ${vec(t)} q;${eachSlot(`
        q.v[t] = ${t.store(value)};`)}
        *reinterpret_cast<${vec(t)}*>(${row} + j0) = q;
      }`)
          : eachChunk(eachSlot(`
        if (inside) ${row}[j] = ${t.store(value)};`)),
      produce: (p, identity) => {
        const ins = p.spec.inputs.map((d) => DTYPES[d]);
        const mid = DTYPES[p.spec.output];
        const perRow = ins.map((c, n) => (p.walks[n] ? '' : `\n    const ${c.compute} s${n} = ${c.load(`pr${n}[0]`)};`)).join('');
        const args = (at: (n: number) => string): string[] => ins.map((c, n) => (p.walks[n] ? c.load(at(n)) : `s${n}`));
        const lambda = `\n    ${prologueLambda(p)}${perRow}${p.stores ? `\n    ${mid.storage}* xw = px + base;` : ''}`;
        if (V === 1) {
          if (!p.stores) return lambda + eachChunk(eachSlot(`\n        v[k] = inside ? ${prologueCall(p, args((n) => `pr${n}[j]`))} : ${identity};`));
          return lambda + eachChunk(eachSlot(`
        if (inside) {
          const ${mid.storage} w = ${prologueStored(p, args((n) => `pr${n}[j]`))};
          xw[j] = w;
          v[k] = ${mid.load('w')};
        } else v[k] = ${identity};`));
        }
        const chunks = ins.map((c, n) => (p.walks[n] ? `\n      ${vec(c)} q${n};\n      if (inside) q${n} = *reinterpret_cast<const ${vec(c)}*>(pr${n} + j0);` : '')).join('');
        if (!p.stores) return lambda + eachChunk(`${chunks}${eachSlot(`\n        v[k] = inside ? ${prologueCall(p, args((n) => `q${n}.v[t]`))} : ${identity};`)}`);
        // A chunk is inside the row or outside it as a whole: one outside stores nothing.
        return lambda + eachChunk(`${chunks}
      ${vec(mid)} w;${eachSlot(`
        w.v[t] = inside ? ${prologueStored(p, args((n) => `q${n}.v[t]`))} : (${mid.storage})0;
        v[k] = inside ? ${mid.load('w.v[t]')} : ${identity};`)}
      if (inside) *reinterpret_cast<${vec(mid)}*>(xw + j0) = w;`);
      },
    };
    return `${combines.map((c) => warpCombine(entry, c)).join('\n')}\n${body(entry, code)}`;
  });
}

/**
 * The launch of a warp-form row kernel over `split`: blocks of up to 8 warps, a warp a row (4
 * under {@link WARP_SPREAD_ROWS} rows: Llama's 512 rows of 2048 are 128 blocks, not 64 on 132 SMs).
 */
export function warpRowLaunch(kernel: KernelSource, split: RowSplit, args: readonly KernelArg[]): KernelLaunch[] {
  const outer = split.outerDims.reduce((a, d) => a * d, 1);
  if (outer <= 0) return [];
  const perBlock = outer < WARP_SPREAD_ROWS ? WARP_ROWS_PER_BLOCK / 2 : WARP_ROWS_PER_BLOCK;
  const blocks = Math.min(Math.ceil(outer / perBlock), MAX_ROW_BLOCKS);
  return [{ kind: 'launch', kernel, grid: [blocks], block: [32 * Math.min(outer, perBlock)], args }];
}

/** The launch of a row kernel over `split`: a grid-stride loop of threads, or blocks of {@link cooperativeThreads} threads. */
export function rowLaunch(kernel: KernelSource, coop: boolean, split: RowSplit, args: readonly KernelArg[]): KernelLaunch[] {
  const outer = split.outerDims.reduce((a, d) => a * d, 1);
  if (!coop) return launch(kernel, outer, args);
  if (outer <= 0) return [];
  const inner = split.innerDims.reduce((a, d) => a * d, 1);
  return [{ kind: 'launch', kernel, grid: [Math.min(outer, MAX_ROW_BLOCKS)], block: [cooperativeThreads(inner)], args }];
}
