/**
 * ONNX's string tensors, sequences and optionals through loadOnnx + interpretValues
 * (lib/ir/values.ts, lib/ir/ops/strings.ts, lib/ir/ops/sequences.ts), each model compared with
 * onnxruntime-node on the same bytes. Sequences and optionals stay inside these models (their
 * inputs and outputs are tensors): onnxruntime-node's JavaScript API passes only tensors.
 * Then what compile() does with them, and the bad values and forms, each with its error code.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

import { compile } from '../../../lib/compile';
import { loadOnnx } from '../../../lib/frontends/onnx';
import { valueFromProtoBytes } from '../../../lib/frontends/onnx/value-proto';
import { nestedRepetition } from '../../../lib/kernels/strings';
import { interpret, interpretValues } from '../../../lib/interpreter';
import { Tensor } from '../../../lib/ir/tensor';
import { OptionalValue, StringTensor, TensorSequence, type GraphValue } from '../../../lib/ir/values';
import { loadProgram } from '../../../lib/runtime/program-file';
import { expectClose, FP32 } from '../../helpers/compare';
import { expectSameGraphValues } from '../../helpers/graph-values';
import { closeOrt, runOrtModelValues } from '../../helpers/ort-single-op';
import { Random } from '../../helpers/random';

// eslint-disable-next-line @typescript-eslint/no-require-imports
const { onnx } = require('onnx-proto');

afterAll(closeOrt);

const rng = new Random(47);
const STRING = 8;
const ELEM: Record<string, number> = { float32: 1, int64: 7, bool: 9 };

type Attr = number | string | readonly number[] | readonly string[] | { graph: unknown } | { type: unknown };
interface NodeSpec {
  op: string;
  inputs: string[];
  outputs: string[];
  attrs?: Record<string, Attr>;
}
interface IoSpec {
  name: string;
  /** 'string' or a dtype; dims null: no shape. */
  elem: string;
  dims: ReadonlyArray<number | string> | null;
}

function tensorTypeProto(elem: string, dims: ReadonlyArray<number | string> | null): unknown {
  const elemType = elem === 'string' ? STRING : ELEM[elem]!;
  return { tensorType: { elemType, ...(dims === null ? {} : { shape: { dim: dims.map((d) => (typeof d === 'string' ? { dimParam: d } : { dimValue: d })) } }) } };
}

function attribute(name: string, v: Attr): unknown {
  const T = onnx.AttributeProto.AttributeType;
  if (typeof v === 'string') return { name, type: T.STRING, s: Buffer.from(v, 'utf8') };
  if (typeof v === 'number') return { name, type: T.INT, i: v };
  if (Array.isArray(v)) return typeof v[0] === 'string' ? { name, type: T.STRINGS, strings: v.map((s) => Buffer.from(s as string, 'utf8')) } : { name, type: T.INTS, ints: [...v] };
  if ('graph' in (v as object)) return { name, type: T.GRAPH, g: (v as { graph: unknown }).graph };
  return { name, type: T.TYPE_PROTO, tp: (v as { type: unknown }).type };
}

function graphProto(name: string, inputs: IoSpec[], nodes: NodeSpec[], outputs: IoSpec[]): unknown {
  return onnx.GraphProto.create({
    name,
    node: nodes.map((n, i) => onnx.NodeProto.create({ opType: n.op, name: `${n.op}_${i}`, input: n.inputs, output: n.outputs, attribute: Object.entries(n.attrs ?? {}).map(([k, v]) => attribute(k, v)) })),
    input: inputs.map((v) => ({ name: v.name, type: tensorTypeProto(v.elem, v.dims) })),
    output: outputs.map((v) => ({ name: v.name, type: tensorTypeProto(v.elem, v.dims) })),
  });
}

function model(inputs: IoSpec[], nodes: NodeSpec[], outputs: IoSpec[], opset = 20): Uint8Array {
  return onnx.ModelProto.encode(onnx.ModelProto.create({ irVersion: 9, opsetImport: [{ domain: '', version: opset }], graph: graphProto('g', inputs, nodes, outputs) })).finish();
}

/** Our outputs and onnxruntime's on the same model: strings and integers exactly, floats to FP32. */
async function expectSameAsOrt(bytes: Uint8Array, inputs: Array<Tensor | StringTensor>): Promise<GraphValue[]> {
  const expected = await runOrtModelValues(bytes, inputs);
  const actual = interpretValues(loadOnnx(bytes), inputs);
  expectSameGraphValues(actual, expected);
  return actual;
}

const words = new StringTensor([2, 3], ['Monday', 'tuesday', 'monday', ' two  words ', 'a,b,,c', 'ÉTÉ']);

