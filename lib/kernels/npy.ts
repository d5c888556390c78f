/**
 * NumPy .npy files (format versions 1.0, 2.0 and 3.0) to and from tensors.
 *
 * Layout: the magic "\x93NUMPY", a major and minor version byte, the header length
 * (uint16 little-endian for 1.0, uint32 for 2.0 and 3.0), then the header, a Python dict
 * literal {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), } padded with spaces and
 * a newline so the data starts on a 64-byte boundary, then the raw C-order data.
 */
import { InvalidArgumentError } from '../errors';
import { dtypeInfo, type DType } from '../ir/dtype';
import { shapeSize, Tensor, type Shape } from '../ir/tensor';

const MAGIC = [0x93, 0x4e, 0x55, 0x4d, 0x50, 0x59]; // \x93NUMPY
const ALIGN = 64;
// numpy leaves room for the first axis to grow to this many digits when rewriting in place.
const GROWTH_AXIS_MAX_DIGITS = 21;

/** The NumPy type code (without byte order) of each dtype NumPy has. */
const CODES: Partial<Record<DType, string>> = {
  float32: 'f4',
  float64: 'f8',
  float16: 'f2',
  int8: 'i1',
  uint8: 'u1',
  int16: 'i2',
  uint16: 'u2',
  int32: 'i4',
  uint32: 'u4',
  int64: 'i8',
  uint64: 'u8',
  bool: 'b1',
  complex64: 'c8',
  complex128: 'c16',
};

const DTYPE_OF_CODE = new Map<string, DType>(Object.entries(CODES).map(([d, c]) => [c, d as DType]));

const HOST_LITTLE_ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;

function fail(message: string): never {
  throw new InvalidArgumentError(`readNpy: ${message}`);
}

/** Reverses the bytes of each `width`-byte word in place. */
function swapBytes(bytes: Uint8Array, width: number): void {
  for (let i = 0; i + width <= bytes.length; i += width) {
    for (let a = i, b = i + width - 1; a < b; a++, b--) {
      const t = bytes[a]!;
      bytes[a] = bytes[b]!;
      bytes[b] = t;
    }
  }
}

/** The header's Python literal values. */
type PyValue = string | boolean | number[];

/** Parses the header dict: string keys; string, True/False and tuple-of-int values. */
class HeaderParser {
  private pos = 0;

  constructor(
    private readonly text: string,
    private readonly start: number,
  ) {}

  parse(): Map<string, PyValue> {
    const out = new Map<string, PyValue>();
    this.expect('{');
    while (!this.peek('}')) {
      const key = this.string();
      this.expect(':');
      out.set(key, this.value());
      if (!this.peek('}')) this.expect(',');
    }
    this.expect('}');
    this.skipSpace();
    if (this.pos !== this.text.length) this.error('unexpected text after the header dict');
    return out;
  }

  private error(what: string): never {
    fail(`malformed header at byte ${this.start + this.pos}: ${what} in ${JSON.stringify(this.text.trimEnd())}`);
  }

  private skipSpace(): void {
    while (this.pos < this.text.length && /\s/.test(this.text[this.pos]!)) this.pos++;
  }

  private peek(ch: string): boolean {
    this.skipSpace();
    return this.text[this.pos] === ch;
  }

  private expect(ch: string): void {
    if (!this.peek(ch)) this.error(`expected '${ch}'`);
    this.pos++;
  }

  private value(): PyValue {
    this.skipSpace();
    const ch = this.text[this.pos];
    if (ch === "'" || ch === '"') return this.string();
    if (ch === '(') return this.tuple();
    for (const [word, v] of [['True', true], ['False', false]] as const) {
      if (this.text.startsWith(word, this.pos)) {
        this.pos += word.length;
        return v;
      }
    }
    this.error('expected a string, a tuple, True or False');
  }

  private string(): string {
    this.skipSpace();
    const quote = this.text[this.pos];
    if (quote !== "'" && quote !== '"') this.error('expected a quoted string');
    const end = this.text.indexOf(quote, this.pos + 1);
    if (end < 0) this.error('unterminated string');
    const s = this.text.slice(this.pos + 1, end);
    this.pos = end + 1;
    return s;
  }

