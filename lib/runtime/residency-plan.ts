/**
 * Where each value of a program lives between segments, planned from the segment list
 * alone: inputs and constants start on the host, an engine segment leaves its outputs where
 * its backend keeps values (`host`, or `device:<ordinal>`), fallback segments and program
 * outputs need the host. A value read in another place than the one it is in is copied
 * once per run and place (a crossing); lib/runtime/execute.ts counts the same crossings as
 * it runs, so the plan and a run agree.
 */
import { getBackend } from '../backends';
import type { ProgramData, ProgramSegment } from './segments';

/** `host`, or `device:<ordinal>`. */
export type Place = string;

export const HOST_PLACE: Place = 'host';

export const devicePlace = (ordinal: number): Place => `device:${ordinal}`;

/** The device a segment's engine keeps its values on, or null for a segment that runs on the host. */
export function segmentDevice(s: ProgramSegment): number | null {
  if (s.kind === 'fallback' || getBackend(s.backend).residency === 'host') return null;
  return s.placement?.ordinal ?? s.device?.gpuId ?? 0;
}

/** Where a segment reads its inputs and leaves its outputs. */
export function segmentPlace(s: ProgramSegment): Place {
  const ordinal = segmentDevice(s);
  return ordinal === null ? HOST_PLACE : devicePlace(ordinal);
}

/** How many copies between the host and devices one run of the program makes. */
export interface CrossingPlan {
  hostToDevice: number;
  deviceToHost: number;
  /** Copies between two devices (through the host). */
  deviceToDevice: number;
}

/** Plans the crossings of one run of `data` (see the top of this file). */
export function planCrossings(data: Pick<ProgramData, 'inputs' | 'outputs' | 'segments' | 'constants'>, placeOf: (s: ProgramSegment) => Place = segmentPlace): CrossingPlan {
  const plan: CrossingPlan = { hostToDevice: 0, deviceToHost: 0, deviceToDevice: 0 };
  const places = new Map<string, Set<Place>>();
  const at = (name: string): Set<Place> => places.get(name) ?? new Set([HOST_PLACE]);
  const need = (name: string, place: Place): void => {
    const here = at(name);
    if (here.has(place)) return;
    if (place === HOST_PLACE) plan.deviceToHost++;
    else if (here.has(HOST_PLACE)) plan.hostToDevice++;
    else plan.deviceToDevice++;
    places.set(name, new Set([...here, place]));
  };
  for (const s of data.segments) {
    const place = placeOf(s);
    for (const v of s.inputs) need(v, place);
    for (const v of s.outputs) if (!s.inputs.includes(v)) places.set(v, new Set([place]));
  }
  for (const o of data.outputs) need(o.value, HOST_PLACE);
  return plan;
}

/** Host round trips of one run: every crossing counted once. */
export const totalCrossings = (p: CrossingPlan): number => p.hostToDevice + p.deviceToHost + p.deviceToDevice;