describe('string tensors, against onnxruntime', () => {
  test('StringConcat broadcasts a [3] tensor with a [2, 3] one; Equal compares strings, broadcast', async () => {
    const bytes = model(
      [{ name: 'x', elem: 'string', dims: [2, 3] }, { name: 's', elem: 'string', dims: [3] }],
      [{ op: 'StringConcat', inputs: ['x', 's'], outputs: ['y'] }, { op: 'Equal', inputs: ['x', 's'], outputs: ['eq'] }],
      [{ name: 'y', elem: 'string', dims: [2, 3] }, { name: 'eq', elem: 'bool', dims: [2, 3] }],
    );
    const [y, eq] = await expectSameAsOrt(bytes, [words, new StringTensor([3], ['monday', 'tuesday', 'x'])]);
    expect((y as StringTensor).data.length).toBe(6);
    expect(Array.from((eq as Tensor).data as Uint8Array)).toEqual([0, 1, 0, 0, 0, 0]);
  });

  const splitModel = (attrs: Record<string, Attr>): Uint8Array =>
    model([{ name: 'x', elem: 'string', dims: ['n'] }], [{ op: 'StringSplit', inputs: ['x'], outputs: ['pieces', 'counts'], attrs }], [{ name: 'pieces', elem: 'string', dims: null }, { name: 'counts', elem: 'int64', dims: null }]);

  test.each([
    ['at a delimiter (consecutive ones give empty pieces)', { delimiter: ',' }, new StringTensor([6], words.data)],
    ['at whitespace (no delimiter)', {}, new StringTensor([6], words.data)],
    ['at whitespace, at most one split', { maxsplit: 1 }, new StringTensor([3], ['  one two  three', 'x', ''])],
  ])('StringSplit %s: pieces padded to the longest, and the counts', async (_, attrs, x) => {
    await expectSameAsOrt(splitModel(attrs), [x]);
  });

  test('StringSplit at whitespace with maxsplit keeps the rest\'s trailing whitespace, as ONNX\'s reference (Python\'s str.split) does', () => {
    // onnxruntime 1.30 strips it ("words"); Python: ' two  words '.split(maxsplit=1) == ['two', 'words '].
    const [pieces, counts] = interpretValues(loadOnnx(splitModel({ maxsplit: 1 })), [new StringTensor([2], [' two  words ', ' a b c'])]) as [StringTensor, Tensor];
    expect(pieces.data).toEqual(['two', 'words ', 'a', 'b c']);
    expect(Array.from(counts.data as BigInt64Array, Number)).toEqual([2, 2]);
  });

  test.each([
    ['stop words case-insensitively, then upper case', { case_change_action: 'UPPER', stopwords: ['monday'], locale: 'C' }],
    ['stop words case-sensitively, then lower case', { case_change_action: 'LOWER', is_case_sensitive: 1, stopwords: ['monday'], locale: 'C' }],
    ['every word a stop word: one empty string', { stopwords: ['a', 'b'], locale: 'C' }],
  ])('StringNormalizer: %s (in the C locale, which this machine has)', async (_, attrs) => {
    // onnxruntime builds its default locale, en_US.UTF-8, only where the system has it installed.
    const bytes = model([{ name: 'x', elem: 'string', dims: [1, 4] }], [{ op: 'StringNormalizer', inputs: ['x'], outputs: ['y'], attrs }], [{ name: 'y', elem: 'string', dims: null }], 10);
    const x = (attrs.stopwords as string[])[0] === 'a' ? new StringTensor([1, 4], ['a', 'b', 'A', 'b']) : new StringTensor([1, 4], ['Monday', 'monday', 'Straße', 'MONDAY']);
    await expectSameAsOrt(bytes, [x]);
  });

  test('RegexFullMatch: whole strings only, RE2 named groups read', async () => {
    const bytes = model([{ name: 'x', elem: 'string', dims: [4] }], [{ op: 'RegexFullMatch', inputs: ['x'], outputs: ['y'], attrs: { pattern: '(?P<user>[a-z.]+)@example\\.(com|org)' } }], [{ name: 'y', elem: 'bool', dims: [4] }]);
    const [y] = await expectSameAsOrt(bytes, [new StringTensor([4], ['a.b@example.com', 'x@example.com.au', 'Q@example.org', 'z@example.org'])]);
    expect(Array.from((y as Tensor).data as Uint8Array)).toEqual([1, 0, 0, 1]);
  });

  test('a string Constant and a STRING initializer are values of the graph', async () => {
    const g = onnx.GraphProto.create({
      name: 'g',
      node: [
        onnx.NodeProto.create({ opType: 'Constant', name: 'c', output: ['c'], attribute: [{ name: 'value_strings', type: onnx.AttributeProto.AttributeType.STRINGS, strings: [Buffer.from('-a'), Buffer.from('-b')] }] }),
        onnx.NodeProto.create({ opType: 'StringConcat', name: 'cat1', input: ['x', 'c'], output: ['y1'] }),
        onnx.NodeProto.create({ opType: 'StringConcat', name: 'cat2', input: ['y1', 'init'], output: ['y'] }),
      ],
      initializer: [{ name: 'init', dims: [], dataType: STRING, stringData: [Buffer.from('.txt')] }],
      input: [{ name: 'x', type: tensorTypeProto('string', [2]) }],
      output: [{ name: 'y', type: tensorTypeProto('string', [2]) }],
    });
    const bytes = onnx.ModelProto.encode(onnx.ModelProto.create({ irVersion: 9, opsetImport: [{ domain: '', version: 20 }], graph: g })).finish();
    const [y] = await expectSameAsOrt(bytes, [new StringTensor([2], ['x', 'y'])]);
    expect((y as StringTensor).data).toEqual(['x-a.txt', 'y-b.txt']);
  });
});

