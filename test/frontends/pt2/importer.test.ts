/**
 * The torch.export importer on small hand-written programs (archives built in the test with
 * fflate): signature kinds, weights layout (strides, offsets, tied and empty storages),
 * symbols and ranges, SymInt arithmetic, assertions, in-place ops, wrapped Python scalars,
 * multi-output ops. Expected values are derived by hand.
 */
import { zipSync } from 'fflate';

import { compile } from '../../../lib/compile';
import { loadPt2 } from '../../../lib/frontends/pt2';
import { TensorRTNodeError } from '../../../lib/errors';
import { interpret } from '../../../lib/interpreter';
import { printGraph } from '../../../lib/ir/printer';
import { findProblems } from '../../../lib/ir/verify';
import { Tensor } from '../../../lib/ir/tensor';

// ---------------------------------------------------------------------------------------
// A tiny ExportedProgram writer.

const FLOAT = 7;
const LONG = 5;
const COMPLEXFLOAT = 10;

type J = Record<string, unknown>;
type Size = number | string;

const T = (name: string): J => ({ as_tensor: { name } });
const I = (v: number): J => ({ as_int: v });
const F = (v: number): J => ({ as_float: v });
const B = (v: boolean): J => ({ as_bool: v });
const Ints = (v: number[]): J => ({ as_ints: v });
const SymI = (name: string): J => ({ as_sym_int: { as_name: name } });
const SymInts = (v: (number | string)[]): J => ({ as_sym_ints: v.map((x) => (typeof x === 'number' ? { as_int: x } : { as_name: x })) });
const None: J = { as_none: true };

function symInt(s: Size, hint?: number): J {
  return typeof s === 'number' ? { as_int: s } : { as_expr: { expr_str: s, hint: hint === undefined ? null : { as_int: hint } } };
}

function meta(dtype: number, sizes: Size[], strides?: number[], offset = 0): J {
  const contiguous: number[] = [];
  for (let i = sizes.length - 1, s = 1; i >= 0; i--) {
    contiguous[i] = s;
    s *= typeof sizes[i] === 'number' ? (sizes[i] as number) : 1;
  }
  return {
    dtype,
    sizes: sizes.map((s) => symInt(s)),
    requires_grad: false,
    device: { type: 'cpu', index: null },
    strides: (strides ?? contiguous).map((s) => ({ as_int: s })),
    storage_offset: { as_int: offset },
    layout: 7,
  };
}

function node(name: string, target: string, inputs: [string, J][], outputs: J[] = [T(name)]): J {
  return {
    target,
    inputs: inputs.map(([n, arg]) => ({ name: n, arg, kind: 1 })),
    outputs,
    metadata: {},
    is_hop_single_tensor_return: null,
    name,
  };
}

interface ProgramSpec {
  inputSpecs: J[];
  placeholders?: J[];
  nodes: J[];
  outputs: string[];
  values: Record<string, J>;
  symInts?: Record<string, J>;
  ranges?: Record<string, { min_val: unknown; max_val: unknown }>;
}

function program(p: ProgramSpec): J {
  return {
    graph_module: {
      graph: {
        inputs: p.placeholders ?? p.inputSpecs.map((s) => {
          const body = Object.values(s)[0] as J;
          const arg = body.arg as J;
          return 'as_tensor' in arg || !('name' in arg) ? arg : { as_tensor: arg };
        }),
        outputs: p.outputs.map((o) => T(o)),
        nodes: p.nodes,
        tensor_values: p.values,
        sym_int_values: p.symInts ?? {},
        sym_bool_values: {},
        is_single_tensor_return: false,
        custom_obj_values: {},
        sym_float_values: {},
      },
      signature: { input_specs: p.inputSpecs, output_specs: p.outputs.map((o) => ({ user_output: { arg: T(o) } })) },
      module_call_graph: [],
      metadata: {},
      treespec_namedtuple_fields: {},
    },
    opset_version: { aten: 10 },
    range_constraints: p.ranges ?? {},
    schema_version: { major: 8, minor: 17 },
    verifiers: ['TRAINING'],
    torch_version: '2.11.0',
    guards_code: [],
  };
}

const userInput = (name: string): J => ({ user_input: { arg: T(name) } });
const parameter = (name: string, fqn: string): J => ({ parameter: { arg: { name }, parameter_name: fqn } });
const buffer = (name: string, fqn: string): J => ({ buffer: { arg: { name }, buffer_name: fqn, persistent: true } });
const tensorConstant = (name: string, fqn: string): J => ({ tensor_constant: { arg: { name }, tensor_constant_name: fqn } });

