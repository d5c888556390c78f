/**
 * PyTorch's quantized_decomposed ops in a .pt2 (an ExportedProgram archive written in the
 * test, as convert_pt2e leaves a model: quantize_per_tensor / dequantize_per_tensor around
 * activations, dequantize_per_channel over int8 weights, quantize_per_channel with a narrowed
 * range): imported by their real schemas, interpreted, and compiled on the reference backend
 * into quantize/dequantize layers. Expected values are worked out by hand from PyTorch's
 * formulas (torch/ao/quantization/fx/_decomposed.py): clamp(round(x · (1/scale)) + zero_point,
 * quant_min, quant_max), and (q − zero_point) · scale.
 */
import { zipSync } from 'fflate';

import { compile } from '../../../lib/compile';
import { loadPt2 } from '../../../lib/frontends/pt2';
import { interpret } from '../../../lib/interpreter';
import { Tensor } from '../../../lib/ir/tensor';
import { convertWhole } from '../../helpers/convert-compare';
import { expectTensor } from '../../helpers/compare';
import { thrownError } from '../../helpers/errors';

type J = Record<string, unknown>;

// torch/_export/serde/schema.py ScalarType codes.
const BYTE = 1;
const CHAR = 2;
const LONG = 5;
const HALF = 6;
const FLOAT = 7;
const DOUBLE = 8;
const FLOAT8E4M3FN = 29;

const T = (name: string): J => ({ as_tensor: { name } });
const I = (v: number): J => ({ as_int: v });
const F = (v: number): J => ({ as_float: v });
const Ints = (v: number[]): J => ({ as_ints: v });
const D = (code: number): J => ({ as_scalar_type: code });

function meta(dtype: number, sizes: number[]): J {
  const strides = sizes.map((_, i) => sizes.slice(i + 1).reduce((a, d) => a * d, 1));
  return {
    dtype,
    sizes: sizes.map((s) => ({ as_int: s })),
    requires_grad: false,
    device: { type: 'cpu', index: null },
    strides: strides.map((s) => ({ as_int: s })),
    storage_offset: { as_int: 0 },
    layout: 7,
  };
}

/** A call node; arguments after `keywordFrom` are passed by keyword (kind 2), as torch.export writes keyword-only ones. */
function node(name: string, target: string, inputs: Array<[string, J]>, keywordFrom = inputs.length): J {
  return {
    target: `torch.ops.${target}`,
    inputs: inputs.map(([n, arg], i) => ({ name: n, arg, kind: i >= keywordFrom ? 2 : 1 })),
    outputs: [T(name)],
    metadata: {},
    is_hop_single_tensor_return: null,
    name,
  };
}

interface Constant {
  fqn: string;
  dtype: number;
  shape: number[];
  bytes: Uint8Array;
}

/** An ExportedProgram archive: user inputs, tensor constants, nodes and outputs. */
function archive(inputs: Array<[string, J]>, constants: Array<[string, Constant]>, nodes: J[], outputs: string[], values: Record<string, J>): Uint8Array {
  const enc = (x: unknown): Uint8Array => new TextEncoder().encode(typeof x === 'string' ? x : JSON.stringify(x));
  const inputSpecs = [
    ...constants.map(([name, c]) => ({ tensor_constant: { arg: { name }, tensor_constant_name: c.fqn } })),
    ...inputs.map(([name]) => ({ user_input: { arg: T(name) } })),
  ];
  const program = {
    graph_module: {
      graph: {
        inputs: [...constants.map(([name]) => T(name)), ...inputs.map(([name]) => T(name))],
        outputs: outputs.map(T),
        nodes,
        tensor_values: { ...values, ...Object.fromEntries(constants.map(([name, c]) => [name, meta(c.dtype, c.shape)])), ...Object.fromEntries(inputs) },
        sym_int_values: {},
        sym_bool_values: {},
        is_single_tensor_return: false,
        custom_obj_values: {},
        sym_float_values: {},
      },
      signature: { input_specs: inputSpecs, output_specs: outputs.map((o) => ({ user_output: { arg: T(o) } })) },
      module_call_graph: [],
      metadata: {},
      treespec_namedtuple_fields: {},
    },
    opset_version: { aten: 10 },
    range_constraints: {},
    schema_version: { major: 8, minor: 17 },
    verifiers: ['TRAINING'],
    torch_version: '2.11.0',
    guards_code: [],
  };
  const config = {
    config: Object.fromEntries(constants.map(([, c], i) => [c.fqn, { path_name: `constant_${i}`, is_param: false, use_pickle: false, tensor_meta: meta(c.dtype, c.shape) }])),
  };
  const files: Record<string, Uint8Array> = {
    'm/archive_format': enc('pt2'),
    'm/archive_version': enc('0'),
    'm/byteorder': enc('little'),
    'm/models/model.json': enc(program),
    'm/data/weights/model_weights_config.json': enc({ config: {} }),
    'm/data/constants/model_constants_config.json': enc(config),
  };
  constants.forEach(([, c], i) => (files[`m/data/constants/constant_${i}`] = c.bytes));
  return zipSync(files, { level: 0 });
}