describe('sequences and optionals inside a model, against onnxruntime', () => {
  test('SplitToSequence, SequenceInsert, SequenceErase, SequenceAt, SequenceLength and ConcatFromSequence', async () => {
    const bytes = model(
      [{ name: 'x', elem: 'float32', dims: [5, 3] }, { name: 'extra', elem: 'float32', dims: [2, 3] }, { name: 'pos', elem: 'int64', dims: [] }],
      [
        { op: 'Constant', inputs: [], outputs: ['two'], attrs: { value_ints: [2, 3] } },
        { op: 'SplitToSequence', inputs: ['x', 'two'], outputs: ['seq'], attrs: { axis: 0 } },
        { op: 'SequenceInsert', inputs: ['seq', 'extra', 'pos'], outputs: ['seq2'] },
        { op: 'SequenceErase', inputs: ['seq2'], outputs: ['seq3'] },
        { op: 'SequenceAt', inputs: ['seq2', 'pos'], outputs: ['at'] },
        { op: 'SequenceLength', inputs: ['seq3'], outputs: ['n'] },
        { op: 'ConcatFromSequence', inputs: ['seq2'], outputs: ['joined'], attrs: { axis: 0 } },
      ],
      [{ name: 'at', elem: 'float32', dims: null }, { name: 'n', elem: 'int64', dims: [] }, { name: 'joined', elem: 'float32', dims: null }],
    );
    const [at, n, joined] = await expectSameAsOrt(bytes, [rng.tensor([5, 3]), rng.tensor([2, 3]), Tensor.scalar('int64', -1)]);
    expect((at as Tensor).shape).toEqual([3, 3]);
    expect(Number((n as Tensor).data[0])).toBe(2);
    expect((joined as Tensor).shape).toEqual([7, 3]);
  });

  test('SplitToSequence without split (keepdims 0) then ConcatFromSequence on a new axis: a transpose-like restack', async () => {
    const bytes = model(
      [{ name: 'x', elem: 'float32', dims: [2, 4] }],
      [
        { op: 'SplitToSequence', inputs: ['x'], outputs: ['seq'], attrs: { axis: 1, keepdims: 0 } },
        { op: 'ConcatFromSequence', inputs: ['seq'], outputs: ['y'], attrs: { axis: -1, new_axis: 1 } },
      ],
      [{ name: 'y', elem: 'float32', dims: null }],
    );
    await expectSameAsOrt(bytes, [rng.tensor([2, 4])]);
  });

  test('SequenceMap runs its body once per element, with a tensor given whole to each run', async () => {
    const body = graphProto('body', [{ name: 'e', elem: 'float32', dims: ['n'] }, { name: 't', elem: 'float32', dims: ['n'] }], [{ op: 'Add', inputs: ['e', 't'], outputs: ['o'] }], [{ name: 'o', elem: 'float32', dims: ['n'] }]);
    const bytes = model(
      [{ name: 'a', elem: 'float32', dims: [3] }, { name: 'b', elem: 'float32', dims: [3] }],
      [
        { op: 'SequenceConstruct', inputs: ['a', 'b', 'a'], outputs: ['seq'] },
        { op: 'SequenceMap', inputs: ['seq', 'b'], outputs: ['mapped'], attrs: { body: { graph: body } } },
        { op: 'ConcatFromSequence', inputs: ['mapped'], outputs: ['y'], attrs: { axis: 0, new_axis: 1 } },
      ],
      [{ name: 'y', elem: 'float32', dims: null }],
      17,
    );
    await expectSameAsOrt(bytes, [rng.tensor([3]), rng.tensor([3])]);
    // A body that reads a sequence of the outer graph (captured, not an input of the node).
    const reads = graphProto('body', [{ name: 'e', elem: 'float32', dims: ['n'] }], [{ op: 'Constant', inputs: [], outputs: ['zero'], attrs: { value_int: 0 } }, { op: 'SequenceAt', inputs: ['seq', 'zero'], outputs: ['first'] }, { op: 'Mul', inputs: ['e', 'first'], outputs: ['o'] }], [{ name: 'o', elem: 'float32', dims: ['n'] }]);
    const outer = model(
      [{ name: 'a', elem: 'float32', dims: [3] }, { name: 'b', elem: 'float32', dims: [3] }],
      [
        { op: 'SequenceConstruct', inputs: ['a', 'b'], outputs: ['seq'] },
        { op: 'SequenceMap', inputs: ['seq'], outputs: ['mapped'], attrs: { body: { graph: reads } } },
        { op: 'ConcatFromSequence', inputs: ['mapped'], outputs: ['y'], attrs: { axis: 0, new_axis: 1 } },
      ],
      [{ name: 'y', elem: 'float32', dims: null }],
      17,
    );
    await expectSameAsOrt(outer, [rng.tensor([3]), rng.tensor([3])]);
  });

  test('Optional with and without a value, OptionalHasElement and OptionalGetElement', async () => {
    const type = { tensorType: { elemType: 1, shape: { dim: [{ dimValue: 3 }] } } };
    const bytes = model(
      [{ name: 'x', elem: 'float32', dims: [3] }],
      [
        { op: 'Optional', inputs: ['x'], outputs: ['some'] },
        { op: 'Optional', inputs: [], outputs: ['none'], attrs: { type: { type } } },
        { op: 'OptionalHasElement', inputs: ['some'], outputs: ['has'] },
        { op: 'OptionalHasElement', inputs: ['none'], outputs: ['hasNot'] },
        { op: 'OptionalGetElement', inputs: ['some'], outputs: ['y'] },
      ],
      [{ name: 'has', elem: 'bool', dims: [] }, { name: 'hasNot', elem: 'bool', dims: [] }, { name: 'y', elem: 'float32', dims: null }],
      18,
    );
    const [has, hasNot] = await expectSameAsOrt(bytes, [rng.tensor([3])]);
    expect(Array.from((has as Tensor).data as Uint8Array)).toEqual([1]);
    expect(Array.from((hasNot as Tensor).data as Uint8Array)).toEqual([0]);
  });
});

