/**
 * The serialized ExportedProgram (torch/_export/serde/schema.py, schema version 8.x) as the
 * importer reads it: loose JSON types, the enums' codes, and checked accessors.
 */
import { UnsupportedOpError } from '../../errors';
import type { DType } from '../../ir/dtype';

/** The schema major version this importer reads (torch/_export/serde/schema.py SCHEMA_VERSION). */
export const SCHEMA_MAJOR = 8;

// ---------------------------------------------------------------------------------------
// JSON shapes (only the fields the importer uses; everything is optional until checked).

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
export type JsonObject = { [key: string]: Json };

export interface SymIntJson {
  as_int?: number;
  as_expr?: { expr_str: string; hint?: { as_int?: number } | null };
}

export interface TensorMetaJson {
  dtype: number;
  sizes: SymIntJson[];
  strides?: SymIntJson[];
  storage_offset?: SymIntJson;
  requires_grad?: boolean;
  device?: { type: string; index: number | null };
  layout?: number;
}

export interface NamedArgumentJson {
  name: string;
  arg: JsonObject;
  /** 1 positional, 2 keyword (0 or absent: unknown). */
  kind?: number | null;
}

export interface NodeJson {
  target: string;
  inputs: NamedArgumentJson[];
  outputs: JsonObject[];
  metadata?: Record<string, string>;
  name?: string | null;
}

export interface GraphJson {
  inputs: JsonObject[];
  outputs: JsonObject[];
  nodes: NodeJson[];
  tensor_values: Record<string, TensorMetaJson>;
  sym_int_values?: Record<string, SymIntJson>;
  sym_bool_values?: Record<string, JsonObject>;
  sym_float_values?: Record<string, JsonObject>;
  custom_obj_values?: Record<string, JsonObject>;
}

export interface PayloadMetaJson {
  path_name: string;
  is_param?: boolean;
  use_pickle?: boolean;
  tensor_meta?: TensorMetaJson | null;
}

export interface ExportedProgramJson {
  graph_module: {
    graph: GraphJson;
    signature: { input_specs: JsonObject[]; output_specs: JsonObject[] };
  };
  range_constraints?: Record<string, { min_val?: number | string | null; max_val?: number | string | null }>;
  schema_version?: { major?: number; minor?: number };
  opset_version?: Record<string, number>;
  verifiers?: string[];
  torch_version?: string;
}

// ---------------------------------------------------------------------------------------
// Enums.

/**
 * torch/_export/serde/schema.py ScalarType → IR dtype (null where the IR has no such type).
 * The schema has no code for torch.uint32 or torch.uint64: an exported program cannot hold them.
 */
const SCALAR_TYPES: Record<number, [string, DType | null]> = {
  0: ['UNKNOWN', null],
  1: ['BYTE (uint8)', 'uint8'],
  2: ['CHAR (int8)', 'int8'],
  3: ['SHORT (int16)', 'int16'],
  4: ['INT (int32)', 'int32'],
  5: ['LONG (int64)', 'int64'],
  6: ['HALF (float16)', 'float16'],
  7: ['FLOAT (float32)', 'float32'],
  8: ['DOUBLE (float64)', 'float64'],
  9: ['COMPLEXHALF (complex32)', null],
  10: ['COMPLEXFLOAT (complex64)', 'complex64'],
  11: ['COMPLEXDOUBLE (complex128)', 'complex128'],
  12: ['BOOL', 'bool'],
  13: ['BFLOAT16', 'bfloat16'],
  28: ['UINT16', 'uint16'],
  29: ['FLOAT8E4M3FN', 'float8e4m3fn'],
  30: ['FLOAT8E5M2', 'float8e5m2'],
  31: ['FLOAT8E4M3FNUZ', 'float8e4m3fnuz'],
  32: ['FLOAT8E5M2FNUZ', 'float8e5m2fnuz'],
};

/** The IR dtype of a ScalarType code; unknown or unsupported codes are E_UNSUPPORTED_OP naming `what`. */
export function dtypeFromScalarType(code: unknown, what: string): DType {
  const entry = typeof code === 'number' ? SCALAR_TYPES[code] : undefined;
  if (entry === undefined) throw new UnsupportedOpError(`${what}: unknown torch dtype code ${JSON.stringify(code)}`);
  if (entry[1] === null) throw new UnsupportedOpError(`${what}: torch dtype ${entry[0]} is not supported by tensorrt-node`);
  return entry[1];
}

const LAYOUTS: Record<number, string> = {
  0: 'unknown',
  1: 'sparse_coo',
  2: 'sparse_csr',
  3: 'sparse_csc',
  4: 'sparse_bsr',
  5: 'sparse_bsc',
  6: '_mkldnn',
  7: 'strided',
};

export function layoutName(code: unknown): string {
  return (typeof code === 'number' ? LAYOUTS[code] : undefined) ?? `layout_${String(code)}`;
}

const MEMORY_FORMATS: Record<number, string> = {
  0: 'unknown',
  1: 'contiguous_format',
  2: 'channels_last',
  3: 'channels_last_3d',
  4: 'preserve_format',
};

export function memoryFormatName(code: unknown): string {
  return (typeof code === 'number' ? MEMORY_FORMATS[code] : undefined) ?? `memory_format_${String(code)}`;
}

export function deviceName(device: unknown): string {
  if (device !== null && typeof device === 'object' && 'type' in device) {
    const d = device as { type: unknown; index?: unknown };
    return typeof d.index === 'number' ? `${String(d.type)}:${d.index}` : String(d.type);
  }
  return String(device);
}

export function isObject(x: unknown): x is JsonObject {
  return x !== null && typeof x === 'object' && !Array.isArray(x);
}

/** The single key of a serialized union (`{"as_tensor": {...}}` → "as_tensor"). */
export function unionKind(u: JsonObject): string {
  if (!isObject(u)) return '(not an object)';
  const keys = Object.keys(u).filter((k) => u[k] !== null && u[k] !== undefined);
  return keys.length === 1 ? keys[0]! : keys.length === 0 ? '(empty)' : `(${keys.join('|')})`;
}