interface Payload {
  file: string;
  bytes: Uint8Array;
  meta: J;
}

function f32(values: number[]): Uint8Array {
  return new Uint8Array(new Float32Array(values).buffer);
}

function archive(prog: J, weights: Record<string, Payload> = {}, constants: Record<string, Payload> = {}, root = 'm'): Uint8Array {
  const enc = (x: unknown): Uint8Array => new TextEncoder().encode(typeof x === 'string' ? x : JSON.stringify(x));
  const files: Record<string, Uint8Array> = {
    [`${root}/archive_format`]: enc('pt2'),
    [`${root}/archive_version`]: enc('0'),
    [`${root}/byteorder`]: enc('little'),
    [`${root}/models/model.json`]: enc(prog),
  };
  const config = (payloads: Record<string, Payload>, isParam: boolean): J => ({
    config: Object.fromEntries(Object.entries(payloads).map(([fqn, p]) => [fqn, { path_name: p.file, is_param: isParam, use_pickle: false, tensor_meta: p.meta }])),
  });
  for (const p of Object.values(weights)) files[`${root}/data/weights/${p.file}`] = p.bytes;
  for (const p of Object.values(constants)) files[`${root}/data/constants/${p.file}`] = p.bytes;
  files[`${root}/data/weights/model_weights_config.json`] = enc(config(weights, true));
  files[`${root}/data/constants/model_constants_config.json`] = enc(config(constants, false));
  return zipSync(files, { level: 0 });
}

function errorOf(fn: () => unknown, code: string): string {
  try {
    fn();
  } catch (e) {
    expect(e).toBeInstanceOf(TensorRTNodeError);
    if ((e as TensorRTNodeError).code !== code) throw new Error(`expected ${code}, got ${(e as TensorRTNodeError).code}: ${(e as Error).message}`);
    return (e as Error).message;
  }
  throw new Error(`expected ${code}, nothing was thrown`);
}

const tensor = (shape: number[], values: number[]): Tensor => Tensor.from('float32', shape, values);

// ---------------------------------------------------------------------------------------

describe('weights', () => {
  test('strided storage with an offset becomes a contiguous tensor', () => {
    // Storage 0..11; "w" is a [2, 3] view with strides [1, 2] starting at element 1: w[i][j] = 1 + i + 2j.
    const storage: Payload = { file: 'weight_0', bytes: f32([...Array(12).keys()]), meta: meta(FLOAT, [2, 3], [1, 2], 1) };
    const prog = program({
      inputSpecs: [parameter('p_w', 'w'), userInput('x')],
      nodes: [node('add', 'torch.ops.aten.add.Tensor', [['self', T('x')], ['other', T('p_w')]])],
      outputs: ['add'],
      values: { p_w: meta(FLOAT, [2, 3]), x: meta(FLOAT, [2, 3]), add: meta(FLOAT, [2, 3]) },
    });
    const g = loadPt2(archive(prog, { w: storage }), { decompose: false });
    expect(findProblems(g)).toEqual([]);
    const [out] = interpret(g, [tensor([2, 3], [0, 0, 0, 0, 0, 0])]);
    expect(out!.toArray()).toEqual([1, 3, 5, 2, 4, 6]);
  });

  test('a tied storage (a slice of another weight\'s file) and an empty (fake) storage, which loads as zeros', () => {
    const storage = f32([...Array(12).keys()]);
    const prog = program({
      inputSpecs: [parameter('p_t', 't'), buffer('b_e', 'e'), userInput('x')],
      nodes: [
        node('add', 'torch.ops.aten.add.Tensor', [['self', T('x')], ['other', T('p_t')]]),
        node('add_1', 'torch.ops.aten.add.Tensor', [['self', T('add')], ['other', T('b_e')]]),
      ],
      outputs: ['add_1'],
      values: { p_t: meta(FLOAT, [4]), b_e: meta(FLOAT, [4]), x: meta(FLOAT, [4]), add: meta(FLOAT, [4]), add_1: meta(FLOAT, [4]) },
    });
    const weights = {
      t: { file: 'weight_0', bytes: storage, meta: meta(FLOAT, [4], [1], 8) },
      e: { file: 'weight_1', bytes: new Uint8Array(0), meta: meta(FLOAT, [4]) },
    };
    const g = loadPt2(archive(prog, weights));
    expect(interpret(g, [tensor([4], [1, 1, 1, 1])])[0]!.toArray()).toEqual([9, 10, 11, 12]);
    const origins = g.nodes.filter((n) => n.kind === 'constant').map((n) => [n.meta.fqn, n.origin]);
    expect(origins).toEqual([
      ['t', 'parameter'],
      ['e', 'buffer'],
    ]);
  });

  test('non-persistent buffers and tensor constants come from the constants config; complex64 data', () => {
    const c = new Float32Array([1, 2, 3, 4]); // two complex64: 1+2i, 3+4i
    const prog = program({
      inputSpecs: [tensorConstant('c_lifted_tensor_0', 'lifted_tensor_0'), userInput('z')],
      nodes: [node('mul', 'torch.ops.aten.mul.Tensor', [['self', T('z')], ['other', T('c_lifted_tensor_0')]])],
      outputs: ['mul'],
      values: { c_lifted_tensor_0: meta(COMPLEXFLOAT, [2]), z: meta(COMPLEXFLOAT, [2]), mul: meta(COMPLEXFLOAT, [2]) },
    });
    const g = loadPt2(archive(prog, {}, { lifted_tensor_0: { file: 'tensor_0', bytes: new Uint8Array(c.buffer), meta: meta(COMPLEXFLOAT, [2]) } }));
    // (1+2i)(0+1i) = -2+1i; (3+4i)(2+0i) = 6+8i
    const [out] = interpret(g, [Tensor.from('complex64', [2], [0, 1, 2, 0])]);
    expect(out!.dtype).toBe('complex64');
    expect(out!.toArray()).toEqual([-2, 1, 6, 8]);
  });
});