describe('ONNX-ML ops, against onnxruntime', () => {
  const T = onnx.AttributeProto.AttributeType;
  /** One LabelEncoder (ai.onnx.ml `version`) from x (`inElem`) to y (`outElem`). */
  const encoder = (inElem: string, outElem: string, attrs: unknown[], version: number): Uint8Array =>
    onnx.ModelProto.encode(
      onnx.ModelProto.create({
        irVersion: 9,
        opsetImport: [{ domain: 'ai.onnx.ml', version }, { domain: '', version: 20 }],
        graph: onnx.GraphProto.create({
          name: 'g',
          node: [onnx.NodeProto.create({ opType: 'LabelEncoder', domain: 'ai.onnx.ml', name: 'enc', input: ['x'], output: ['y'], attribute: attrs })],
          input: [{ name: 'x', type: tensorTypeProto(inElem, [2, 3]) }],
          output: [{ name: 'y', type: tensorTypeProto(outElem, [2, 3]) }],
        }),
      }),
    ).finish();
  const strings = (name: string, v: string[]): unknown => ({ name, type: T.STRINGS, strings: v.map((x) => Buffer.from(x)) });

  test('strings to int64 with a default; int64 to strings with the default default ("_Unused")', async () => {
    const toInt = encoder('string', 'int64', [strings('keys_strings', ['cat', 'dog', 'ox']), { name: 'values_int64s', type: T.INTS, ints: [7, -2, 9] }, { name: 'default_int64', type: T.INT, i: 42 }], 2);
    const [y] = await expectSameAsOrt(toInt, [new StringTensor([2, 3], ['dog', 'cow', 'cat', 'ox', '', 'dog'])]);
    expect(Array.from((y as Tensor).data as BigInt64Array, Number)).toEqual([-2, 42, 7, 9, 42, -2]);
    const toString = encoder('int64', 'string', [{ name: 'keys_int64s', type: T.INTS, ints: [1, 2, 3] }, strings('values_strings', ['one', 'two', 'three'])], 2);
    const [z] = await expectSameAsOrt(toString, [Tensor.from('int64', [2, 3], [3, 0, 1, 2, 2, 5])]);
    expect((z as StringTensor).data).toEqual(['three', '_Unused', 'one', 'two', 'two', '_Unused']);
  });

  test('floats to floats (the default default, -0); tensor keys, values and default (version 4)', async () => {
    const floats = encoder('float32', 'float32', [{ name: 'keys_floats', type: T.FLOATS, floats: [0.5, -1, 2] }, { name: 'values_floats', type: T.FLOATS, floats: [10, 20, 30] }], 2);
    await expectSameAsOrt(floats, [Tensor.from('float32', [2, 3], [2, 0.5, 7, -1, -1, 0.25])]);
    const tensorAttr = (name: string, dataType: number, values: Record<string, unknown>): unknown => ({ name, type: T.TENSOR, t: { dims: [Object.values(values)[0] instanceof Array ? (Object.values(values)[0] as unknown[]).length : 1], dataType, ...values } });
    const v4 = encoder(
      'int64',
      'float32',
      [tensorAttr('keys_tensor', 7, { int64Data: [5, 6] }), tensorAttr('values_tensor', 1, { floatData: [1.5, 2.5] }), { name: 'default_tensor', type: T.TENSOR, t: { dims: [1], dataType: 1, floatData: [-9] } }],
      4,
    );
    const [y] = await expectSameAsOrt(v4, [Tensor.from('int64', [2, 3], [6, 5, 0, 5, 6, 7])]);
    expect((y as Tensor).toArray()).toEqual([2.5, 1.5, -9, 1.5, 2.5, -9]);
  });

  test('Binarizer and ArrayFeatureExtractor (a 2-D and a 1-D input)', async () => {
    const ml = (op: string, inputs: Array<{ name: string; elem: string; dims: number[] }>, attrs: unknown[]): Uint8Array =>
      onnx.ModelProto.encode(
        onnx.ModelProto.create({
          irVersion: 9,
          opsetImport: [{ domain: 'ai.onnx.ml', version: 1 }],
          graph: onnx.GraphProto.create({
            name: 'g',
            node: [onnx.NodeProto.create({ opType: op, domain: 'ai.onnx.ml', name: 'ml', input: inputs.map((i) => i.name), output: ['y'], attribute: attrs })],
            input: inputs.map((i) => ({ name: i.name, type: tensorTypeProto(i.elem, i.dims) })),
            output: [{ name: 'y', type: tensorTypeProto('float32', null) }],
          }),
        }),
      ).finish();
    await expectSameAsOrt(ml('Binarizer', [{ name: 'x', elem: 'float32', dims: [2, 3] }], [{ name: 'threshold', type: T.FLOAT, f: 0.25 }]), [Tensor.from('float32', [2, 3], [0.25, 0.3, -1, 2, 0.2, 0.26])]);
    const indices = Tensor.from('int64', [3], [2, 0, 2]);
    await expectSameAsOrt(ml('ArrayFeatureExtractor', [{ name: 'x', elem: 'float32', dims: [2, 4] }, { name: 'i', elem: 'int64', dims: [3] }], []), [rng.tensor([2, 4]), indices]);
    await expectSameAsOrt(ml('ArrayFeatureExtractor', [{ name: 'x', elem: 'float32', dims: [4] }, { name: 'i', elem: 'int64', dims: [3] }], []), [rng.tensor([4]), indices]);
  });

  test('keys of another type than the input, and two key lists, are E_BAD_MODEL naming the node', () => {
    const mismatched = encoder('int64', 'int64', [strings('keys_strings', ['a']), { name: 'values_int64s', type: T.INTS, ints: [1] }], 2);
    expect(() => loadOnnx(mismatched)).toThrow(expect.objectContaining({ code: 'E_BAD_MODEL', message: expect.stringMatching(/enc.*keys are string, the input int64/) }));
    const twice = encoder('string', 'int64', [strings('keys_strings', ['a']), { name: 'keys_int64s', type: T.INTS, ints: [1] }, { name: 'values_int64s', type: T.INTS, ints: [1] }], 2);
    expect(() => loadOnnx(twice)).toThrow(expect.objectContaining({ code: 'E_BAD_MODEL', message: expect.stringContaining('exactly one of keys_strings') }));
  });
});

