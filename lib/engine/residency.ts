/**
 * Where a value of a running program lives. A host value is a Tensor; a device value is
 * anything that says which device holds it and can be read back (lib/gpu's DeviceTensor is
 * one). Only crossings between places copy; lib/runtime/execute.ts counts them.
 */
import { Tensor } from '../ir/tensor';

export type Residency = { kind: 'host' } | { kind: 'device'; ordinal: number };

/** A value held by a device (DeviceTensor, or a backend's own handle). */
export interface DeviceValue {
  readonly dtype: Tensor['dtype'];
  readonly shape: readonly number[];
  readonly residency: { kind: 'device'; ordinal: number };
  /** Reads the value back into a host Tensor. */
  toHost(): Promise<Tensor>;
}

/** A value a segment reads or computes. */
export type RunValue = Tensor | DeviceValue;

export const HOST: Residency = { kind: 'host' };

/** Where `v` is. */
export const residencyOf = (v: RunValue): Residency => (v instanceof Tensor ? HOST : v.residency);
