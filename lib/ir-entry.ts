/**
 * `tensorrt-node/ir`: the graph-building internals under the compiler, for tools that load,
 * inspect, build or transform models rather than just compile and run them (docs/api.md).
 * The graph IR (Graph, Node, Value, call, the op table), its printer and verifier, the ONNX and
 * torch.export loaders, the CPU interpreter, the TensorRT-style network IR and tensor-parallel
 * sharding. Tensors, dtypes, dim formatting and errors come from the main entry.
 *
 * @module tensorrt-node/ir
 */
/// <reference types="long" preserve="true" />

// The graph IR.
export { Graph, Node, Value, tensorType } from './ir/graph';
export type { Arg, OptionalType, SequenceType, StringTensorType, TensorType, ValueType } from './ir/graph';
export { call } from './ir/builder';
export { sym } from './ir/symbolic';
export { promoteTypes } from './ir/dtype';
export { opNames } from './ir/ops';
export { printGraph } from './ir/printer';
export { verifyGraph } from './ir/verify';

// Model loaders: a file or bytes → Graph (compile() calls them itself for a path or bytes).
export { loadOnnx, mappedOnnxOps } from './frontends/onnx';
export type { LoadOnnxOptions } from './frontends/onnx';
export { loadPt2 } from './frontends/pt2';
export type { LoadPt2Options } from './frontends/pt2';

// The CPU interpreter: runs a Graph op by op, the reference the compiler is tested against.
export { interpret, interpretValues } from './interpreter';
export { OptionalValue, StringTensor, TensorSequence } from './ir/values';
export type { ElementKind, GraphValue } from './ir/values';

// The network IR (TensorRT layers), what converters build.
export { LAYER_KINDS, Network, printNetwork } from './network';
export type { Layer, LayerKind, LayerParams, NetTensor, QuantizedDType, TrtDType } from './network';

// Tensor-parallel sharding of a graph.
export { shardGraph } from './lowering/sharding';
export type { BlockSharding, ShardedGraph, ShardedWeight } from './lowering/sharding';