describe('sequences carried by control flow, against onnxruntime', () => {
  test('a list built in a Loop (the TorchScript exporter\'s idiom: SequenceEmpty, SequenceInsert in the body, ConcatFromSequence after)', async () => {
    const body = onnx.GraphProto.create({
      name: 'body',
      node: [
        onnx.NodeProto.create({ opType: 'Cast', name: 'c', input: ['i'], output: ['fi'], attribute: [{ name: 'to', type: onnx.AttributeProto.AttributeType.INT, i: 1 }] }),
        onnx.NodeProto.create({ opType: 'Mul', name: 'm', input: ['x', 'fi'], output: ['row'] }),
        onnx.NodeProto.create({ opType: 'SequenceInsert', name: 'ins', input: ['acc', 'row'], output: ['acc_out'] }),
        onnx.NodeProto.create({ opType: 'Identity', name: 'id', input: ['cond'], output: ['cond_out'] }),
      ],
      input: [{ name: 'i', type: tensorTypeProto('int64', []) }, { name: 'cond', type: tensorTypeProto('bool', []) }, { name: 'acc', type: { sequenceType: { elemType: tensorTypeProto('float32', null) } } }],
      output: [{ name: 'cond_out', type: tensorTypeProto('bool', []) }, { name: 'acc_out', type: { sequenceType: { elemType: tensorTypeProto('float32', null) } } }],
    });
    const g = onnx.GraphProto.create({
      name: 'g',
      node: [
        onnx.NodeProto.create({ opType: 'SequenceEmpty', name: 'e', output: ['empty'], attribute: [{ name: 'dtype', type: onnx.AttributeProto.AttributeType.INT, i: 1 }] }),
        onnx.NodeProto.create({ opType: 'Loop', name: 'loop', input: ['n', '', 'empty'], output: ['rows'], attribute: [{ name: 'body', type: onnx.AttributeProto.AttributeType.GRAPH, g: body }] }),
        onnx.NodeProto.create({ opType: 'ConcatFromSequence', name: 'cat', input: ['rows'], output: ['y'], attribute: [{ name: 'axis', type: onnx.AttributeProto.AttributeType.INT, i: 0 }, { name: 'new_axis', type: onnx.AttributeProto.AttributeType.INT, i: 1 }] }),
      ],
      input: [{ name: 'x', type: tensorTypeProto('float32', [3]) }, { name: 'n', type: tensorTypeProto('int64', []) }],
      output: [{ name: 'y', type: tensorTypeProto('float32', null) }],
    });
    const bytes = onnx.ModelProto.encode(onnx.ModelProto.create({ irVersion: 9, opsetImport: [{ domain: '', version: 17 }], graph: g })).finish();
    const [y] = await expectSameAsOrt(bytes, [rng.tensor([3]), Tensor.scalar('int64', 4)]);
    expect((y as Tensor).shape).toEqual([4, 3]);
  });

  test('an If whose branches give sequences of different lengths', async () => {
    const branch = (name: string, items: string[]): unknown =>
      onnx.GraphProto.create({
        name,
        node: [onnx.NodeProto.create({ opType: 'SequenceConstruct', name: `${name}_s`, input: items, output: [`${name}_out`] })],
        output: [{ name: `${name}_out`, type: { sequenceType: { elemType: tensorTypeProto('float32', [2]) } } }],
      });
    const g = onnx.GraphProto.create({
      name: 'g',
      node: [
        onnx.NodeProto.create({ opType: 'If', name: 'if', input: ['c'], output: ['s'], attribute: [{ name: 'then_branch', type: onnx.AttributeProto.AttributeType.GRAPH, g: branch('then', ['a', 'b', 'a']) }, { name: 'else_branch', type: onnx.AttributeProto.AttributeType.GRAPH, g: branch('else', ['b']) }] }),
        onnx.NodeProto.create({ opType: 'ConcatFromSequence', name: 'cat', input: ['s'], output: ['y'], attribute: [{ name: 'axis', type: onnx.AttributeProto.AttributeType.INT, i: 0 }] }),
        onnx.NodeProto.create({ opType: 'SequenceLength', name: 'len', input: ['s'], output: ['n'] }),
      ],
      input: [{ name: 'c', type: tensorTypeProto('bool', []) }, { name: 'a', type: tensorTypeProto('float32', [2]) }, { name: 'b', type: tensorTypeProto('float32', [2]) }],
      output: [{ name: 'y', type: tensorTypeProto('float32', null) }, { name: 'n', type: tensorTypeProto('int64', []) }],
    });
    const bytes = onnx.ModelProto.encode(onnx.ModelProto.create({ irVersion: 9, opsetImport: [{ domain: '', version: 17 }], graph: g })).finish();
    for (const c of [true, false]) {
      const [y, n] = await expectSameAsOrt(bytes, [Tensor.from('bool', [], [c ? 1 : 0]), rng.tensor([2]), rng.tensor([2])]);
      expect((y as Tensor).shape).toEqual([c ? 6 : 2]);
      expect(Number((n as Tensor).data[0])).toBe(c ? 3 : 1);
    }
  });
});

