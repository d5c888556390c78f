/**
 * Structural consistency of a Network, shared by build (where a violation is a converter bug,
 * InternalError) and engine loading (where it means corrupt engine bytes, BadModelError):
 * ids and references are in range, every layer reads only tensors produced before it, each
 * tensor has one producer, and every layer's recorded outputs are what inferLayer gives for
 * its inputs (so the dtypes and shapes the runner asserts at run time are TensorRT's).
 */
import { MAX_RANK, TRT_DTYPES, inferLayer, type Network, type TensorInfo, type TrtDType } from './';

/** Raises the caller's error type with `message` (and the underlying error, if any). */
export type Complain = (message: string, cause?: unknown) => never;

const fmt = (dtype: string, shape: readonly number[]): string => `${dtype}[${shape.map((d) => (d < 0 ? '?' : d)).join(', ')}]`;

const isTrtDType = (d: unknown): d is TrtDType => typeof d === 'string' && (TRT_DTYPES as readonly string[]).includes(d);

function checkShape(shape: unknown, what: string, complain: Complain): void {
  if (!Array.isArray(shape) || shape.length > MAX_RANK || shape.some((d) => !Number.isInteger(d) || (d as number) < -1)) {
    complain(`${what} has an invalid shape ${JSON.stringify(shape)}`);
  }
}

/**
 * Checks `net` as described above and returns the inferred info of every tensor (index = id),
 * with the build-time `value` of shape tensors.
 */
export function checkNetwork(net: Network, complain: Complain): TensorInfo[] {
  const count = net.tensors.length;
  const infos = new Array<TensorInfo | undefined>(count);
  net.tensors.forEach((t, i) => {
    if (t === undefined || t === null || t.id !== i) complain(`tensor slot ${i} holds tensor ${t?.id}`);
    if (!isTrtDType(t.dtype)) complain(`tensor "${t.name}" has dtype ${JSON.stringify(t.dtype)}, which TensorRT does not have`);
    checkShape(t.shape, `tensor "${t.name}"`, complain);
  });
  const tensorRef = (id: unknown, what: string): number => {
    if (!Number.isInteger(id) || (id as number) < 0 || (id as number) >= count) complain(`${what} refers to tensor ${JSON.stringify(id)}, which does not exist`);
    return id as number;
  };

  const inputNames = new Set<string>();
  let profileCount = -1;
  for (const input of net.inputs) {
    const t = net.tensors[tensorRef(input.tensor, `input "${input.name}"`)]!;
    if (t.producer !== -1) complain(`input "${input.name}" is tensor "${t.name}", which layer ${t.producer} produces`);
    if (inputNames.has(input.name)) complain(`two inputs are named "${input.name}"`);
    inputNames.add(input.name);
    if (infos[t.id] !== undefined) complain(`tensor "${t.name}" is declared as an input twice`);
    const dynamic = t.shape.some((d) => d < 0);
    if (dynamic && input.profiles.length === 0) complain(`input "${input.name}" ${fmt(t.dtype, t.shape)} has dynamic dims but no optimization profile`);
    if (input.profiles.length > 0) {
      if (profileCount >= 0 && input.profiles.length !== profileCount) {
        complain(`input "${input.name}" has ${input.profiles.length} optimization profiles, other inputs have ${profileCount}`);
      }
      profileCount = input.profiles.length;
    }
    input.profiles.forEach((p, k) => {
      for (const key of ['min', 'opt', 'max'] as const) {
        const v = p[key];
        if (!Array.isArray(v) || v.length !== t.shape.length || v.some((d) => !Number.isInteger(d) || d < 0)) {
          complain(`input "${input.name}" profile ${k} ${key} ${JSON.stringify(v)} does not fit ${fmt(t.dtype, t.shape)}`);
        }
      }
      t.shape.forEach((d, i) => {
        const [mn, op, mx] = [p.min[i]!, p.opt[i]!, p.max[i]!];
        if (!(mn <= op && op <= mx) || (d >= 0 && (mn !== d || mx !== d))) {
          complain(`input "${input.name}" dim ${i}: profile ${k} [${mn}, ${op}, ${mx}] does not fit ${d < 0 ? 'a dynamic dim' : d}`);
        }
      });
    });
    infos[t.id] = { dtype: t.dtype, shape: [...t.shape] };
  }

  net.layers.forEach((layer, index) => {
    const label = `layer "${layer.name}" (${layer.params?.kind})`;
    if (layer.index !== index) complain(`${label} sits at position ${index} but records index ${layer.index}`);
    const ins = layer.inputs.map((id, k) => {
      if (id === null) return null;
      const info = infos[tensorRef(id, `${label} input ${k}`)];
      if (info === undefined) complain(`${label} input ${k} reads tensor "${net.tensors[id]!.name}" before any layer produces it`);
      return info;
    });
    let inferred: TensorInfo[];
    try {
      inferred = inferLayer(layer.params, ins, layer.name);
    } catch (e) {
      complain(`${label}: ${(e as Error).message}`, e);
    }
    if (inferred.length !== layer.outputs.length) complain(`${label} records ${layer.outputs.length} outputs, its kind has ${inferred.length}`);
    layer.outputs.forEach((id, k) => {
      const t = net.tensors[tensorRef(id, `${label} output ${k}`)]!;
      if (t.producer !== index || infos[id] !== undefined) complain(`${label} output ${k} is tensor "${t.name}", which another layer or input produces`);
      const want = inferred[k]!;
      if (t.dtype !== want.dtype || t.shape.length !== want.shape.length || t.shape.some((d, i) => d !== want.shape[i])) {
        complain(`${label} output ${k} "${t.name}" is recorded as ${fmt(t.dtype, t.shape)}, but its inputs give ${fmt(want.dtype, want.shape)}`);
      }
      infos[id] = want;
    });
  });

  if (net.outputs.length === 0) complain('the network has no outputs');
  const outputNames = new Set<string>();
  for (const output of net.outputs) {
    const id = tensorRef(output.tensor, `output "${output.name}"`);
    if (typeof output.name !== 'string' || output.name === '') complain(`output ${id} has no name`);
    if (outputNames.has(output.name)) complain(`two outputs are named "${output.name}"`);
    outputNames.add(output.name);
    if (infos[id] === undefined) complain(`output "${output.name}" is tensor "${net.tensors[id]!.name}", which nothing produces`);
    if (net.tensors[id]!.producer === -1) complain(`output "${output.name}" is the network input "${net.tensors[id]!.name}": TensorRT needs a layer between them`);
  }
  return net.tensors.map((t, i) => infos[i] ?? { dtype: t.dtype, shape: t.shape });
}