const bytesOf = (a: ArrayBufferView): Uint8Array => new Uint8Array(a.buffer, a.byteOffset, a.byteLength);

/**
 * x [2, 4] → quantize_per_tensor (scale 0.5, zero point 3, int8) → dequantize_per_tensor → mm
 * with the transposed int8 weight [3, 4] dequantized per output channel (scales [0.5, 0.25,
 * 0.125], zero points [0, 1, -2], range [-127, 127]). Outputs: the quantized x and y.
 */
function linearProgram(): Uint8Array {
  const q = [-128, 127];
  return archive(
    [['x', meta(FLOAT, [2, 4])]],
    [
      ['c_w', { fqn: 'w', dtype: CHAR, shape: [3, 4], bytes: bytesOf(new Int8Array([1, 2, 3, 4, -1, 0, 1, 127, 10, -10, 5, -5])) }],
      ['c_s', { fqn: 's', dtype: FLOAT, shape: [3], bytes: bytesOf(new Float32Array([0.5, 0.25, 0.125])) }],
      ['c_z', { fqn: 'z', dtype: LONG, shape: [3], bytes: bytesOf(new BigInt64Array([0n, 1n, -2n])) }],
    ],
    [
      node('xq', 'quantized_decomposed.quantize_per_tensor.default', [['input', T('x')], ['scale', F(0.5)], ['zero_point', I(3)], ['quant_min', I(q[0]!)], ['quant_max', I(q[1]!)], ['dtype', D(CHAR)]]),
      node('xd', 'quantized_decomposed.dequantize_per_tensor.default', [['input', T('xq')], ['scale', F(0.5)], ['zero_point', I(3)], ['quant_min', I(q[0]!)], ['quant_max', I(q[1]!)], ['dtype', D(CHAR)]]),
      node('wd', 'quantized_decomposed.dequantize_per_channel.default', [['input', T('c_w')], ['scales', T('c_s')], ['zero_points', T('c_z')], ['axis', I(0)], ['quant_min', I(-127)], ['quant_max', I(127)], ['dtype', D(CHAR)]]),
      node('wt', 'aten.permute.default', [['self', T('wd')], ['dims', Ints([1, 0])]]),
      node('y', 'aten.mm.default', [['self', T('xd')], ['mat2', T('wt')]]),
    ],
    ['xq', 'y'],
    { xq: meta(CHAR, [2, 4]), xd: meta(FLOAT, [2, 4]), wd: meta(FLOAT, [3, 4]), wt: meta(FLOAT, [4, 3]), y: meta(FLOAT, [2, 3]) },
  );
}

const X = Tensor.from('float32', [2, 4], [0.26, -0.74, 1.25, 100, -100, 0.75, 0, -0.25]);
// x · (1/0.5) = [0.52, -1.48, 2.5, 200, -200, 1.5, 0, -0.5], rounded half to even [1, -1, 2, 200,
// -200, 2, 0, -0], + 3 and clamped to [-128, 127]:
const XQ = [4, 2, 5, 127, -128, 5, 3, 3];
// (xq − 3) · 0.5 = [0.5, -0.5, 1, 62, -65.5, 1, 0, 0]; the weight (w − z) · s per row is
// [0.5, 1, 1.5, 2], [-0.5, -0.25, 0, 31.5], [1.5, -1, 0.875, -0.375]; y = xd · wᵀ:
const Y = [125.25, 1952.875, -21.125, -31.75, 32.5, -99.25];

/**
 * x [2, 3] → quantize_per_channel along axis 1 (scales [0.5, 1, 0.25], zero points 0, the
 * narrowed range [-127, 127], int8) → dequantize_per_channel to float16 (out_dtype).
 */
