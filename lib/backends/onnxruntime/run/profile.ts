/**
 * An onnxruntime engine's per-node profile, from onnxruntime's own profiler: a second session
 * over the engine's model, with the engine's options and `enableProfiling`, runs the inputs
 * once untimed and `runs` times; endProfiling() writes its trace (Chrome trace JSON) to a
 * temporary folder, whose `Node` events (`<node>_kernel_time`, `dur` in µs) become the layers.
 * The engine's own session is left alone: profiling cannot be switched on in a session that
 * exists, and a profiling session records every run it makes.
 *
 * Node names are the layers' (`layer`, or `layer#k` for the k-th extra node of one layer,
 * ../layers/onnx-graph.ts), except where onnxruntime rewrote nodes: a fusion names its node
 * `<first node>/<Fusion>`, and a kernel that fuses several `fused <node>`.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

import { InternalError } from '../../../errors';
import type { EngineProfile } from '../../../engine/profile';
import type { RunValue } from '../../../engine/residency';
import type { OrtEngineDescription } from '../engine-format';
import type { OrtModule } from '../ort-module';
import { checkInput, ortLoadError, ortRunError, sessionOptions, toOrt } from './engine';

/** One event of onnxruntime's trace (the fields this reads). */
interface TraceEvent {
  cat?: unknown;
  name?: unknown;
  dur?: unknown;
  args?: { op_name?: unknown };
}

const KERNEL_SUFFIX = '_kernel_time';

/**
 * The network layer of an onnxruntime node name, as far as the name tells: `fused ` and each
 * `#k` dropped (a node made by one of onnxruntime's fusions is named `<node>/<Fusion>`, which
 * the program traces back through its `/`-prefix).
 */
export function layerOfNode(node: string): string {
  return node.replace(/^fused /, '').replace(/#\d+(?=\/|$)/g, '');
}

/**
 * The per-node times of a trace, in ms per run, in the order the nodes first ran. Each node's
 * first event is dropped: it is the untimed run's (its first run allocates and packs weights).
 */
export function nodeTimes(events: readonly TraceEvent[], runs: number): EngineProfile['layers'] {
  const nodes = new Map<string, { kind: string; us: number; seen: number }>();
  for (const e of events) {
    if (e.cat !== 'Node' || typeof e.name !== 'string' || !e.name.endsWith(KERNEL_SUFFIX) || typeof e.dur !== 'number') continue;
    const name = e.name.slice(0, -KERNEL_SUFFIX.length);
    const node = nodes.get(name) ?? { kind: typeof e.args?.op_name === 'string' ? e.args.op_name : '?', us: 0, seen: 0 };
    if (node.seen > 0) node.us += e.dur;
    node.seen++;
    nodes.set(name, node);
  }
  return [...nodes].map(([name, n]) => ({ name, kind: n.kind, layer: layerOfNode(name), ms: n.us / 1000 / runs }));
}

/**
 * Profiles `runs` runs of the engine's model on `inputs` (checked and converted as the
 * engine's run() does).
 *
 * @throws {BadInputError} an input the engine would refuse.
 */
export async function profileOrtModel(ort: OrtModule, model: Uint8Array, description: OrtEngineDescription, inputs: Readonly<Record<string, RunValue>>, runs: number): Promise<EngineProfile> {
  const feeds: Record<string, InstanceType<OrtModule['Tensor']>> = Object.create(null);
  for (const input of description.inputs) feeds[input.name] = toOrt(ort, checkInput(input, Object.hasOwn(inputs, input.name) ? inputs[input.name] : undefined));
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tensorrt-node-ort-profile-'));
  try {
    let session: Awaited<ReturnType<OrtModule['InferenceSession']['create']>>;
    try {
      session = await ort.InferenceSession.create(model, { ...sessionOptions(description), enableProfiling: true, profileFilePrefix: path.join(dir, 'profile') });
    } catch (error) {
      throw ortLoadError(error, description.network);
    }
    try {
      for (let r = 0; r <= runs; r++) await session.run(feeds);
    } catch (error) {
      throw ortRunError(error, description.network);
    } finally {
      session.endProfiling();
      await session.release().catch(() => undefined);
    }
    const [trace] = fs.readdirSync(dir).filter((f) => f.endsWith('.json'));
    if (trace === undefined) throw new InternalError(`onnxruntime wrote no profile for network "${description.network}" (looked in ${dir})`);
    const events = JSON.parse(fs.readFileSync(path.join(dir, trace), 'utf8')) as TraceEvent[];
    return { timing: 'onnxruntime-profiler', layers: nodeTimes(events, runs) };
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