  private tuple(): number[] {
    this.expect('(');
    const out: number[] = [];
    while (!this.peek(')')) {
      // Python 2 wrote longs as 3L.
      const m = /^(\d+)L?/.exec(this.text.slice(this.pos));
      if (m === null) this.error('expected a non-negative integer in the shape');
      const dim = Number(m[1]);
      // Past 2^53 a dim is no longer exact (and no data could back it).
      if (!Number.isSafeInteger(dim)) this.error(`the shape's dim ${m[1]} is past 2^53`);
      out.push(dim);
      this.pos += m[0].length;
      if (!this.peek(')')) this.expect(',');
    }
    this.expect(')');
    return out;
  }
}

interface Header {
  readonly dtype: DType;
  readonly bigEndian: boolean;
  readonly shape: number[];
  readonly dataStart: number;
}

function readU32LE(b: Uint8Array, at: number): number {
  return (b[at]! | (b[at + 1]! << 8) | (b[at + 2]! << 16)) + b[at + 3]! * 0x1000000;
}

/** The descr string's dtype and byte order; only the types Tensor can hold are accepted. */
function parseDescr(descr: PyValue | undefined): { dtype: DType; bigEndian: boolean } {
  if (typeof descr !== 'string') fail(`the header's 'descr' must be a type string such as '<f4', got ${JSON.stringify(descr)}`);
  const m = /^([<>|=]?)([a-z]\d+)$/.exec(descr);
  const dtype = m === null ? undefined : DTYPE_OF_CODE.get(m[2]!);
  if (m === null || dtype === undefined) {
    fail(`unsupported dtype descr ${JSON.stringify(descr)}; supported: ${[...DTYPE_OF_CODE.keys()].map((c) => `<${c}`).join(' ')}`);
  }
  const order = m[1]!;
  const width = dtypeInfo(dtype).itemBytes / dtypeInfo(dtype).lanes;
  if (width > 1 && order !== '<' && order !== '>') fail(`descr ${JSON.stringify(descr)} must give its byte order ('<' or '>')`);
  return { dtype, bigEndian: order === '>' && width > 1 };
}

function readHeader(buffer: Uint8Array): Header {
  if (buffer.length < 10) fail(`${buffer.length} bytes is too short for an .npy preamble (10 bytes at least)`);
  for (let i = 0; i < MAGIC.length; i++) {
    if (buffer[i] !== MAGIC[i]) fail(`bad magic at byte ${i}: an .npy file starts with \\x93NUMPY`);
  }
  const major = buffer[6]!;
  const minor = buffer[7]!;
  if (major < 1 || major > 3 || minor !== 0) fail(`unsupported format version ${major}.${minor} at byte 6 (1.0, 2.0 and 3.0 are known)`);
  const lengthBytes = major === 1 ? 2 : 4;
  const start = 8 + lengthBytes;
  if (buffer.length < start) fail(`truncated header length at byte 8: ${buffer.length} bytes in all`);
  const headerLength = major === 1 ? buffer[8]! | (buffer[9]! << 8) : readU32LE(buffer, 8);
  if (start + headerLength > buffer.length) {
    fail(`truncated header: the length at byte 8 says ${headerLength} bytes from byte ${start}, but the buffer ends at byte ${buffer.length}`);
  }
  const raw = buffer.subarray(start, start + headerLength);
  const text = new TextDecoder(major === 3 ? 'utf-8' : 'latin1').decode(raw);
  const dict = new HeaderParser(text, start).parse();
  const { dtype, bigEndian } = parseDescr(dict.get('descr'));
  const fortran = dict.get('fortran_order');
  if (typeof fortran !== 'boolean') fail(`the header's 'fortran_order' must be True or False (header at byte ${start})`);
  if (fortran) fail('fortran_order True (column-major data) is not supported; save a C-contiguous array (np.ascontiguousarray)');
  const shape = dict.get('shape');
  if (!Array.isArray(shape)) fail(`the header's 'shape' must be a tuple of integers (header at byte ${start})`);
  const extra = [...dict.keys()].filter((k) => k !== 'descr' && k !== 'fortran_order' && k !== 'shape');
  if (extra.length > 0) fail(`unexpected header keys ${extra.join(', ')} (header at byte ${start})`);
  return { dtype, bigEndian, shape, dataStart: start + headerLength };
}

