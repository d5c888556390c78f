/**
 * The strided map: out[o(i)] = op(in_0[s_0(i)], ...) over the row-major indices i of an
 * output box, every tensor addressed through its own strides (0 broadcasts, any permutation
 * transposes, an offset pointer and output strides place a block, as concat does). Pointwise
 * layers, casts, selects and every data-movement copy are this one kernel shape; the
 * per-element work is a separate device function (`<entry>_op`), so a later pass can fuse it.
 */
import type { KernelArg } from '../../../gpu/plan';
import type { TrtDType } from '../../../network';
import { dims8, i32, i64, kernelSource, launch, ptr, volume } from './kernel';
import { BYTES, DTYPES } from './prelude';
import type { KernelLaunch, KernelSource, MapLaunchInfo, MapOperand, MapSpec } from './types';

export type { MapLaunchInfo, MapOperand, MapSpec } from './types';

/** The per-element device function `name(x0, ..., extra...)` of `spec`: compute types in and out, or storage types when `raw`. */
export function mapOpFunction(spec: MapSpec, name: string): string {
  const out = DTYPES[spec.output];
  const params = [...spec.inputs.map((d, k) => `${spec.raw ? DTYPES[d].storage : DTYPES[d].compute} x${k}`), ...(spec.extra ?? [])].join(', ');
  return `__device__ __forceinline__ ${spec.raw ? out.storage : out.compute} ${name}(${params}) {\n${spec.body}\n}`;
}

/** What both forms of a map kernel declare: the per-element function's parameters and the kernel's (`vec` is the vector form's extra). */
function mapSignature(spec: MapSpec, vectorBits: boolean) {
  const out = DTYPES[spec.output];
  const ins = spec.inputs.map((d) => DTYPES[d]);
  const extra = spec.extra ?? [];
  const extraNames = extra.map((p) => p.trim().split(/\s+/).pop()!);
  const kernelParams = [
    `${out.storage}* y`,
    ...ins.map((c, k) => `const ${c.storage}* a${k}`),
    'i64 n',
    'i32 rank',
    'i32 walk',
    'Dims8 dims',
    'Dims8 fdiv',
    'Dims8 ys',
    ...ins.map((_, k) => `Dims8 s${k}`),
    ...(vectorBits ? ['i32 vec'] : []),
    ...extra,
  ].join(', ');
  const op = (entry: string): string => mapOpFunction(spec, `${entry}_op`);
  return { out, ins, extraNames, kernelParams, op };
}

/**
 * The map kernel for `spec` (its text depends on the spec and `vector` only, never on dims).
 * With `vector` V > 1 each thread handles V neighbours along the innermost dim (see
 * {@link vectorWidth}): one offset walk and one 16-byte access per operand for V elements.
 */
export function mapKernel(spec: MapSpec, vector = 1): KernelSource {
  if (vector > 1) return vectorMapKernel(spec, vector);
  return kernelSource(spec.key, (entry) => {
    const { out, ins, extraNames, kernelParams, op } = mapSignature(spec, false);
    const loads = ins.map((c, k) => {
      const at = `a${k}[o${k}]`;
      return spec.raw ? at : c.load(at);
    });
    const call = `${entry}_op(${[...loads, ...extraNames].join(', ')})`;
    const offsets = ['oy', ...ins.map((_, k) => `o${k}`)];
    const strides = ['ys', ...ins.map((_, k) => `s${k}`)];
    // One element: its offsets in every tensor from its flat index, walking the dims with
    // constant indices (unrolled: the Dims8 stay in registers, no local array).
    const store = `
    y[oy] = ${spec.raw ? call : out.store(call)};`;
    const element = (I: 'u32' | 'i64'): string => `${offsetWalk(offsets, strides, I)}${store}`;
    return `
${op(entry)}
extern "C" __global__ void ${entry}(${kernelParams}) {${narrowWalks(offsets, strides, store)}
  if (n <= 0x7fffffffLL) {
    for (u32 i = blockIdx.x * blockDim.x + threadIdx.x; i < (u32)n; i += blockDim.x * gridDim.x) {${element('u32')}
    }
  } else {
    GRID_STRIDE(i, n) {${element('i64')}
    }
  }
}`;
  });
}