describe('complex values', () => {
  test('polar, complex mul and view_as_real on complex64 inputs', () => {
    const prog = program({
      inputSpecs: [userInput('r'), userInput('theta'), userInput('z')],
      nodes: [
        node('polar', 'torch.ops.aten.polar.default', [['abs', T('r')], ['angle', T('theta')]]),
        node('mul', 'torch.ops.aten.mul.Tensor', [['self', T('polar')], ['other', T('z')]]),
        node('view_as_real', 'torch.ops.aten.view_as_real.default', [['self', T('mul')]]),
      ],
      outputs: ['view_as_real', 'mul'],
      values: {
        r: meta(FLOAT, [2]),
        theta: meta(FLOAT, [2]),
        z: meta(COMPLEXFLOAT, [2]),
        polar: meta(COMPLEXFLOAT, [2]),
        mul: meta(COMPLEXFLOAT, [2]),
        view_as_real: meta(FLOAT, [2, 2]),
      },
    });
    const g = loadPt2(archive(prog));
    // polar(1, 0) = 1; polar(2, pi/2) = 2i; times (1+i) and 1: 1+i and 2i.
    const [real, complex] = interpret(g, [tensor([2], [1, 2]), tensor([2], [0, Math.PI / 2]), Tensor.from('complex64', [2], [1, 1, 1, 0])]);
    expect([...real!.shape]).toEqual([2, 2]);
    expect(complex!.dtype).toBe('complex64');
    const expected = [1, 1, 0, 2];
    real!.toArray().forEach((v, i) => expect(v).toBeCloseTo(expected[i]!, 6));
    complex!.toArray().forEach((v, i) => expect(v).toBeCloseTo(expected[i]!, 6));
  });
});

