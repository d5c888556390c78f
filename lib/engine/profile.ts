/**
 * Per-layer profiles (`program.profile(inputs, { runs })`, `tensorrt-node bench --profile`):
 * where one run of a program spends its time, layer by layer (or kernel by kernel, node by
 * node), in one shape for every backend. Each backend measures what it can, and says how
 * (`ProfileTiming`): the figures of two backends are comparable only as far as their timings are.
 *
 * The backend half is `Backend.profileEngine` (./backend.ts): a loaded engine's layers timed on
 * given inputs. The program half is lib/runtime/profile.ts: every segment of a run, engine and
 * fallback, and the totals.
 */

/**
 * How an entry's time was measured:
 * - `host-wall-clock`: on the CPU, around each layer's executor (reference backend) or each
 *   node's implementation (fallback segments, run by the interpreter);
 * - `cuda-step`: each plan step of a cuda engine run alone, `runs` times in one native call,
 *   its launch from the host included (CudaRunner.profile's `launch` mode);
 * - `onnxruntime-profiler`: onnxruntime's own profiler, per node it ran (after its graph
 *   optimizations: fused nodes are named `fused <node>`);
 * - `segment-wall-clock`: only the whole segment, around the engine's run (a backend that
 *   cannot time its layers).
 */
export type ProfileTiming = 'host-wall-clock' | 'cuda-step' | 'onnxruntime-profiler' | 'segment-wall-clock';

/** The options of `program.profile()`. */
export interface ProfileOptions {
  /** Runs timed (default 10); each entry's `ms` is the mean over them. */
  runs?: number;
  /** Untimed runs first (default 1): plans made, code compiled, buffers allocated. */
  warmup?: number;
}

/** One layer, plan step or node of a profiled engine, as a backend reports it. */
export interface EngineLayerTime {
  /** The layer's name in the engine: the network layer (`node/role`), a cuda plan step's layer, an onnxruntime node. */
  name: string;
  /** The network layer kind (`convolution`, `matrix_multiply`...), or onnxruntime's op type (`FusedGemm`). */
  kind: string;
  /** More about what ran, where the backend has it: a cuda plan step's kind (`launch` of a kernel, `gemm`, `conv`, `copy`, `memset`). */
  detail?: string;
  /**
   * The network layer the entry belongs to, where it differs from `name` (an onnxruntime node
   * `layer#2` belongs to layer `layer`); the program traces it back to the model's node.
   */
  layer?: string;
  /** Milliseconds per run. */
  ms: number;
}

/** What `Backend.profileEngine` returns: the engine's layers in the order they ran, and how they were timed. */
export interface EngineProfile {
  timing: ProfileTiming;
  layers: EngineLayerTime[];
}

/** The model node an entry comes from, where the program could trace it (the partition report's op). */
export interface ProfileSource {
  /** The node's name in the model (after import and lowering). */
  node: string;
  /** Its op target, e.g. `aten.convolution.default`. */
  target: string;
}

/** One line of a program's profile. */
export interface ProfileEntry {
  /**
   * The layer, plan step or node: the layer's name in the engine (the network layer, `node/role`;
   * a cuda plan step's layer; an onnxruntime node); a fallback segment's entries are the IR nodes.
   */
  name: string;
  /** The layer kind, onnxruntime op type, or, for a fallback node, its op target. */
  kind: string;
  /** More about what ran, where the backend has it: a cuda plan step's kind (`launch` of a kernel, `gemm`, `conv`, `copy`, `memset`). */
  detail?: string;
  /** The network layer it belongs to, where that is not `name` (an onnxruntime node `layer#2` belongs to layer `layer`). */
  layer?: string;
  /** The model node it came from, where known: layers are named after the node that produced them. */
  from?: ProfileSource;
  /** The index of its segment in the program (0-based, as `inspect` lists them). */
  segment: number;
  /** Its segment's kind: an engine segment (built by `backend`) or a fallback segment (run by the interpreter). */
  segmentKind: 'engine' | 'fallback';
  /** The backend of its engine segment, or `interpreter` for a fallback segment. */
  backend: string;
  /** How `ms` was measured. */
  timing: ProfileTiming;
  /** Milliseconds per run (the mean over the timed runs). */
  ms: number;
  /** `ms` ÷ the profile's `totalMs` (0 to 1; the shares add up to 1). */
  share: number;
}

/** One segment of a program's profile. */
export interface SegmentProfile {
  index: number;
  kind: 'engine' | 'fallback';
  /** The backend of an engine segment, `interpreter` for a fallback segment. */
  backend: string;
  timing: ProfileTiming;
  /** Wall clock of the segment per run, around its engine run or graph (copies to and from it included). */
  ms: number;
  /** The sum of its entries' `ms` (what the segment's own timing attributes to its layers). */
  layerMs: number;
}

/** What `program.profile()` resolves: every segment's layers, timed, in the order they ran. */
export interface ProgramProfile {
  /** The timed runs each figure is the mean of. */
  runs: number;
  entries: ProfileEntry[];
  segments: SegmentProfile[];
  /** The sum of the entries' `ms`: what the shares are shares of (as trtexec's per-layer "Total"). */
  totalMs: number;
  /**
   * Wall clock of one whole run on the thread that ran it (the mean over the timed runs):
   * `totalMs` plus what no entry covers (input checks, copies between the host and devices,
   * the engines' own bookkeeping). It leaves out a worker's thread hop.
   */
  wallMs: number;
}