/** The ranks with a walk of their own ({@link narrowWalks}); `walk` 0 takes the general one. */
const NARROW_RANKS = [1, 2, 3] as const;

/**
 * One grid-stride loop per rank of {@link NARROW_RANKS}, chosen by the launch's `walk`, each
 * walking exactly that many dims in 32-bit arithmetic: the innermost dims divide by their magic
 * numbers, the outermost takes what is left, and the offsets wrap in u32 and are read as i32
 * (exact, since the launch sets `walk` only where every operand's offsets lie in
 * [−2^31, 2^31) and the box has fewer than 2^31 elements; see {@link narrowWalkOf}). The general
 * walk tests all 8 dims against the run-time rank and sums 64-bit offsets: measured in the
 * kernel lab, that index arithmetic made a bias+GELU map 1.3 times the time of a hand-written
 * kernel with the same body. The kernel text still depends on the spec alone.
 */
function narrowWalks(offsets: readonly string[], strides: readonly string[], body: string): string {
  const loop = 'for (u32 i = blockIdx.x * blockDim.x + threadIdx.x; i < (u32)n; i += blockDim.x * gridDim.x)';
  const cases = NARROW_RANKS.map((rank) => {
    const dims: string[] = [];
    for (let d = rank - 1; d >= 1; d--) {
      dims.push(`
      {
        u64 mg = (u64)fdiv.v[${d}];
        u32 next = ${magicQuotient('r', 'mg')};
        u32 q = r - next * (u32)dims.v[${d}];
        r = next;
${offsets.map((o, t) => `        ${o}w += q * (u32)${strides[t]}.v[${d}];`).join('\n')}
      }`);
    }
    return `
  case ${rank}:
    ${loop} {
      u32 r = i;
      u32 ${offsets.map((o) => `${o}w = 0`).join(', ')};${dims.join('')}
${offsets.map((o, t) => `      ${o}w += r * (u32)${strides[t]}.v[0];`).join('\n')}
      const i32 ${offsets.map((o) => `${o} = (i32)${o}w`).join(', ')};${body.replace(/\n/g, '\n  ')}
    }
    return;`;
  });
  return `
  switch (walk) {${cases.join('')}
  default:
    break;
  }`;
}

/**
 * The walk from flat index `i` to each operand's offset. Below 2^31 elements (`u32`) each
 * division is a multiply and a shift by the dim's magic numbers (`fdiv`, see divisionMagic()):
 * a broadcast or transposed box otherwise spends more time dividing than moving its bytes.
 * Larger boxes (`i64`) divide in 64 bits.
 */
function offsetWalk(offsets: readonly string[], strides: readonly string[], I: 'u32' | 'i64' = 'u32'): string {
  return `
    i64 ${offsets.map((o) => `${o} = 0`).join(', ')};
    if (rank == 1) {
${offsets.map((o, t) => `      ${o} = (i64)i * ${strides[t]}.v[0];`).join('\n')}
    } else {
      ${I} r = i;
#pragma unroll
      for (int d = 7; d >= 0; --d) {
        if (d < rank) {
          ${I} nd = (${I})dims.v[d];
          ${I === 'u32' ? `u64 mg = (u64)fdiv.v[d];
          u32 next = ${magicQuotient('r', 'mg')};
          u32 q = r - next * nd;
          r = next;` : `${I} q = r % nd;
          r /= nd;`}
${offsets.map((o, t) => `          ${o} += (i64)q * ${strides[t]}.v[d];`).join('\n')}
        }
      }
    }`;
}

