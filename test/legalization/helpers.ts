/**
 * Helpers for the dynamic-shape tests: small graphs with symbolic dims, and running a
 * compiled program in-process (the ProgramExecutor the worker uses, without the worker).
 */
import { compile, type CompileSettings } from '../../lib/compile';
import { call } from '../../lib/ir/builder';
import { Graph, tensorType, type Arg, type Node, type Value } from '../../lib/ir/graph';
import type { DType } from '../../lib/ir/dtype';
import { sym, type Dim, type SymbolRange } from '../../lib/ir/symbolic';
import { ProgramExecutor } from '../../lib/runtime/execute';
import type { Program } from '../../lib/runtime/program';
import type { Tensor } from '../../lib/ir/tensor';

/** A graph builder with named symbols. */
export class DynGraph {
  readonly graph: Graph;

  constructor(name: string, symbols: Record<string, SymbolRange>) {
    this.graph = new Graph(name);
    for (const [s, r] of Object.entries(symbols)) this.graph.symbols.set(s, r);
  }

  /** An input whose dims are numbers or symbol names. */
  input(name: string, dtype: DType, shape: ReadonlyArray<number | string>): Value {
    return this.graph.addInput(name, tensorType(dtype, shape.map((d): Dim => (typeof d === 'number' ? d : sym(d)))));
  }

  call(target: string, args: Record<string, Arg>): Node {
    return call(this.graph, target, args);
  }

  /** `aten.sym_size.int(x, dim)`. */
  size(x: Value, dim: number): Value {
    return this.call('aten.sym_size.int', { self: x, dim }).output;
  }

  outputs(...values: Value[]): Graph {
    this.graph.setOutputs(values);
    return this.graph;
  }
}

/** Compiles `graph` for the reference backend and runs it in-process on several input sets. */
export async function compileAndRun(graph: Graph, settings: CompileSettings, runs: ReadonlyArray<readonly Tensor[]>): Promise<{ program: Program; outputs: Tensor[][] }> {
  const program = await compile(graph, { backend: 'reference', ...settings });
  const executor = new ProgramExecutor(program.data);
  try {
    const outputs: Tensor[][] = [];
    for (const inputs of runs) outputs.push(await executor.run(inputs));
    return { program, outputs };
  } finally {
    executor.dispose();
  }
}

/** Every value a node list produces or reads, for checking that no SymInt is left. */
export function valuesOf(nodes: readonly Node[]): Value[] {
  return nodes.flatMap((n) => [...n.inputValues(), ...n.outputs]);
}