describe('symbols', () => {
  test('ranges: bounds, unbounded (null or int_oo) maximum, symbols without a constraint', () => {
    const prog = program({
      inputSpecs: [userInput('x'), userInput('y')],
      nodes: [node('relu', 'torch.ops.aten.relu.default', [['self', T('x')]]), node('relu_1', 'torch.ops.aten.relu.default', [['self', T('y')]])],
      outputs: ['relu', 'relu_1'],
      values: {
        x: meta(FLOAT, ["Symbol('s0', positive=True, integer=True)", 4]),
        y: meta(FLOAT, ['s1', 's2']),
        relu: meta(FLOAT, ['s0', 4]),
        relu_1: meta(FLOAT, ['s1', 's2']),
      },
      ranges: { s0: { min_val: 2, max_val: null }, s1: { min_val: 1, max_val: 'int_oo' } },
    });
    const g = loadPt2(archive(prog));
    expect(Object.fromEntries(g.symbols)).toEqual({ s0: { min: 2, max: Infinity }, s1: { min: 1, max: Infinity }, s2: { min: 0, max: Infinity } });
    expect(printGraph(g)).toContain('graph model(%x: float32[s0, 4], %y: float32[s1, s2]):');
  });

  test('SymInt arithmetic (_operator.*, torch.sym_max) becomes sym.*; comparisons and assertions are dropped', () => {
    const s = "Symbol('s0', positive=True, integer=True)";
    const prog = program({
      inputSpecs: [userInput('x')],
      nodes: [
        node('sym_size_int', 'torch.ops.aten.sym_size.int', [['self', T('x')], ['dim', I(0)]], [SymI('sym_size_int')]),
        node('floordiv', '_operator.floordiv', [['a', SymI('sym_size_int')], ['b', I(2)]], [SymI('floordiv')]),
        node('sym_max', 'torch.sym_max', [['a', SymI('floordiv')], ['b', I(1)]], [SymI('sym_max')]),
        node('ge', '_operator.ge', [['a', SymI('sym_size_int')], ['b', I(2)]], [{ as_sym_bool: { as_name: 'ge' } }]),
        node('_assert_scalar_default', 'torch.ops.aten._assert_scalar.default', [['self', { as_sym_bool: { as_name: 'ge' } }], ['assert_msg', { as_string: 'x' }]], []),
        node('view', 'torch.ops.aten.view.default', [['self', T('x')], ['size', SymInts(['floordiv', 2, 3])]]),
        node('slice_1', 'torch.ops.aten.slice.Tensor', [['self', T('view')], ['dim', I(0)], ['start', I(0)], ['end', SymI('sym_max')]]),
      ],
      outputs: ['slice_1'],
      values: {
        x: meta(FLOAT, [s, 3]),
        view: meta(FLOAT, ['FloorDiv(s0, 2)', 2, 3]),
        slice_1: meta(FLOAT, ['Max(1, FloorDiv(s0, 2))', 2, 3]),
      },
      symInts: { sym_size_int: symInt(s, 4), floordiv: symInt('FloorDiv(s0, 2)', 2), sym_max: symInt('Max(1, FloorDiv(s0, 2))', 2) },
      ranges: { s0: { min_val: 2, max_val: 64 } },
    });
    const g = loadPt2(archive(prog));
    const targets = g.calls().map((n) => n.target);
    expect(targets).toContain('sym.floordiv');
    expect(targets.some((t) => t.includes('assert') || t.includes('ge'))).toBe(false);
    expect(printGraph(g)).toContain('SymInt(s0//2) = sym.floordiv(');
    const x = tensor([4, 3], [...Array(12).keys()]);
    const [out] = interpret(g, [x]);
    expect([...out!.shape]).toEqual([2, 2, 3]);
    expect(out!.toArray()).toEqual([...Array(12).keys()]);
  });

  test('SymInt graph inputs are not supported', () => {
    const prog = program({
      inputSpecs: [{ user_input: { arg: { as_sym_int: { as_name: 'n' } } } }],
      placeholders: [{ as_sym_int: { as_name: 'n' } }],
      nodes: [],
      outputs: [],
      values: {},
    });
    expect(errorOf(() => loadPt2(archive(prog)), 'E_UNSUPPORTED_OP')).toMatch(/user input 0 is as_sym_int/);
  });
});

