/**
 * ONNX op mappers: how each ONNX op type becomes IR nodes. Families live in ./ops/.
 * A mapper returns one entry per ONNX output (a graph value, or a known integer list for
 * shape arithmetic that the importer folds symbolically).
 */
import { InternalError } from '../../errors';
import type { OnnxContext, OnnxResult } from './context';

export type OnnxMapper = (ctx: OnnxContext) => OnnxResult[];

/**
 * A folder computes an op on known integer lists (shape arithmetic: Shape → Gather →
 * Concat → Reshape) at import time. It returns null when it cannot (the mapper then runs).
 */
export type OnnxFolder = (ctx: OnnxContext) => OnnxResult[] | null;

interface Entry {
  mapper?: OnnxMapper;
  folder?: OnnxFolder;
}

const table = new Map<string, Entry>();

const key = (domain: string, opType: string): string => `${domain === 'ai.onnx' ? '' : domain}::${opType}`;

function entry(domain: string, opType: string): Entry {
  let e = table.get(key(domain, opType));
  if (e === undefined) table.set(key(domain, opType), (e = {}));
  return e;
}

/** Registers the mapper of an op type (default domain unless given). */
export function defineOnnxOp(opType: string, mapper: OnnxMapper, domain = ''): void {
  const e = entry(domain, opType);
  if (e.mapper !== undefined) throw new InternalError(`ONNX op ${opType} is mapped twice`);
  e.mapper = mapper;
}

/** Registers a symbolic folder for an op type. */
export function defineOnnxFolder(opType: string, folder: OnnxFolder, domain = ''): void {
  const e = entry(domain, opType);
  if (e.folder !== undefined) throw new InternalError(`ONNX op ${opType} has two folders`);
  e.folder = folder;
}

const anyValueOps = new Set<string>();

/**
 * Marks op types whose mappers take string tensors, sequences and optionals (the importer
 * refuses such an input, by name, to every other op: their mappers read tensors).
 */
export function takesAnyValues(opTypes: readonly string[], domain = ''): void {
  for (const t of opTypes) anyValueOps.add(key(domain, t));
}

export function onnxTakesAnyValues(domain: string, opType: string): boolean {
  return anyValueOps.has(key(domain, opType));
}

export function onnxMapper(domain: string, opType: string): OnnxMapper | undefined {
  return table.get(key(domain, opType))?.mapper;
}

export function onnxFolder(domain: string, opType: string): OnnxFolder | undefined {
  return table.get(key(domain, opType))?.folder;
}

/** Every ONNX op type with a mapper (default domain written plainly, others as domain::Op). */
export function mappedOnnxOps(): string[] {
  return [...table.entries()].filter(([, e]) => e.mapper).map(([k]) => (k.startsWith('::') ? k.slice(2) : k)).sort();
}
