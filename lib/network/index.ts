/** The TensorRT network IR. */
export * from './layers';
export { Network } from './network';
export type { NetTensor, NetworkInput, NetworkOutput, ProfileShapes } from './network';
export { inferLayer, shapesDoNotFit } from './shape-inference';
export { liveLayers } from './live-layers';
export { dataDependentTensors } from './data-dependent';
export type { TensorInfo } from './shape-inference';
export { printNetwork } from './printer';