/**
 * The vector form of {@link mapKernel}: thread i handles the V neighbours of group i. The
 * launch divides the innermost dim by V (its operands' inner strides become V, or 0 for an
 * operand broadcast along it), so the walk finds each operand's first element of the group.
 * Bit `k` of `vec` says input k is read as V neighbours (one aligned 16-byte or narrower
 * load); a clear bit, that it is broadcast along the innermost dim (one element, V times).
 * Measured on the H200 (bench/gpu/kernel-lab): a bias+GELU map over [1024, 3072] fp16 takes
 * 2.6 times less time with V = 8 than with one element a thread; the per-element offset walk
 * and the narrow accesses, not the bytes, were its time.
 */
function vectorMapKernel(spec: MapSpec, V: number): KernelSource {
  return kernelSource(`${spec.key}.v${V}`, (entry) => {
    const { out, ins, extraNames, kernelParams, op } = mapSignature(spec, true);
    const loads = ins.map((c, k) => (spec.raw ? `v${k}.v[e]` : c.load(`v${k}.v[e]`)));
    const call = `${entry}_op(${[...loads, ...extraNames].join(', ')})`;
    const reads = ins
      .map(
        (c, k) => `
    VecN<${c.storage}, ${V}> v${k};
    if (vec & ${1 << k}) {
      v${k} = *reinterpret_cast<const VecN<${c.storage}, ${V}>*>(a${k} + o${k});
    } else {
      const ${c.storage} b = a${k}[o${k}];
#pragma unroll
      for (int e = 0; e < ${V}; ++e) v${k}.v[e] = b;
    }`,
      )
      .join('');
    const offsets = ['oy', ...ins.map((_, k) => `o${k}`)];
    const strides = ['ys', ...ins.map((_, k) => `s${k}`)];
    const group = `${reads}
    VecN<${out.storage}, ${V}> w;
#pragma unroll
    for (int e = 0; e < ${V}; ++e) w.v[e] = ${spec.raw ? call : out.store(call)};
    *reinterpret_cast<VecN<${out.storage}, ${V}>*>(y + oy) = w;`;
    return `
${op(entry)}
extern "C" __global__ void ${entry}(${kernelParams}) {${narrowWalks(offsets, strides, group)}
  for (u32 i = blockIdx.x * blockDim.x + threadIdx.x; i < (u32)n; i += blockDim.x * gridDim.x) {${offsetWalk(offsets, strides)}${group}
  }
}`;
  });
}

/** Bytes a vector map thread moves per operand at most: one 16-byte access. */
const VECTOR_BYTES = 16;

/**
 * How many innermost neighbours a thread of this map may take (8, 4, 2), or 1 for the
 * element-a-thread form. After coalescing, the output and every input read along the
 * innermost dim must step through it with stride 1 (an input may instead broadcast along it,
 * stride 0); V must divide that dim, every other stride of those operands, and each one's
 * byte offset in its buffer by V elements (buffers are 256-byte aligned), so that every group
 * is one aligned access; and the box must be below 2^31 elements (the form walks in 32 bits).
 * Pure.
 */
export function vectorWidth(spec: MapSpec, dims: readonly number[], out: MapOperand, inputs: readonly MapOperand[]): number {
  const n = volume(dims);
  if (n <= 0 || n > 0x7fffffff) return 1;
  const c = coalesce(dims, [out.strides, ...inputs.map((x) => x.strides)]);
  const last = c.dims.length - 1;
  if (last < 0) return 1;
  const operands = [
    { bytes: BYTES[spec.output], offset: out.at.offset ?? 0, strides: c.strides[0]! },
    ...inputs.map((x, k) => ({ bytes: BYTES[spec.inputs[k]!], offset: x.at.offset ?? 0, strides: c.strides[k + 1]! })),
  ];
  if (operands[0]!.strides[last] !== 1 || operands.some((o) => o.strides[last] !== 0 && o.strides[last] !== 1)) return 1;
  const wide = operands.filter((o) => o.strides[last] === 1);
  const widest = Math.max(...wide.map((o) => o.bytes));
  for (const V of [8, 4, 2]) {
    if (V * widest > VECTOR_BYTES || c.dims[last]! % V !== 0) continue;
    if (wide.every((o) => o.offset % (V * o.bytes) === 0 && o.strides.every((st, d) => d === last || st % V === 0))) return V;
  }
  return 1;
}