function channelProgram(): Uint8Array {
  return archive(
    [['x', meta(FLOAT, [2, 3])]],
    [
      ['c_s', { fqn: 's', dtype: FLOAT, shape: [3], bytes: bytesOf(new Float32Array([0.5, 1, 0.25])) }],
      ['c_z', { fqn: 'z', dtype: LONG, shape: [3], bytes: bytesOf(new BigInt64Array([0n, 0n, 0n])) }],
    ],
    [
      node('q', 'quantized_decomposed.quantize_per_channel.default', [['input', T('x')], ['scales', T('c_s')], ['zero_points', T('c_z')], ['axis', I(1)], ['quant_min', I(-127)], ['quant_max', I(127)], ['dtype', D(CHAR)]]),
      node(
        'd',
        'quantized_decomposed.dequantize_per_channel.default',
        [['input', T('q')], ['scales', T('c_s')], ['zero_points', T('c_z')], ['axis', I(1)], ['quant_min', I(-127)], ['quant_max', I(127)], ['dtype', D(CHAR)], ['out_dtype', D(HALF)]],
        7,
      ),
    ],
    ['q', 'd'],
    { q: meta(CHAR, [2, 3]), d: meta(HALF, [2, 3]) },
  );
}

const X2 = Tensor.from('float32', [2, 3], [100, -200, 3.3, -63.75, 0.5, -0.125]);
// Per column, x · (1/s): [200, -200, 13.2], [-127.5, 0.5, -0.5]; half to even [200, -200, 13],
// [-128, 0, -0]; clamped to the narrowed [-127, 127]:
const Q2 = [127, -127, 13, -127, 0, 0];
// q · s: [63.5, -127, 3.25], [-63.5, 0, 0], exact in float16.
const D2 = [63.5, -127, 3.25, -63.5, 0, 0];