describe('nodes', () => {
  test('in-place ops become functional; later reads of the mutated name see the new value', () => {
    const prog = program({
      inputSpecs: [userInput('x')],
      nodes: [
        node('neg', 'torch.ops.aten.neg.default', [['self', T('x')]]),
        node('relu_', 'torch.ops.aten.relu_.default', [['self', T('neg')]]),
        // Reads "neg" after relu_ mutated it: PyTorch sees the relu'd values.
        node('add', 'torch.ops.aten.add.Tensor', [['self', T('neg')], ['other', T('relu_')]]),
      ],
      outputs: ['add'],
      values: { x: meta(FLOAT, [3]), neg: meta(FLOAT, [3]), relu_: meta(FLOAT, [3]), add: meta(FLOAT, [3]) },
    });
    const g = loadPt2(archive(prog));
    expect(g.calls().map((n) => n.target)).toEqual(['aten.neg.default', 'aten.relu.default', 'aten.add.Tensor']);
    expect(interpret(g, [tensor([3], [1, -2, 3])])[0]!.toArray()).toEqual([0, 4, 0]);
  });

  test('in-place updates of state or through a view that is read later are unsupported', () => {
    const onBuffer = program({
      inputSpecs: [buffer('b_count', 'count'), userInput('x')],
      nodes: [
        node('add_', 'torch.ops.aten.add_.Tensor', [['self', T('b_count')], ['other', T('x')]]),
        node('mul', 'torch.ops.aten.mul.Tensor', [['self', T('x')], ['other', T('add_')]]),
      ],
      outputs: ['mul'],
      values: { b_count: meta(FLOAT, [2]), x: meta(FLOAT, [2]), add_: meta(FLOAT, [2]), mul: meta(FLOAT, [2]) },
    });
    const w = { count: { file: 'weight_0', bytes: f32([0, 0]), meta: meta(FLOAT, [2]) } };
    expect(errorOf(() => loadPt2(archive(onBuffer, w)), 'E_UNSUPPORTED_OP')).toMatch(/pt2 node "add_" .* mutates buffer "count" in place/);

    const throughView = program({
      inputSpecs: [userInput('x')],
      nodes: [
        node('neg', 'torch.ops.aten.neg.default', [['self', T('x')]]),
        node('view', 'torch.ops.aten.view.default', [['self', T('neg')], ['size', Ints([4])]]),
        node('relu_', 'torch.ops.aten.relu_.default', [['self', T('view')]]),
        node('mul', 'torch.ops.aten.mul.Tensor', [['self', T('neg')], ['other', I(2)]]),
      ],
      outputs: ['mul', 'relu_'],
      values: { x: meta(FLOAT, [2, 2]), neg: meta(FLOAT, [2, 2]), view: meta(FLOAT, [4]), relu_: meta(FLOAT, [4]), mul: meta(FLOAT, [2, 2]) },
    });
    expect(errorOf(() => loadPt2(archive(throughView)), 'E_UNSUPPORTED_OP')).toMatch(/mutates "view", a view of "neg", which is read afterwards/);
  });

  test('slice assignment (fill_ through slice and select views, as torch.export leaves it): later reads see the update', async () => {
    // base = -x; base[1:3, 0:2] = 5 (slice → slice → fill_.Scalar); base[:, 3] = c (select → fill_.Tensor
    // with a lifted 0-d constant); the views are taken afresh each time and base is read at the end.
    const prog = program({
      inputSpecs: [tensorConstant('c_lifted_tensor_0', 'lifted_tensor_0'), userInput('x')],
      nodes: [
        node('base', 'torch.ops.aten.neg.default', [['self', T('x')]]),
        node('slice_1', 'torch.ops.aten.slice.Tensor', [['self', T('base')], ['dim', I(0)], ['start', I(1)], ['end', I(3)]]),
        node('slice_2', 'torch.ops.aten.slice.Tensor', [['self', T('slice_1')], ['dim', I(1)], ['start', I(0)], ['end', I(2)]]),
        node('fill_', 'torch.ops.aten.fill_.Scalar', [['self', T('slice_2')], ['value', F(5)]]),
        node('select', 'torch.ops.aten.select.int', [['self', T('base')], ['dim', I(1)], ['index', I(3)]]),
        node('fill__1', 'torch.ops.aten.fill_.Tensor', [['self', T('select')], ['value', T('c_lifted_tensor_0')]]),
        node('mul', 'torch.ops.aten.mul.Tensor', [['self', T('base')], ['other', I(2)]]),
      ],
      outputs: ['mul'],
      values: {
        c_lifted_tensor_0: meta(FLOAT, []),
        x: meta(FLOAT, [4, 4]),
        base: meta(FLOAT, [4, 4]),
        slice_1: meta(FLOAT, [2, 4]),
        slice_2: meta(FLOAT, [2, 2]),
        fill_: meta(FLOAT, [2, 2]),
        select: meta(FLOAT, [4]),
        fill__1: meta(FLOAT, [4]),
        mul: meta(FLOAT, [4, 4]),
      },
    });
    const g = loadPt2(archive(prog, {}, { lifted_tensor_0: { file: 'tensor_0', bytes: f32([-7]), meta: meta(FLOAT, []) } }));
    expect(findProblems(g)).toEqual([]);
    const x = Array.from({ length: 16 }, (_, i) => i);
    const expected = x.map((v, i) => {
      const [r, c] = [Math.floor(i / 4), i % 4];
      const b = c === 3 ? -7 : r >= 1 && r < 3 && c < 2 ? 5 : -v;
      return 2 * b;
    });
    expect(interpret(g, [tensor([4, 4], x)])[0]!.toArray()).toEqual(expected);
    expect(g.calls().map((n) => n.target)).toContain('aten.slice_scatter.default');
    expect(g.calls().map((n) => n.target)).toContain('aten.select_scatter.default');
    // Compiled, the fills and scatters convert (fill is decomposed into masked_fill): one engine segment.
    const compiled = await compile(archive(prog, {}, { lifted_tensor_0: { file: 'tensor_0', bytes: f32([-7]), meta: meta(FLOAT, []) } }), { backend: 'reference' });
    try {
      expect(compiled.report.segments.map((seg) => seg.kind)).toEqual(['engine']);
      expect((await compiled.run([tensor([4, 4], x)]))[0]!.toArray()).toEqual(expected);
    } finally {
      compiled.dispose();
    }
  }, 60_000);

  test('copy_ into a slice of a new tensor (BART\'s shift_tokens_right): later reads see the copy, broadcast and cast', async () => {
    // out = zeros_like(x, int64); out[:, 1:] = x[:, :-1] (a float tensor, cast by copy_); out + 1.
    const prog = program({
      inputSpecs: [userInput('x')],
      nodes: [
        node('zeros', 'torch.ops.aten.zeros_like.default', [['self', T('x')], ['dtype', { as_scalar_type: LONG }]]),
        node('src', 'torch.ops.aten.slice.Tensor', [['self', T('x')], ['dim', I(1)], ['start', I(0)], ['end', I(-1)]]),
        node('dst', 'torch.ops.aten.slice.Tensor', [['self', T('zeros')], ['dim', I(1)], ['start', I(1)], ['end', I(9223372036854775807)]]),
        node('copy_', 'torch.ops.aten.copy_.default', [['self', T('dst')], ['src', T('src')]]),
        node('add', 'torch.ops.aten.add.Tensor', [['self', T('zeros')], ['other', I(1)]]),
      ],
      outputs: ['add'],
      values: { x: meta(FLOAT, [2, 4]), zeros: meta(LONG, [2, 4]), src: meta(FLOAT, [2, 3]), dst: meta(LONG, [2, 3]), copy_: meta(LONG, [2, 3]), add: meta(LONG, [2, 4]) },
    });
    const x = [1.5, 2, 3, 4, 5, 6, 7.25, 8];
    const expected = [1, 2, 3, 4, 1, 6, 7, 8];
    const g = loadPt2(archive(prog));
    expect(interpret(g, [tensor([2, 4], x)])[0]!.toArray().map(Number)).toEqual(expected);
    const compiled = await compile(archive(prog), { backend: 'reference', minBlockSize: 1 });
    try {
      expect(compiled.report.segments.map((seg) => seg.kind)).toEqual(['engine']);
      expect((await compiled.run([tensor([2, 4], x)]))[0]!.toArray().map(Number)).toEqual(expected);
    } finally {
      compiled.dispose();
    }
  }, 60_000);

  test('an update through a slice while another, older view of the same tensor is read afterwards is refused', () => {
    const prog = program({
      inputSpecs: [userInput('x')],
      nodes: [
        node('base', 'torch.ops.aten.neg.default', [['self', T('x')]]),
        node('older', 'torch.ops.aten.slice.Tensor', [['self', T('base')], ['dim', I(0)], ['start', I(0)], ['end', I(2)]]),
        node('part', 'torch.ops.aten.slice.Tensor', [['self', T('base')], ['dim', I(0)], ['start', I(1)], ['end', I(3)]]),
        node('fill_', 'torch.ops.aten.fill_.Scalar', [['self', T('part')], ['value', F(1)]]),
        node('mul', 'torch.ops.aten.mul.Tensor', [['self', T('older')], ['other', I(2)]]),
      ],
      outputs: ['mul', 'base'],
      values: { x: meta(FLOAT, [4]), base: meta(FLOAT, [4]), older: meta(FLOAT, [2]), part: meta(FLOAT, [2]), fill_: meta(FLOAT, [2]), mul: meta(FLOAT, [2]) },
    });
    expect(errorOf(() => loadPt2(archive(prog)), 'E_UNSUPPORTED_OP')).toMatch(/mutates "part", a view of "base", which has another view "older" that is read afterwards/);
  });

  test('a Python number in a Tensor argument: the Scalar overload, else a 0-d constant', () => {
    const prog = program({
      inputSpecs: [userInput('x')],
      nodes: [
        node('add', 'torch.ops.aten.add.Tensor', [['self', T('x')], ['other', F(0.5)]]),
        node('maximum', 'torch.ops.aten.maximum.default', [['self', T('add')], ['other', F(1)]]),
      ],
      outputs: ['maximum'],
      values: { x: meta(FLOAT, [3]), add: meta(FLOAT, [3]), maximum: meta(FLOAT, [3]) },
    });
    const g = loadPt2(archive(prog));
    expect(g.calls().map((n) => n.target)).toEqual(['aten.add.Scalar', 'aten.maximum.default']);
    expect(interpret(g, [tensor([3], [0, 1, 2])])[0]!.toArray()).toEqual([1, 1.5, 2.5]);
  });

  test('an integer-valued Python float keeps PyTorch’s dtype (int tensor * 2.0 is float32; full(.., 1.0) is float32)', () => {
    const prog = program({
      inputSpecs: [userInput('ids')],
      nodes: [
        node('mul', 'torch.ops.aten.mul.Tensor', [['self', T('ids')], ['other', F(2)]]),
        node('full', 'torch.ops.aten.full.default', [['size', Ints([3])], ['fill_value', F(1)]]),
        node('add', 'torch.ops.aten.add.Tensor', [['self', T('mul')], ['other', T('full')]]),
      ],
      outputs: ['add'],
      values: { ids: meta(LONG, [3]), mul: meta(FLOAT, [3]), full: meta(FLOAT, [3]), add: meta(FLOAT, [3]) },
    });
    const g = loadPt2(archive(prog));
    const [out] = interpret(g, [Tensor.from('int64', [3], [1n, 2n, 3n])]);
    expect(out!.dtype).toBe('float32');
    expect(out!.toArray()).toEqual([3, 5, 7]);
  });

  test('multi-output ops: a Tensor[] output (as_tensors) and getitem', () => {
    const prog = program({
      inputSpecs: [userInput('x')],
      nodes: [
        node('split_with_sizes', 'torch.ops.aten.split_with_sizes.default', [['self', T('x')], ['split_sizes', Ints([1, 2])]], [
          { as_tensors: [{ name: 'getitem' }, { name: 'getitem_1' }] },
        ]),
        node('sub', 'torch.ops.aten.sub.Tensor', [['self', T('getitem_1')], ['other', T('getitem')]]),
      ],
      outputs: ['sub'],
      values: { x: meta(FLOAT, [3]), getitem: meta(FLOAT, [1]), getitem_1: meta(FLOAT, [2]), sub: meta(FLOAT, [2]) },
    });
    const g = loadPt2(archive(prog));
    expect(interpret(g, [tensor([3], [1, 5, 7])])[0]!.toArray()).toEqual([4, 6]);
  });

  test('several outputs named one by one (native_layer_norm), unused ones pruned', () => {
    const prog = program({
      inputSpecs: [userInput('x')],
      nodes: [
        node('native_layer_norm', 'torch.ops.aten.native_layer_norm.default', [['input', T('x')], ['normalized_shape', Ints([2])], ['weight', None], ['bias', None], ['eps', F(0)]], [
          T('getitem'),
          T('getitem_1'),
          T('getitem_2'),
        ]),
      ],
      outputs: ['getitem'],
      values: { x: meta(FLOAT, [1, 2]), getitem: meta(FLOAT, [1, 2]), getitem_1: meta(FLOAT, [1, 1]), getitem_2: meta(FLOAT, [1, 1]) },
    });
    const g = loadPt2(archive(prog));
    expect(interpret(g, [tensor([1, 2], [1, 3])])[0]!.toArray()).toEqual([-1, 1]);
  });

  test('_assert_tensor_metadata is checked against the value’s dtype', () => {
    const prog = program({
      inputSpecs: [userInput('x')],
      nodes: [
        node('_assert_tensor_metadata_default', 'torch.ops.aten._assert_tensor_metadata.default', [['a', T('x')], ['dtype', { as_scalar_type: LONG }]], []),
        node('relu', 'torch.ops.aten.relu.default', [['self', T('x')]]),
      ],
      outputs: ['relu'],
      values: { x: meta(FLOAT, [2]), relu: meta(FLOAT, [2]) },
    });
    expect(errorOf(() => loadPt2(archive(prog)), 'E_BAD_MODEL')).toMatch(/asserts %x is int64, but it is float32/);
  });

  test('a positional argument under a name the schema does not know binds by position; unknown null keywords are ignored', () => {
    const prog = program({
      inputSpecs: [userInput('x')],
      nodes: [
        {
          ...node('gelu', 'torch.ops.aten.gelu.default', []),
          inputs: [
            { name: 'input', arg: T('x'), kind: 1 },
            { name: 'approximate', arg: { as_string: 'tanh' }, kind: 2 },
            { name: 'generator', arg: None, kind: 2 },
          ],
        },
      ],
      outputs: ['gelu'],
      values: { x: meta(FLOAT, [1]), gelu: meta(FLOAT, [1]) },
    });
    const g = loadPt2(archive(prog));
    expect(g.calls()[0]!.args.approximate).toBe('tanh');
  });

  test('a program-level constant input and a specialized non-tensor user input', () => {
    const prog = program({
      inputSpecs: [userInput('x'), { user_input: { arg: I(3) } }, { constant_input: { name: 'alpha', value: { as_int: 2 } } }],
      placeholders: [T('x'), I(3), { as_int: 2 }],
      nodes: [node('add', 'torch.ops.aten.add.Tensor', [['self', T('x')], ['other', T('x')], ['alpha', { as_sym_int: { as_name: 'alpha' } }]])],
      outputs: ['add'],
      values: { x: meta(FLOAT, [1]), add: meta(FLOAT, [1]) },
    });
    const g = loadPt2(archive(prog));
    expect(g.inputs.map((v) => v.name)).toEqual(['x']);
    expect(interpret(g, [tensor([1], [5])])[0]!.toArray()).toEqual([15]);
  });

  test('an archive with several programs needs modelName; the root folder may have any name', () => {
    const prog = program({
      inputSpecs: [userInput('x')],
      nodes: [node('relu', 'torch.ops.aten.relu.default', [['self', T('x')]])],
      outputs: ['relu'],
      values: { x: meta(FLOAT, [1]), relu: meta(FLOAT, [1]) },
    });
    const enc = (x: unknown): Uint8Array => new TextEncoder().encode(JSON.stringify(x));
    const two = zipSync({ 'arch/archive_format': new TextEncoder().encode('pt2'), 'arch/models/a.json': enc(prog), 'arch/models/b.json': enc(prog) }, { level: 0 });
    expect(errorOf(() => loadPt2(two), 'E_BAD_MODEL')).toMatch(/several programs \(a, b\)/);
    expect(loadPt2(two, { modelName: 'b' }).name).toBe('b');
  });
});