/**
 * The same walk over fewer dims: size-1 dims dropped, and a dim merged into the next one
 * wherever every operand steps through both as through one (a dense elementwise op becomes
 * rank 1). Only arguments change, never the kernel.
 */
export function coalesce(dims: readonly number[], strides: ReadonlyArray<readonly number[]>): { dims: number[]; strides: number[][] } {
  const keep = dims.map((_, d) => d).filter((d) => dims[d] !== 1);
  const outDims: number[] = [];
  const outStrides: number[][] = strides.map(() => []);
  for (const d of keep) {
    const last = outDims.length - 1;
    if (last >= 0 && strides.every((s, t) => outStrides[t]![last] === s[d]! * dims[d]!)) {
      outDims[last] = outDims[last]! * dims[d]!;
      strides.forEach((s, t) => (outStrides[t]![last] = s[d]!));
    } else {
      outDims.push(dims[d]!);
      strides.forEach((s, t) => outStrides[t]!.push(s[d]!));
    }
  }
  return { dims: outDims, strides: outStrides };
}

const launchInfo = new WeakMap<KernelLaunch, MapLaunchInfo>();

/** What `step` computes, when it is one launch of {@link mapSpecLaunch}. */
export const mapLaunchInfo = (step: object): MapLaunchInfo | undefined => launchInfo.get(step as KernelLaunch);

/** A map launch whose spec is remembered for fusion: {@link mapLaunch} of `spec`. */
export function mapSpecLaunch(spec: MapSpec, dims: readonly number[], out: MapOperand, inputs: readonly MapOperand[], extra: readonly KernelArg[] = []): KernelLaunch[] {
  const launches = mapLaunch(spec, dims, out, inputs, extra);
  if (launches.length === 1) launchInfo.set(launches[0]!, { spec, dims: [...dims], out, inputs: [...inputs], extra: [...extra] });
  return launches;
}

/** C: `n` (u32, below 2^31) divided by the divisor whose {@link divisionMagic} numbers `packed` (u64) holds. */
export const magicQuotient = (n: string, packed: string): string => `(u32)(((u64)${n} * (u32)${packed}) >> (u32)(${packed} >> 32))`;

/**
 * Magic numbers that divide by `d` (1 ≤ d < 2^31) with a multiply and a shift, exact for every
 * numerator below 2^31 (Granlund and Montgomery: with l = ceil(log2 d) and m = ceil(2^(31+l) / d),
 * floor(n·m / 2^(31+l)) = floor(n / d), as m·d − 2^(31+l) < d ≤ 2^l). Packed as m + (31 + l)·2^32
 * (m < 2^32, exact in a double). Pure.
 */
export function divisionMagic(d: number): number {
  if (!Number.isInteger(d) || d < 1 || d >= 2 ** 31) return 2 ** 31 + 31 * 2 ** 32;
  let l = 0;
  while (2 ** l < d) l++;
  const m = ((1n << BigInt(31 + l)) + BigInt(d) - 1n) / BigInt(d);
  return Number(m) + (31 + l) * 2 ** 32;
}

/**
 * The `walk` of a map launch over the coalesced box `dims` ({@link narrowWalks}): its rank
 * when that rank has a 32-bit walk, the box has fewer than 2^31 elements and every operand's
 * offsets (Σ index·stride, strides of either sign) lie in [−2^31, 2^31); else 0. Pure.
 */