/** Parses a NumPy .npy file (versions 1.0–3.0, C order) into a tensor that owns a copy of the data. */
export function readNpy(buffer: Uint8Array): Tensor {
  const { dtype, bigEndian, shape, dataStart } = readHeader(buffer);
  const info = dtypeInfo(dtype);
  const bytes = shapeSize(shape) * info.itemBytes;
  const available = buffer.length - dataStart;
  if (available < bytes) {
    fail(`data at byte ${dataStart} needs ${bytes} bytes for ${dtype} shape (${shape.join(', ')}), but only ${available} remain`);
  }
  // A fresh, aligned copy: the tensor must not alias the caller's buffer.
  // Uint8Array's slice copies; a Node Buffer's slice would only view (and keep its pool offset).
  const data = Uint8Array.prototype.slice.call(buffer, dataStart, dataStart + bytes);
  const width = info.itemBytes / info.lanes;
  if (bigEndian === HOST_LITTLE_ENDIAN && width > 1) swapBytes(data, width);
  const values = new info.storage(data.buffer, 0, shapeSize(shape) * info.lanes);
  if (dtype === 'bool') for (let i = 0; i < values.length; i++) values[i] = values[i] ? 1 : 0;
  return new Tensor(dtype, shape, values);
}

function pythonTuple(shape: Shape): string {
  if (shape.length === 1) return `(${shape[0]},)`;
  return `(${shape.join(', ')})`;
}

/** The header bytes numpy.save would write: version 1.0 unless the header needs 2.0. */
function encodeHeader(descr: string, shape: Shape): Uint8Array {
  let dict = `{'descr': '${descr}', 'fortran_order': False, 'shape': ${pythonTuple(shape)}, }`;
  if (shape.length > 0) dict += ' '.repeat(GROWTH_AXIS_MAX_DIGITS - String(shape[0]).length);
  for (const major of [1, 2]) {
    const lengthBytes = major === 1 ? 2 : 4;
    const hlen = dict.length + 1;
    const padlen = ALIGN - ((MAGIC.length + 2 + lengthBytes + hlen) % ALIGN);
    const total = hlen + padlen;
    if (major === 1 && total > 0xffff) continue;
    const out = new Uint8Array(MAGIC.length + 2 + lengthBytes + total);
    out.set(MAGIC, 0);
    out[6] = major;
    out[7] = 0;
    for (let i = 0; i < lengthBytes; i++) out[8 + i] = Math.floor(total / 256 ** i) % 256;
    const text = dict + ' '.repeat(padlen) + '\n';
    for (let i = 0; i < text.length; i++) out[8 + lengthBytes + i] = text.charCodeAt(i);
    return out;
  }
  throw new InvalidArgumentError('writeNpy: internal: header too long');
}

/** Serializes a tensor as a NumPy .npy file (little-endian, C order), byte-identical to numpy.save. */
export function writeNpy(t: Tensor): Uint8Array {
  const code = CODES[t.dtype];
  if (code === undefined) {
    throw new InvalidArgumentError(`writeNpy: NumPy has no ${t.dtype} type; cast the tensor (to float32, say) before writing it`);
  }
  const info = dtypeInfo(t.dtype);
  const width = info.itemBytes / info.lanes;
  const header = encodeHeader(`${width === 1 ? '|' : '<'}${code}`, t.shape);
  const data = new Uint8Array(t.data.buffer, t.data.byteOffset, t.data.byteLength);
  const out = new Uint8Array(header.length + data.length);
  out.set(header, 0);
  out.set(data, header.length);
  if (!HOST_LITTLE_ENDIAN && width > 1) swapBytes(out.subarray(header.length), width);
  return out;
}