describe('wrap_with_set_grad_enabled', () => {
  // The region computes (x + x) * x and passes x through; torch.export names the two results
  // getitem and getitem_1 (no getitem nodes are serialized for a higher-order op). Both the
  // region and the outer graph define "add": the region's is renamed apart.
  const region = {
    inputs: [T('x_1')],
    outputs: [T('mul'), T('x_1')],
    nodes: [
      node('add', 'torch.ops.aten.add.Tensor', [['self', T('x_1')], ['other', T('x_1')]]),
      node('mul', 'torch.ops.aten.mul.Tensor', [['self', T('add')], ['other', T('x_1')]]),
    ],
    tensor_values: { x_1: meta(FLOAT, [2, 2]), add: meta(FLOAT, [2, 2]), mul: meta(FLOAT, [2, 2]) },
    sym_int_values: {},
  };
  const prog = program({
    inputSpecs: [userInput('x')],
    nodes: [
      node('wrap_with_set_grad_enabled', 'torch.ops.higher_order.wrap_with_set_grad_enabled', [['', B(false)], ['', { as_graph: { name: 'submod_1', graph: region } }], ['', T('x')]], [
        { as_tensors: [{ name: 'getitem' }, { name: 'getitem_1' }] },
      ]),
      node('add', 'torch.ops.aten.add.Tensor', [['self', T('getitem')], ['other', T('getitem_1')]]),
    ],
    outputs: ['add'],
    values: { x: meta(FLOAT, [2, 2]), getitem: meta(FLOAT, [2, 2]), getitem_1: meta(FLOAT, [2, 2]), add: meta(FLOAT, [2, 2]) },
  });

  test('the region is inlined: grad mode means nothing to inference', () => {
    const g = loadPt2(archive(prog), { decompose: false });
    expect(findProblems(g)).toEqual([]);
    expect(g.calls().map((n) => n.target)).toEqual(['aten.add.Tensor', 'aten.mul.Tensor', 'aten.clone.default', 'aten.add.Tensor']);
    const [out] = interpret(g, [tensor([2, 2], [1, 2, -1, 0.5])]);
    // 2x² + x
    expect(out!.toArray()).toEqual([3, 10, 1, 1]);
  });

  test('a region whose outputs do not match the node is E_BAD_MODEL naming the node', () => {
    const broken = JSON.parse(JSON.stringify(prog)) as { graph_module: { graph: { nodes: Array<{ outputs: unknown[] }> } } };
    broken.graph_module.graph.nodes[0]!.outputs = [{ as_tensors: [{ name: 'getitem' }] }];
    expect(errorOf(() => loadPt2(archive(broken as unknown as J), { decompose: false }), 'E_BAD_MODEL')).toMatch(/wrap_with_set_grad_enabled.*names 1 outputs, its subgraph gives 2/);
  });
});