export function narrowWalkOf(dims: readonly number[], strides: ReadonlyArray<readonly number[]>): number {
  const rank = dims.length;
  if (!(NARROW_RANKS as readonly number[]).includes(rank) || volume(dims) > 0x7fffffff) return 0;
  const fits = strides.every((st) => {
    const reach = (sign: 1 | -1): number => dims.reduce((sum, d, k) => sum + Math.max(0, sign * st[k]!) * (d - 1), 0);
    return reach(1) < 2 ** 31 && reach(-1) <= 2 ** 31;
  });
  return fits ? rank : 0;
}

/**
 * Launches `spec`'s map kernel over the box `dims`: the vector form where
 * {@link vectorWidth} allows it, else one element a thread.
 */
export function mapLaunch(spec: MapSpec, dims: readonly number[], out: MapOperand, inputs: readonly MapOperand[], extra: readonly KernelArg[] = []): KernelLaunch[] {
  const n = volume(dims);
  const c = coalesce(dims, [out.strides, ...inputs.map((x) => x.strides)]);
  const V = vectorWidth(spec, dims, out, inputs);
  if (V === 1) {
    return launch(mapKernel(spec), n, [
      ptr(out.at),
      ...inputs.map((x) => ptr(x.at)),
      i64(n),
      i32(c.dims.length),
      i32(narrowWalkOf(c.dims, c.strides)),
      dims8(c.dims),
      dims8(c.dims.map(divisionMagic)),
      ...c.strides.map((st) => dims8(st)),
      ...extra,
    ]);
  }
  // Groups of V: the innermost dim counts groups, and a stride-1 operand steps V elements a group.
  const last = c.dims.length - 1;
  const groupDims = c.dims.map((d, k) => (k === last ? d / V : d));
  const groupStrides = c.strides.map((st) => st.map((x, k) => (k === last ? x * V : x)));
  const vec = inputs.reduce((bits, _, k) => (c.strides[k + 1]![last] === 1 ? bits | (1 << k) : bits), 0);
  return launch(mapKernel(spec, V), n / V, [
    ptr(out.at),
    ...inputs.map((x) => ptr(x.at)),
    i64(n / V),
    i32(groupDims.length),
    i32(narrowWalkOf(groupDims, groupStrides)),
    dims8(groupDims),
    dims8(groupDims.map(divisionMagic)),
    ...groupStrides.map((st) => dims8(st)),
    i32(vec),
    ...extra,
  ]);
}

/** The copy map of one dtype (raw bits: exact for every dtype). */
export const copySpec = (dtype: TrtDType): MapSpec => ({ key: `copy.${dtype}`, inputs: [dtype], output: dtype, body: '  return x0;', raw: true });

/** Whether a map launch only copies its input (a slice, a transpose): a view its readers can read through instead. */
export const isCopy = (info: MapLaunchInfo): boolean => info.spec.key === `copy.${info.spec.output}` && info.spec.raw === true && info.inputs.length === 1;

/** A strided copy over the box `dims`, remembered as a map launch (so that its readers can read through it). */
export const copyLaunch = (dtype: TrtDType, dims: readonly number[], out: MapOperand, input: MapOperand): KernelLaunch[] => mapSpecLaunch(copySpec(dtype), dims, out, [input]);

/** `decl` ("float alpha") with its name prefixed: a spec's extra parameter inside a kernel that joins two specs. */
export function renamedParam(decl: string, prefix: string): { decl: string; name: string } {
  const name = decl.trim().split(/\s+/).pop()!;
  return { decl: `${decl.trim().slice(0, -name.length)}${prefix}${name}`, name: `${prefix}${name}` };
}

/** The parameter list of a spec's per-element function, as {@link mapKernel} gives it (inputs in compute types, then the extra parameters). */
export const mapOpParams = (spec: MapSpec): string => [...spec.inputs.map((d, k) => `${DTYPES[d].compute} x${k}`), ...(spec.extra ?? [])].join(', ');