describe('quantized_decomposed ops in a .pt2', () => {
  test('import by their schemas and interpret as PyTorch computes them', () => {
    const [xq, y] = interpret(loadPt2(linearProgram()), [X]);
    expectTensor(xq!, 'int8', [2, 4], XQ);
    expectTensor(y!, 'float32', [2, 3], Y);
    const [q, d] = interpret(loadPt2(channelProgram()), [X2]);
    expectTensor(q!, 'int8', [2, 3], Q2);
    expectTensor(d!, 'float16', [2, 3], D2);
  });

  test('convert into quantize and dequantize layers (the weight stays int8 with a dequantize)', () => {
    const network = convertWhole(loadPt2(linearProgram()));
    const kinds = network.layers.map((l) => l.params.kind);
    expect(kinds.filter((k) => k === 'quantize')).toHaveLength(1);
    expect(kinds.filter((k) => k === 'dequantize')).toHaveLength(2);
    const weight = network.layers.find((l) => l.params.kind === 'constant' && l.params.weights.dtype === 'int8' && l.params.weights.rank === 2)!;
    const reader = network.layers.find((l) => l.inputs.includes(weight.outputs[0]!))!;
    expect(reader.params).toEqual({ kind: 'dequantize', to: 'float32', axis: 0 });
    // The narrowed range is a clamp of x before the quantize layer, not a decomposition.
    const channel = convertWhole(loadPt2(channelProgram())).layers.map((l) => l.params.kind);
    expect(channel).toEqual(expect.arrayContaining(['quantize', 'dequantize']));
    expect(channel).not.toContain('unary');
  });

  test.each([
    ['linear', linearProgram, [X], [['int8', [2, 4], XQ], ['float32', [2, 3], Y]]],
    ['per channel, narrowed range, float16 out', channelProgram, [X2], [['int8', [2, 3], Q2], ['float16', [2, 3], D2]]],
  ] as const)('compiled on the reference backend: %s', async (_label, build, inputs, outputs) => {
    const program = await compile(build(), { backend: 'reference', minBlockSize: 1 });
    try {
      expect(program.report.ops.filter((o) => !o.converted).map((o) => o.target)).toEqual([]);
      const actual = await program.run([...inputs]);
      outputs.forEach(([dtype, shape, values], i) => expectTensor(actual[i]!, dtype, shape, values));
    } finally {
      await program.dispose();
    }
  });

  test('the .tensor overloads (scale and zero point as one-element tensors): constants become the per-tensor layers; run-time ones run in a fallback segment, with PyTorch\'s values either way', async () => {
    const q = [-128, 127];
    const nodes = (scale: string, zp: string): J[] => [
      node('xq', 'quantized_decomposed.quantize_per_tensor.tensor', [['input', T('x')], ['scale', T(scale)], ['zero_point', T(zp)], ['quant_min', I(q[0]!)], ['quant_max', I(q[1]!)], ['dtype', D(CHAR)]]),
      node('xd', 'quantized_decomposed.dequantize_per_tensor.tensor', [['input', T('xq')], ['scale', T(scale)], ['zero_point', T(zp)], ['quant_min', I(q[0]!)], ['quant_max', I(q[1]!)], ['dtype', D(CHAR)]]),
    ];
    const values = { xq: meta(CHAR, [2, 4]), xd: meta(FLOAT, [2, 4]) };
    // x as in the linear program: quantized with scale 0.5 and zero point 3, then dequantized.
    const XD = XQ.map((v) => (v - 3) * 0.5);
    const constants = archive(
      [['x', meta(FLOAT, [2, 4])]],
      [
        ['c_qs', { fqn: 'qs', dtype: DOUBLE, shape: [], bytes: bytesOf(new Float64Array([0.5])) }],
        ['c_qz', { fqn: 'qz', dtype: LONG, shape: [], bytes: bytesOf(new BigInt64Array([3n])) }],
      ],
      nodes('c_qs', 'c_qz'),
      ['xq', 'xd'],
      values,
    );
    const [xq, xd] = interpret(loadPt2(constants), [X]);
    expectTensor(xq!, 'int8', [2, 4], XQ);
    expectTensor(xd!, 'float32', [2, 4], XD);
    const kinds = convertWhole(loadPt2(constants)).layers.map((l) => l.params.kind);
    expect(kinds.filter((k) => k === 'quantize' || k === 'dequantize')).toEqual(['quantize', 'dequantize']);
    const fed = archive([['x', meta(FLOAT, [2, 4])], ['s', meta(DOUBLE, [1])], ['z', meta(LONG, [1])]], [], nodes('s', 'z'), ['xq', 'xd'], values);
    const inputs = [X, Tensor.from('float64', [1], [0.5]), Tensor.from('int64', [1], [3])];
    for (const [file, feeds] of [
      [constants, [X]],
      [fed, inputs],
    ] as const) {
      const program = await compile(file, { backend: 'reference', minBlockSize: 1 });
      try {
        const [cq, cd] = await program.run([...feeds]);
        expectTensor(cq!, 'int8', [2, 4], XQ);
        expectTensor(cd!, 'float32', [2, 4], XD);
        const fallback = program.report.ops.filter((o) => !o.converted).map((o) => o.target);
        expect(fallback).toEqual(file === constants ? [] : ['quantized_decomposed.quantize_per_tensor.tensor', 'quantized_decomposed.dequantize_per_tensor.tensor']);
      } finally {
        await program.dispose();
      }
    }
    const twoScales = thrownError(() => loadPt2(archive([['x', meta(FLOAT, [2, 4])], ['s', meta(DOUBLE, [2])], ['z', meta(LONG, [1])]], [], nodes('s', 'z').slice(0, 1), ['xq'], { xq: values.xq })));
    expect(twoScales.message).toMatch(/node "xq".*scale \[2\] must hold one element/);
  });

  test('float8 tensors (ScalarType FLOAT8E4M3FN): a float8 weight dequantized per tensor', () => {
    // e4m3fn bytes 0x38 = 1, 0xC0 = -2, 0x44 = 3, 0x00 = 0; (q − 0) · 0.25.
    const program = archive(
      [['x', meta(FLOAT, [4])]],
      [['c_w', { fqn: 'w', dtype: FLOAT8E4M3FN, shape: [4], bytes: new Uint8Array([0x38, 0xc0, 0x44, 0x00]) }]],
      [
        node('wd', 'quantized_decomposed.dequantize_per_tensor.default', [['input', T('c_w')], ['scale', F(0.25)], ['zero_point', I(0)], ['quant_min', I(-448)], ['quant_max', I(448)], ['dtype', D(FLOAT8E4M3FN)]]),
        node('y', 'aten.mul.Tensor', [['self', T('x')], ['other', T('wd')]]),
      ],
      ['y'],
      { wd: meta(FLOAT, [4]), y: meta(FLOAT, [4]) },
    );
    const [y] = interpret(loadPt2(program), [Tensor.from('float32', [4], [1, 1, 2, 5])]);
    expectTensor(y!, 'float32', [4], [0.25, -0.5, 1.5, 0]);
  });

  test('a dtype PyTorch does not quantize to, and a range beyond the dtype, are typed errors naming the node', () => {
    const bad = (dtype: number, qmax: number): Error =>
      thrownError(() =>
        loadPt2(
          archive(
            [['x', meta(FLOAT, [2])]],
            [],
            [node('q', 'quantized_decomposed.quantize_per_tensor.default', [['input', T('x')], ['scale', F(1)], ['zero_point', I(0)], ['quant_min', I(0)], ['quant_max', I(qmax)], ['dtype', D(dtype)]])],
            ['q'],
            { q: meta(dtype, [2]) },
          ),
        ),
      );
    expect(bad(LONG, 10).message).toMatch(/node "q".*dtype int64 is not a quantized type/);
    expect(bad(BYTE, 300).message).toMatch(/node "q".*quant_max 300 must lie in uint8's range \[0, 255\]/);
  });
});
