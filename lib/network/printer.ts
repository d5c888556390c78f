/** Prints a Network: inputs with profiles, one line per layer, outputs. */
import type { LayerParams } from './layers';
import type { NetTensor, Network } from './network';

const shape = (t: NetTensor): string => `${t.dtype}[${t.shape.map((d) => (d < 0 ? '?' : d)).join(', ')}]`;

function params(p: LayerParams): string {
  const entries = Object.entries(p).filter(([k]) => k !== 'kind');
  return entries
    .map(([k, v]) => {
      if (v !== null && typeof v === 'object' && 'dtype' in (v as object) && 'shape' in (v as object)) {
        const t = v as { dtype: string; shape: number[] };
        return `${k}=<${t.dtype}[${t.shape.join(', ')}]>`;
      }
      return `${k}=${JSON.stringify(v)}`;
    })
    .join(' ');
}

export function printNetwork(net: Network): string {
  const lines = [`network ${net.name}:`];
  for (const input of net.inputs) {
    const t = net.tensor(input.tensor);
    const profiles = input.profiles.map((p) => ` profile min=[${p.min}] opt=[${p.opt}] max=[${p.max}]`).join('');
    lines.push(`  input ${t.name}: ${shape(t)}${profiles}`);
  }
  for (const layer of net.layers) {
    const ins = layer.inputs.map((id) => (id === null ? '∅' : net.tensor(id).name)).join(', ');
    const outs = layer.outputs.map((id) => `${net.tensor(id).name}: ${shape(net.tensor(id))}`).join(', ');
    const extra = params(layer.params);
    lines.push(`  ${outs} = ${layer.params.kind}(${ins})${extra ? ` ${extra}` : ''}`);
  }
  lines.push(`  outputs: ${net.outputs.map((o) => `${o.name}=${net.tensor(o.tensor).name}`).join(', ')}`);
  return lines.join('\n');
}
