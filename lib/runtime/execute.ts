/**
 * Runs a program's segments in order. Used by the worker thread; pure and synchronous, so it
 * is also the single place that defines what running a program means.
 */
import { getBackend } from '../backends';
import type { Runner } from '../backends/types';
import { InternalError } from '../errors';
import { dtypeInfo } from '../ir/dtype';
import type { Graph } from '../ir/graph';
import { deserializeGraphFromBuffer } from '../ir/serialize';
import { interpret } from '../interpreter';
import { Tensor } from '../tensor';
import { fromCarrier, toCarrier } from './complex-io';
import type { ProgramData } from './segments';

type Loaded = { kind: 'tensorrt'; runner: Runner; inputs: string[]; outputs: string[] } | { kind: 'fallback'; graph: Graph; inputs: string[]; outputs: string[] };

export class ProgramExecutor {
  private readonly segments: Loaded[];
  private readonly constants = new Map<string, Tensor>();

  constructor(private readonly data: ProgramData) {
    this.segments = data.segments.map((s) =>
      s.kind === 'tensorrt'
        ? { kind: 'tensorrt', runner: getBackend(s.backend).createRunner(s.engine), inputs: s.inputs, outputs: s.outputs }
        : { kind: 'fallback', graph: deserializeGraphFromBuffer(s.graph), inputs: s.inputs, outputs: s.outputs },
    );
    for (const [name, c] of Object.entries(data.constants)) {
      const info = dtypeInfo(c.dtype);
      const copy = c.data.slice();
      this.constants.set(name, new Tensor(c.dtype, c.shape, new info.storage(copy.buffer, 0, copy.byteLength / (info.itemBytes / info.lanes))));
    }
  }

  /** Inputs in program input order; returns outputs in program output order. */
  run(inputs: readonly Tensor[]): Tensor[] {
    const env = new Map<string, Tensor>(this.constants);
    this.data.inputs.forEach((io, i) => env.set(io.value, toCarrier(io, inputs[i]!)));
    const take = (name: string): Tensor => {
      const t = env.get(name);
      if (t === undefined) throw new InternalError(`program: value ${name} is needed before any segment computed it`);
      return t;
    };
    for (const s of this.segments) {
      if (s.kind === 'tensorrt') {
        const feeds: Record<string, Tensor> = {};
        for (const name of s.inputs) feeds[name] = take(name);
        const out = s.runner.run(feeds);
        for (const name of s.outputs) env.set(name, out[name] ?? take(name));
      } else {
        const out = interpret(s.graph, s.inputs.map(take));
        s.outputs.forEach((name, i) => env.set(name, out[i]!));
      }
    }
    return this.data.outputs.map((io) => fromCarrier(io, take(io.value)));
  }

  dispose(): void {
    for (const s of this.segments) if (s.kind === 'tensorrt') s.runner.dispose();
  }
}
