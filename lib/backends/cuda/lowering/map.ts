/**
 * The strided map: out[o(i)] = op(in_0[s_0(i)], ...) over the row-major indices i of an
 * output box, every tensor addressed through its own strides (0 broadcasts, any permutation
 * transposes, an offset pointer and output strides place a block, as concat does). Pointwise
 * layers, casts, selects and every data-movement copy are this one kernel shape; the
 * per-element work is a separate device function (`<entry>_op`), so a later pass can fuse it.
 */
import type { BufferSlice, KernelArg } from '../../../gpu/plan';
import type { TrtDType } from '../../../network';
import { dims8, i32, i64, kernelSource, launch, ptr, volume } from './kernel';
import { DTYPES } from './prelude';
import type { KernelLaunch, KernelSource } from './types';

export interface MapSpec {
  /** Stable key (dtypes and op included). */
  key: string;
  inputs: readonly TrtDType[];
  output: TrtDType;
  /**
   * The body of `op(x0, x1, ..., extra...)` returning the output's compute type; inputs come
   * in their compute types. With `raw`, inputs and result are the storage types, unconverted.
   */
  body: string;
  /** Extra by-value parameters of op and the kernel (e.g. `float alpha`). */
  extra?: readonly string[];
  raw?: boolean;
}

/** The map kernel for `spec` (its text depends on the spec only, never on dims). */
export function mapKernel(spec: MapSpec): KernelSource {
  return kernelSource(spec.key, (entry) => {
    const out = DTYPES[spec.output];
    const ins = spec.inputs.map((d) => DTYPES[d]);
    const t = (c: (typeof ins)[number]): string => (spec.raw ? c.storage : c.compute);
    const extra = spec.extra ?? [];
    const extraNames = extra.map((p) => p.trim().split(/\s+/).pop()!);
    const params = [...ins.map((c, k) => `${t(c)} x${k}`), ...extra].join(', ');
    const kernelParams = [
      `${out.storage}* y`,
      ...ins.map((c, k) => `const ${c.storage}* a${k}`),
      'i64 n',
      'i32 rank',
      'Dims8 dims',
      'Dims8 fdiv',
      'Dims8 ys',
      ...ins.map((_, k) => `Dims8 s${k}`),
      ...extra,
    ].join(', ');
    const loads = ins.map((c, k) => {
      const at = `a${k}[o${k}]`;
      return spec.raw ? at : c.load(at);
    });
    const call = `${entry}_op(${[...loads, ...extraNames].join(', ')})`;
    const offsets = ['oy', ...ins.map((_, k) => `o${k}`)];
    const strides = ['ys', ...ins.map((_, k) => `s${k}`)];
    // One element: its offsets in every tensor from its flat index, walking the dims with
    // constant indices (unrolled: the Dims8 stay in registers, no local array). Below 2^31
    // elements each division is a multiply and a shift by the dim's magic numbers (`fdiv`,
    // see divisionMagic()): a broadcast or transposed box otherwise spends more time dividing
    // than moving its bytes. Larger boxes divide in 64 bits.
    const element = (I: string): string => `
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
          u32 next = (u32)(((u64)r * (u32)mg) >> (u32)(mg >> 32));
          u32 q = r - next * nd;
          r = next;` : `${I} q = r % nd;
          r /= nd;`}
${offsets.map((o, t) => `          ${o} += (i64)q * ${strides[t]}.v[d];`).join('\n')}
        }
      }
    }
    y[oy] = ${spec.raw ? call : out.store(call)};`;
    return `
__device__ __forceinline__ ${spec.raw ? out.storage : out.compute} ${entry}_op(${params}) {
${spec.body}
}
extern "C" __global__ void ${entry}(${kernelParams}) {
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

export interface MapOperand {
  at: BufferSlice;
  /** Element strides over the output box (same length as `dims`). */
  strides: readonly number[];
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

/** What a map launch computes, kept beside it so that a later pass can fuse two (lib/backends/cuda/fuse-pointwise.ts). */
export interface MapLaunchInfo {
  readonly spec: MapSpec;
  /** The output box, before coalescing. */
  readonly dims: readonly number[];
  readonly out: MapOperand;
  readonly inputs: readonly MapOperand[];
  readonly extra: readonly KernelArg[];
}

const launchInfo = new WeakMap<KernelLaunch, MapLaunchInfo>();

/** What `step` computes, when it is one launch of {@link mapSpecLaunch}. */
export const mapLaunchInfo = (step: object): MapLaunchInfo | undefined => launchInfo.get(step as KernelLaunch);

/** A map launch whose spec is remembered for fusion: {@link mapLaunch} of `mapKernel(spec)`. */
export function mapSpecLaunch(spec: MapSpec, dims: readonly number[], out: MapOperand, inputs: readonly MapOperand[], extra: readonly KernelArg[] = []): KernelLaunch[] {
  const launches = mapLaunch(mapKernel(spec), dims, out, inputs, extra);
  if (launches.length === 1) launchInfo.set(launches[0]!, { spec, dims: [...dims], out, inputs: [...inputs], extra: [...extra] });
  return launches;
}

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

/** Launches a map kernel over the box `dims`. */
export function mapLaunch(kernel: KernelSource, dims: readonly number[], out: MapOperand, inputs: readonly MapOperand[], extra: readonly KernelArg[] = []): KernelLaunch[] {
  const n = volume(dims);
  const c = coalesce(dims, [out.strides, ...inputs.map((x) => x.strides)]);
  return launch(kernel, n, [
    ptr(out.at),
    ...inputs.map((x) => ptr(x.at)),
    i64(n),
    i32(c.dims.length),
    dims8(c.dims),
    dims8(c.dims.map(divisionMagic)),
    ...c.strides.map((s) => dims8(s)),
    ...extra,
  ]);
}

/** The copy map of one dtype (raw bits: exact for every dtype). */
export const copySpec = (dtype: TrtDType): MapSpec => ({ key: `copy.${dtype}`, inputs: [dtype], output: dtype, body: '  return x0;', raw: true });

/** Whether a map launch only copies its input (a slice, a transpose): a view its readers can read through instead. */
export const isCopy = (info: MapLaunchInfo): boolean => info.spec.key === `copy.${info.spec.output}` && info.spec.raw === true && info.inputs.length === 1;

/** A copy kernel for one dtype. */
export const copyKernel = (dtype: TrtDType): KernelSource => mapKernel(copySpec(dtype));

/** A strided copy over the box `dims`, remembered as a map launch (so that its readers can read through it). */
export const copyLaunch = (dtype: TrtDType, dims: readonly number[], out: MapOperand, input: MapOperand): KernelLaunch[] => mapSpecLaunch(copySpec(dtype), dims, out, [input]);