describe('values as inputs and outputs, and what is refused', () => {
  const seqModel = (): Uint8Array => {
    const g = onnx.GraphProto.create({
      name: 'g',
      node: [onnx.NodeProto.create({ opType: 'SequenceInsert', name: 'ins', input: ['s', 't'], output: ['out'] })],
      input: [{ name: 's', type: { sequenceType: { elemType: tensorTypeProto('float32', ['n']) } } }, { name: 't', type: tensorTypeProto('float32', [2]) }],
      output: [{ name: 'out', type: { sequenceType: { elemType: tensorTypeProto('float32', null) } } }],
    });
    return onnx.ModelProto.encode(onnx.ModelProto.create({ irVersion: 9, opsetImport: [{ domain: '', version: 18 }], graph: g })).finish();
  };

  test('a sequence input and output through interpretValues; interpret() names the output it cannot return', () => {
    const graph = loadOnnx(seqModel());
    const s = new TensorSequence('float32', [rng.tensor([1]), rng.tensor([3])]);
    const t = rng.tensor([2]);
    const [out] = interpretValues(graph, { s, t });
    expect(out).toBeInstanceOf(TensorSequence);
    expect((out as TensorSequence).items.map((x) => x.shape)).toEqual([[1], [3], [2]]);
    expect((out as TensorSequence).items[2]).toBe(t);
    expect(() => interpret(graph, { s: s as unknown as Tensor, t })).toThrow(expect.objectContaining({ code: 'E_INVALID_ARGUMENT', message: expect.stringContaining('interpretValues') }));
  });

  test('a value of the wrong kind or element type for an input is E_BAD_INPUT naming it', () => {
    const graph = loadOnnx(seqModel());
    expect(() => interpretValues(graph, { s: rng.tensor([2]), t: rng.tensor([2]) })).toThrow(expect.objectContaining({ code: 'E_BAD_INPUT', message: expect.stringContaining('input "s" must be a TensorSequence of float32') }));
    expect(() => interpretValues(graph, { s: new TensorSequence('int64', []), t: rng.tensor([2]) })).toThrow(expect.objectContaining({ code: 'E_BAD_INPUT' }));
    expect(() => interpretValues(graph, { s: new OptionalValue(null), t: rng.tensor([2]) })).toThrow(expect.objectContaining({ code: 'E_BAD_INPUT' }));
    // An optional's value is checked for its element type and rank (it binds no symbol).
    const g = onnx.GraphProto.create({
      name: 'g',
      node: [onnx.NodeProto.create({ opType: 'OptionalHasElement', name: 'has', input: ['o'], output: ['y'] })],
      input: [{ name: 'o', type: { optionalType: { elemType: tensorTypeProto('float32', ['n']) } } }],
      output: [{ name: 'y', type: tensorTypeProto('bool', []) }],
    });
    const opt = loadOnnx(onnx.ModelProto.encode(onnx.ModelProto.create({ irVersion: 9, opsetImport: [{ domain: '', version: 18 }], graph: g })).finish());
    expect(Array.from((interpretValues(opt, [new OptionalValue(rng.tensor([3]))])[0] as Tensor).data as Uint8Array)).toEqual([1]);
    expect(() => interpretValues(opt, [new OptionalValue(Tensor.from('int64', [3], [1, 2, 3]))])).toThrow(expect.objectContaining({ code: 'E_BAD_INPUT', message: expect.stringContaining('its value is int64') }));
    expect(() => interpretValues(opt, [new OptionalValue(rng.tensor([3, 1]))])).toThrow(expect.objectContaining({ code: 'E_BAD_INPUT', message: expect.stringContaining('rank 2, not 1') }));
  });

  test('a position past the sequence, elements that cannot be joined and an empty optional read are E_BAD_INPUT naming the node', () => {
    const bytes = model(
      [{ name: 'a', elem: 'float32', dims: ['m'] }, { name: 'b', elem: 'float32', dims: ['k'] }, { name: 'pos', elem: 'int64', dims: [] }],
      [
        { op: 'SequenceConstruct', inputs: ['a', 'b'], outputs: ['seq'] },
        { op: 'SequenceAt', inputs: ['seq', 'pos'], outputs: ['at'] },
        { op: 'ConcatFromSequence', inputs: ['seq'], outputs: ['y'], attrs: { axis: 0, new_axis: 1 } },
      ],
      [{ name: 'at', elem: 'float32', dims: null }, { name: 'y', elem: 'float32', dims: null }],
    );
    const graph = loadOnnx(bytes);
    expect(() => interpretValues(graph, [rng.tensor([2]), rng.tensor([2]), Tensor.scalar('int64', 2)])).toThrow(expect.objectContaining({ code: 'E_BAD_INPUT', message: expect.stringMatching(/SequenceAt.*position 2 is outside \[-2, 1\]/) }));
    expect(() => interpretValues(graph, [rng.tensor([2]), rng.tensor([3]), Tensor.scalar('int64', 0)])).toThrow(expect.objectContaining({ code: 'E_BAD_INPUT', message: expect.stringMatching(/ConcatFromSequence.*cannot be stacked/) }));
    const [at] = interpretValues(graph, [rng.tensor([2]), rng.tensor([2]), Tensor.scalar('int64', -1)]);
    expect((at as Tensor).shape).toEqual([2]);
  });

  test('a string tensor given to an op that reads tensors, a sequence whose rank is unknown read out, and a bad regex are refused at import', () => {
    const cast = model([{ name: 'x', elem: 'string', dims: [2] }], [{ op: 'Abs', inputs: ['x'], outputs: ['y'] }], [{ name: 'y', elem: 'float32', dims: [2] }]);
    expect(() => loadOnnx(cast)).toThrow(expect.objectContaining({ code: 'E_UNSUPPORTED_OP', message: expect.stringContaining('input 0 ("x") is a string[2]; Abs is imported for tensors only') }));
    const regex = (pattern: string): Uint8Array => model([{ name: 'x', elem: 'string', dims: [2] }], [{ op: 'RegexFullMatch', inputs: ['x'], outputs: ['y'], attrs: { pattern } }], [{ name: 'y', elem: 'bool', dims: [2] }]);
    expect(() => loadOnnx(regex('(unclosed'))).toThrow(expect.objectContaining({ code: 'E_BAD_MODEL', message: expect.stringContaining('RegexFullMatch_0') }));
    // A repeated group that repeats or alternates: exponential time for a backtracking engine on
    // 'aaaa…!' (RE2 is linear), so refused at import, naming the group.
    for (const [pattern, group] of [['(a+)+b', '(a+)+'], ['(x|xy)*z', '(x|xy)*'], ['((ab)*c){2,}', '((ab)*c){2,}']]) {
      expect(() => loadOnnx(regex(pattern!))).toThrow(expect.objectContaining({ code: 'E_UNSUPPORTED_OP', message: expect.stringContaining(`(${group})`) }));
    }
    expect(nestedRepetition('(\\W|^)[\\w.\\-]{0,25}@(yahoo|gmail)\\.com(\\W|$)')).toBeNull();
    expect(nestedRepetition('[(a+)+]b(cd)+')).toBeNull();
    const g = onnx.GraphProto.create({
      name: 'g',
      node: [onnx.NodeProto.create({ opType: 'SequenceAt', name: 'at', input: ['s', 'p'], output: ['y'] })],
      input: [{ name: 's', type: { sequenceType: { elemType: tensorTypeProto('float32', null) } } }, { name: 'p', type: tensorTypeProto('int64', []) }],
      output: [{ name: 'y', type: tensorTypeProto('float32', null) }],
    });
    const unranked = onnx.ModelProto.encode(onnx.ModelProto.create({ irVersion: 9, opsetImport: [{ domain: '', version: 18 }], graph: g })).finish();
    expect(() => loadOnnx(unranked)).toThrow(expect.objectContaining({ code: 'E_UNSUPPORTED_OP', message: expect.stringContaining('no rank known at import') }));
  });

  test('compile(): string inputs are refused naming the input; a sequence inside the model runs in a fallback segment and matches the interpreter', async () => {
    const strings = model([{ name: 'x', elem: 'string', dims: [2] }], [{ op: 'RegexFullMatch', inputs: ['x'], outputs: ['y'], attrs: { pattern: 'a+' } }], [{ name: 'y', elem: 'bool', dims: [2] }]);
    await expect(compile(strings, { backend: 'reference' })).rejects.toMatchObject({ code: 'E_UNSUPPORTED_OP', message: expect.stringContaining('"x"') });
    const bytes = model(
      [{ name: 'x', elem: 'float32', dims: [2, 4] }],
      [
        { op: 'Relu', inputs: ['x'], outputs: ['r'] },
        { op: 'SplitToSequence', inputs: ['r'], outputs: ['seq'], attrs: { axis: 1, keepdims: 0 } },
        { op: 'ConcatFromSequence', inputs: ['seq'], outputs: ['c'], attrs: { axis: 0, new_axis: 1 } },
        { op: 'Sigmoid', inputs: ['c'], outputs: ['y'] },
      ],
      [{ name: 'y', elem: 'float32', dims: null }],
    );
    const x = rng.tensor([2, 4]);
    const program = await compile(bytes, { backend: 'reference' });
    try {
      const [y] = await program.run([x]);
      const [expected] = await runOrtModelValues(bytes, [x]);
      expectClose(y!, expected as Tensor, FP32);
    } finally {
      await program.dispose();
    }
  });

  test.each(['reference', 'onnxruntime'] as const)('compile() on %s: a sequence made before an engine segment and read after it stays in one fallback segment; the same values after a save and load', async (backend) => {
    const bytes = model(
      [{ name: 'x', elem: 'float32', dims: [3, 4] }],
      [
        { op: 'SplitToSequence', inputs: ['x'], outputs: ['seq'], attrs: { axis: 0 } },
        { op: 'Relu', inputs: ['x'], outputs: ['r'] },
        { op: 'Sigmoid', inputs: ['r'], outputs: ['r2'] },
        { op: 'ConcatFromSequence', inputs: ['seq'], outputs: ['c'], attrs: { axis: 0 } },
        { op: 'Add', inputs: ['c', 'r2'], outputs: ['y'] },
      ],
      [{ name: 'y', elem: 'float32', dims: null }],
      17,
    );
    const x = rng.tensor([3, 4]);
    const [expected] = await runOrtModelValues(bytes, [x]);
    const program = await compile(bytes, { backend, minBlockSize: 1 });
    const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'trtn-seq-')), 'seq.trtp');
    try {
      // In graph order the sequence would cross the engine segment of Relu and Sigmoid.
      expect(program.report.segments.map((s) => s.kind)).toEqual(['engine', 'fallback']);
      const [y] = await program.run([x]);
      expectClose(y!, expected as Tensor, FP32);
      await program.save(file);
      const loaded = await loadProgram(file);
      try {
        expectClose((await loaded.run([x]))[0]!, expected as Tensor, FP32);
      } finally {
        await loaded.dispose();
      }
    } finally {
      await program.dispose();
      fs.rmSync(path.dirname(file), { recursive: true, force: true });
    }
  });

  test('compile(): a sequence read on both sides of a convertible node keeps that node in its fallback segment, saying why', async () => {
    const bytes = model(
      [{ name: 'x', elem: 'float32', dims: [3, 4] }],
      [
        { op: 'SplitToSequence', inputs: ['x'], outputs: ['seq'], attrs: { axis: 0 } },
        { op: 'Constant', inputs: [], outputs: ['zero'], attrs: { value_int: 0 } },
        { op: 'SequenceAt', inputs: ['seq', 'zero'], outputs: ['first'] },
        { op: 'Relu', inputs: ['first'], outputs: ['r'] },
        { op: 'SequenceInsert', inputs: ['seq', 'r'], outputs: ['seq2'] },
        { op: 'ConcatFromSequence', inputs: ['seq2'], outputs: ['y'], attrs: { axis: 0 } },
      ],
      [{ name: 'y', elem: 'float32', dims: null }],
      17,
    );
    const x = rng.tensor([3, 4]);
    const [expected] = await runOrtModelValues(bytes, [x]);
    const program = await compile(bytes, { backend: 'reference', minBlockSize: 1 });
    try {
      const relu = program.report.ops.find((o) => o.target === 'aten.relu.default')!;
      expect(relu.converted).toBe(false);
      expect(relu.reasons.join('\n')).toMatch(/runs between the node making %seq \(seq<float32, rank 2>\) and a node reading it/);
      expectClose((await program.run([x]))[0]!, expected as Tensor, FP32);
    } finally {
      await program.dispose();
    }
  });

  test('valueFromProtoBytes reads ONNX test data: a SequenceProto, an empty OptionalProto, a STRING TensorProto', () => {
    const t = onnx.TensorProto.encode({ dims: [2], dataType: 1, floatData: [1, 2] }).finish();
    const seq = Buffer.concat([Buffer.from([0x10, 0x01]), Buffer.from([0x1a, t.length]), Buffer.from(t), Buffer.from([0x1a, t.length]), Buffer.from(t)]);
    const s = valueFromProtoBytes(seq, 'sequence', 'seq.pb') as TensorSequence;
    expect(s.items.map((x) => Array.from((x as Tensor).data as Float32Array))).toEqual([[1, 2], [1, 2]]);
    expect((valueFromProtoBytes(Buffer.from([0x0a, 0x01, 0x6f]), 'optional', 'opt.pb') as OptionalValue).value).toBeNull();
    const str = onnx.TensorProto.encode({ dims: [1], dataType: STRING, stringData: [Buffer.from('héllo')] }).finish();
    expect((valueFromProtoBytes(str, 'tensor', 's.pb') as StringTensor).data).toEqual(['héllo']);
    expect(() => valueFromProtoBytes(Buffer.from([0x1a, 0x50, 0x01]), 'sequence', 'bad.pb')).toThrow(expect.objectContaining({ code: 'E_BAD_MODEL', message: expect.stringContaining('bad.pb') }));
    // A sequence element that is no TensorProto, and a tensor file cut short.
    expect(() => valueFromProtoBytes(Buffer.from([0x1a, 0x02, 0x0a, 0x7f]), 'sequence', 'cut.pb')).toThrow(expect.objectContaining({ code: 'E_BAD_MODEL', message: expect.stringContaining('cut.pb element 0') }));
    expect(() => valueFromProtoBytes(t.subarray(0, t.length - 3), 'tensor', 'short.pb')).toThrow(expect.objectContaining({ code: 'E_BAD_MODEL', message: expect.stringContaining('short.pb') }));
  });
});
