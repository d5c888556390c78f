# Hand computation of the int64 regression table (test/ops/int64-exact.test.ts) with Python
# integers, independent of the TypeScript kernels: `python3 test/ops/int64-cases.py` prints the
# case list pasted into the test, `... shared` the shared input constants above it.
B = 2**53 + 1
MAX = 2**63 - 1
MIN = -2**63
def W(v): return ((v + 2**63) % 2**64) - 2**63
def tdiv(a, b): q = abs(a) // abs(b); return W(q if (a < 0) == (b < 0) else -q)
def fdiv(a, b): return W(a // b)
def pmod(a, b): return a % b
def cfmod(a, b): return a - b * (abs(a) // abs(b) * (1 if (a < 0) == (b < 0) else -1))
def ipow(a, e):
    if e < 0: return 1 if a == 1 else ((1 if e % 2 == 0 else -1) if a == -1 else 0)
    return W(a ** e)

def lit(v):
    if isinstance(v, bool): return 'true' if v else 'false'
    return f'{v}n'
NAMED = {}  # tensor literal -> the name of a shared constant in the test file
def i64(shape, vals):
    text = f"i64({list(shape)}, [{', '.join(lit(v) for v in vals)}])"
    return NAMED.get(text, text)
def boolt(shape, vals): return f"bool({list(shape)}, [{', '.join('1' if v else '0' for v in vals)}])"
def f64(shape, vals): return f"f64({list(shape)}, [{', '.join(repr(float(v)) if v == v else 'NaN' for v in vals)}])"
def i32(shape, vals): return f"i32({list(shape)}, [{', '.join(str(v) for v in vals)}])"

X = [B, MAX, MIN, -B]
Y = [3, 7, -1, -2]
X2 = [B - 1, MAX, MIN + 1, -B + 1]
cases = []
def case(name, target, inputs, args, outputs):
    cases.append(f"  c({name!r}, {target!r}, [{', '.join(inputs)}], (v) => ({{ {args} }}), [{', '.join(outputs)}]),")

SHARED = []
def shared(name, text):
    SHARED.append(f'const {name} = {text};')
    NAMED[text] = name
    return name
x = shared('X', i64([4], X)); y = shared('Y', i64([4], Y)); x2 = shared('X2', i64([4], X2))
two = 'self: v[0], other: v[1]'
case('add', 'aten.add.Tensor', [x, y], two, [i64([4], [W(a + b) for a, b in zip(X, Y)])])
case('add alpha', 'aten.add.Tensor', [x, y], two + ', alpha: 2', [i64([4], [W(a + 2 * b) for a, b in zip(X, Y)])])
case('add x + 0 (issue)', 'aten.add.Tensor', [x, i64([1], [0])], two, [i64([4], X)])
case('add scalar', 'aten.add.Scalar', [x], 'self: v[0], other: 5', [i64([4], [W(a + 5) for a in X])])
case('sub', 'aten.sub.Tensor', [x, y], two, [i64([4], [W(a - b) for a, b in zip(X, Y)])])
case('sub scalar', 'aten.sub.Scalar', [x], 'self: v[0], other: 5', [i64([4], [W(a - 5) for a in X])])
case('rsub', 'aten.rsub.Tensor', [x, y], two, [i64([4], [W(b - a) for a, b in zip(X, Y)])])
case('rsub scalar', 'aten.rsub.Scalar', [x], 'self: v[0], other: 5', [i64([4], [W(5 - a) for a in X])])
case('mul', 'aten.mul.Tensor', [x, y], two, [i64([4], [W(a * b) for a, b in zip(X, Y)])])
case('mul squares', 'aten.mul.Tensor', [x, x], two, [i64([4], [W(a * a) for a in X])])
case('mul scalar', 'aten.mul.Scalar', [x], 'self: v[0], other: 3', [i64([4], [W(a * 3) for a in X])])
case('div trunc', 'aten.div.Tensor_mode', [x, y], two + ", rounding_mode: 'trunc'", [i64([4], [tdiv(a, b) for a, b in zip(X, Y)])])
case('div floor', 'aten.div.Tensor_mode', [x, y], two + ", rounding_mode: 'floor'", [i64([4], [fdiv(a, b) for a, b in zip(X, Y)])])
case('div scalar trunc', 'aten.div.Scalar_mode', [x], "self: v[0], other: -4, rounding_mode: 'trunc'", [i64([4], [tdiv(a, -4) for a in X])])
case('div scalar floor', 'aten.div.Scalar_mode', [x], "self: v[0], other: -4, rounding_mode: 'floor'", [i64([4], [fdiv(a, -4) for a in X])])
case('floor_divide', 'aten.floor_divide.default', [x, y], two, [i64([4], [fdiv(a, b) for a, b in zip(X, Y)])])
case('floor_divide scalar', 'aten.floor_divide.Scalar', [x], 'self: v[0], other: -4', [i64([4], [fdiv(a, -4) for a in X])])
case('remainder', 'aten.remainder.Tensor', [x, y], two, [i64([4], [pmod(a, b) for a, b in zip(X, Y)])])
case('remainder scalar', 'aten.remainder.Scalar', [x], 'self: v[0], other: -4', [i64([4], [pmod(a, -4) for a in X])])
Z = [B, -B, 2**62 + 1, -7]
z = i64([4], Z)
case('remainder scalar-tensor', 'aten.remainder.Scalar_Tensor', [z], 'self: 9007199254740992, other: v[0]', [i64([4], [pmod(2**53, b) for b in Z])])
case('fmod', 'aten.fmod.Tensor', [x, y], two, [i64([4], [cfmod(a, b) for a, b in zip(X, Y)])])
case('fmod scalar', 'aten.fmod.Scalar', [x], 'self: v[0], other: -4', [i64([4], [cfmod(a, -4) for a in X])])
P = [3, -3, 2, B]; E = [39, 39, 63, 2]
case('pow', 'aten.pow.Tensor_Tensor', [i64([4], P), i64([4], E)], 'self: v[0], exponent: v[1]', [i64([4], [ipow(a, e) for a, e in zip(P, E)])])
case('pow tensor-scalar', 'aten.pow.Tensor_Scalar', [x], 'self: v[0], exponent: 2', [i64([4], [ipow(a, 2) for a in X])])
E2 = [39, 40, 0, -1]
case('pow scalar-tensor', 'aten.pow.Scalar', [i64([4], E2)], 'self: 3, exponent: v[0]', [i64([4], [ipow(3, e) for e in E2])])
case('maximum', 'aten.maximum.default', [x, y], two, [i64([4], [max(a, b) for a, b in zip(X, Y)])])
case('maximum with INT64_MAX (issue)', 'aten.maximum.default', [x, i64([1], [MAX])], two, [i64([4], [MAX] * 4)])
case('maximum of neighbours', 'aten.maximum.default', [x, x2], two, [i64([4], [max(a, b) for a, b in zip(X, X2)])])
case('minimum', 'aten.minimum.default', [x, x2], two, [i64([4], [min(a, b) for a, b in zip(X, X2)])])
case('bitwise_not', 'aten.bitwise_not.default', [x], 'self: v[0]', [i64([4], [~a for a in X])])
case('neg', 'aten.neg.default', [x], 'self: v[0]', [i64([4], [W(-a) for a in X])])
case('abs', 'aten.abs.default', [x], 'self: v[0]', [i64([4], [W(abs(a)) for a in X])])
case('sign', 'aten.sign.default', [x], 'self: v[0]', [i64([4], [(a > 0) - (a < 0) for a in X])])
case('relu', 'aten.relu.default', [x], 'self: v[0]', [i64([4], [max(a, 0) for a in X])])
LO = [B + 1, MAX - 1, MIN + 1, -B + 1]; HI = [B + 2, MAX - 1, MIN + 2, -B + 2]
def clampv(v, lo, hi):
    if lo is not None and v < lo: v = lo
    if hi is not None and v > hi: v = hi
    return v
case('clamp tensor', 'aten.clamp.Tensor', [x, i64([4], LO), i64([4], HI)], 'self: v[0], min: v[1], max: v[2]', [i64([4], [clampv(a, l, h) for a, l, h in zip(X, LO, HI)])])
case('clamp scalar', 'aten.clamp.default', [x], 'self: v[0], min: -9007199254740992, max: 9007199254740992', [i64([4], [clampv(a, -2**53, 2**53) for a in X])])
case('clamp_min tensor', 'aten.clamp_min.Tensor', [x, i64([4], LO)], 'self: v[0], min: v[1]', [i64([4], [clampv(a, l, None) for a, l in zip(X, LO)])])
case('clamp_min scalar', 'aten.clamp_min.default', [x], 'self: v[0], min: -9007199254740992', [i64([4], [clampv(a, -2**53, None) for a in X])])
case('clamp_max tensor', 'aten.clamp_max.Tensor', [x, i64([4], HI)], 'self: v[0], max: v[1]', [i64([4], [clampv(a, None, h) for a, h in zip(X, HI)])])
case('clamp_max scalar', 'aten.clamp_max.default', [x], 'self: v[0], max: 9007199254740992', [i64([4], [clampv(a, None, 2**53) for a in X])])
case('hardtanh', 'aten.hardtanh.default', [x], 'self: v[0]', [i64([4], [clampv(a, -1, 1) for a in X])])
for op, f in [('eq', lambda a, b: a == b), ('ne', lambda a, b: a != b), ('lt', lambda a, b: a < b), ('le', lambda a, b: a <= b), ('gt', lambda a, b: a > b), ('ge', lambda a, b: a >= b)]:
    case(op, f'aten.{op}.Tensor', [x, x2], two, [boolt([4], [f(a, b) for a, b in zip(X, X2)])])
    case(f'{op} scalar', f'aten.{op}.Scalar', [x], 'self: v[0], other: 9007199254740992', [boolt([4], [f(a, 2**53) for a in X])])
C = [True, False, False, True]
cnd = boolt([4], C)
case('where', 'aten.where.self', [cnd, x, x2], 'condition: v[0], self: v[1], other: v[2]', [i64([4], [a if c else b for c, a, b in zip(C, X, X2)])])
case('where scalar self', 'aten.where.ScalarSelf', [cnd, x], 'condition: v[0], self: 5, other: v[1]', [i64([4], [5 if c else b for c, b in zip(C, X)])])
case('where scalar other', 'aten.where.ScalarOther', [cnd, x], 'condition: v[0], self: v[1], other: 5', [i64([4], [a if c else 5 for c, a in zip(C, X)])])
case('where scalars', 'aten.where.Scalar', [cnd], 'condition: v[0], self: -9223372036854775808, other: 4611686018427387904', [i64([4], [MIN if c else 2**62 for c in C])])
case('masked_fill scalar', 'aten.masked_fill.Scalar', [x, cnd], 'self: v[0], mask: v[1], value: 7', [i64([4], [7 if c else a for c, a in zip(C, X)])])
case('masked_fill tensor', 'aten.masked_fill.Tensor', [x, cnd, i64([], [B + 2])], 'self: v[0], mask: v[1], value: v[2]', [i64([4], [B + 2 if c else a for c, a in zip(C, X)])])
# Casts: int64 → float rounds once; float → int64 truncates and saturates.
def f32round(v):
    # nearest float32 to the integer v, ties to even (exact integer arithmetic)
    if v == 0: return 0
    s = -1 if v < 0 else 1; m = abs(v); e = m.bit_length() - 24
    if e <= 0: return v
    q, r = divmod(m, 2**e); h = 2**(e - 1)
    if r > h or (r == h and q % 2 == 1): q += 1
    return s * q * 2**e
def f64round(v):
    s = -1 if v < 0 else 1; m = abs(v); e = m.bit_length() - 53
    if e <= 0: return v
    q, r = divmod(m, 2**e); h = 2**(e - 1)
    if r > h or (r == h and q % 2 == 1): q += 1
    return s * q * 2**e
C1 = [B, 2**54 + 2**30 + 1, MIN, -(2**54 + 2**30 + 1)]
c1 = i64([4], C1)
case('to float64', 'aten._to_copy.default', [c1], "self: v[0], dtype: 'float64'", [f64([4], [f64round(a) for a in C1])])
case('to float32', 'aten.to.dtype', [c1], "self: v[0], dtype: 'float32'", [f"f32([4], [{', '.join(str(f32round(a)) for a in C1)}])"])
case('to int32 (wraps)', 'aten._to_copy.default', [x], "self: v[0], dtype: 'int32'", [i32([4], [((a + 2**31) % 2**32) - 2**31 for a in X])])
F = [1e19, -1e19, float('nan'), 2.0**60, -2.5, 9007199254740992.0]
case('float64 to int64 (saturates)', 'aten._to_copy.default', [f64([6], F)], "self: v[0], dtype: 'int64'", [i64([6], [MAX, MIN, 0, 2**60, -2, 2**53])])
case('type_as', 'aten.type_as.default', [c1, f64([1], [0.0])], 'self: v[0], other: v[1]', [f64([4], [f64round(a) for a in C1])])
for op in ['floor', 'ceil', 'trunc', 'round', 'clone', 'alias', 'detach', 'contiguous']:
    case(op, f'aten.{op}.default', [x], 'self: v[0]', [x])
case('round decimals', 'aten.round.decimals', [x], 'self: v[0], decimals: 0', [x])
case('dropout', 'aten.dropout.default', [x], 'input: v[0], p: 0.5, train: false', [x])
# Reductions.
M = [[B, B, 1], [MAX, 1, MIN]]
m = shared('M', i64([2, 3], M[0] + M[1]))
case('sum', 'aten.sum.default', [x], 'self: v[0]', [i64([], [W(sum(X))])])
case('sum dim', 'aten.sum.dim_IntList', [m], 'self: v[0], dim: [1]', [i64([2], [W(sum(r)) for r in M])])
case('sum of int32 into int64', 'aten.sum.default', [i32([3], [2**31 - 1] * 3)], 'self: v[0]', [i64([], [3 * (2**31 - 1)])])
case('prod', 'aten.prod.default', [i64([3], [B, 3, -1])], 'self: v[0]', [i64([], [W(-3 * B)])])
case('prod dim', 'aten.prod.dim_int', [m], 'self: v[0], dim: 1', [i64([2], [W(B * B), W(MAX * MIN)])])
case('cumsum', 'aten.cumsum.default', [x], 'self: v[0], dim: 0', [i64([4], [W(sum(X[:k + 1])) for k in range(4)])])
case('cumsum onnx exclusive reverse', 'trt.cumsum_onnx', [x], 'self: v[0], dim: 0, exclusive: true, reverse: true', [i64([4], [W(sum(X[k + 1:])) for k in range(4)])])
T = [2**53, B, 2**53, B - 2]
t = shared('T', i64([4], T))
case('amax', 'aten.amax.default', [m], 'self: v[0], dim: [1]', [i64([2], [max(r) for r in M])])
case('amin', 'aten.amin.default', [t], 'self: v[0]', [i64([], [min(T)])])
case('max', 'aten.max.default', [t], 'self: v[0]', [i64([], [max(T)])])
case('min', 'aten.min.default', [x2], 'self: v[0]', [i64([], [min(X2)])])
T2 = [2**53, B, 2**53, B, -B, -B + 1]
t2 = i64([2, 3], T2)
R2 = [T2[:3], T2[3:]]
case('max dim', 'aten.max.dim', [t2], 'self: v[0], dim: 1', [i64([2], [max(r) for r in R2]), i64([2], [r.index(max(r)) for r in R2])])
case('min dim', 'aten.min.dim', [t2], 'self: v[0], dim: 1', [i64([2], [min(r) for r in R2]), i64([2], [r.index(min(r)) for r in R2])])
case('argmax', 'aten.argmax.default', [t], 'self: v[0]', [i64([], [1])])
case('argmin', 'aten.argmin.default', [t], 'self: v[0], dim: 0', [i64([], [3])])
case('argmax last', 'trt.argmax_last', [t], 'self: v[0], dim: 0', [i64([], [1])])
case('argmin last', 'trt.argmin_last', [i64([4], [B, 2**53, B, 2**53])], 'self: v[0], dim: 0', [i64([], [3])])
# Indexing with int64 data.
case('gather', 'aten.gather.default', [m, i64([2, 2], [2, 0, 1, -1])], 'self: v[0], dim: 1, index: v[1]', [i64([2, 2], [1, B, 1, MIN])])
case('index_select', 'aten.index_select.default', [x, i64([3], [3, 0, -3])], 'self: v[0], dim: 0, index: v[1]', [i64([3], [-B, B, MAX])])
case('embedding', 'aten.embedding.default', [i64([4, 1], X), i64([2], [2, 0])], 'weight: v[0], indices: v[1]', [i64([2, 1], [MIN, B])])
case('index', 'aten.index.Tensor', [x, i64([2], [-1, 1])], 'self: v[0], indices: [v[1]]', [i64([2], [-B, MAX])])
case('index_put', 'aten.index_put.default', [x, i64([2], [0, 3]), i64([2], [MAX, 5])], 'self: v[0], indices: [v[1]], values: v[2]', [i64([4], [MAX, MAX, MIN, 5])])
case('index_put accumulate', 'aten.index_put.default', [x, i64([3], [0, 1, 0]), i64([3], [1, 1, 2])], 'self: v[0], indices: [v[1]], values: v[2], accumulate: true', [i64([4], [B + 3, MIN, MIN, -B])])
case('scatter src', 'aten.scatter.src', [x, i64([2], [3, 0]), i64([2], [MAX, MIN])], 'self: v[0], dim: 0, index: v[1], src: v[2]', [i64([4], [MIN, MAX, MIN, MAX])])
case('scatter value', 'aten.scatter.value', [x, i64([1], [2])], 'self: v[0], dim: 0, index: v[1], value: 9007199254740992', [i64([4], [B, MAX, 2**53, -B])])
case('scatter_add', 'aten.scatter_add.default', [x, i64([3], [0, 0, 1]), i64([3], [1, 1, 1])], 'self: v[0], dim: 0, index: v[1], src: v[2]', [i64([4], [B + 2, MIN, MIN, -B])])
case('scatter reduce multiply', 'aten.scatter.reduce', [x, i64([2], [0, 3]), i64([2], [3, -1])], "self: v[0], dim: 0, index: v[1], src: v[2], reduce: 'multiply'", [i64([4], [W(3 * B), MAX, MIN, B])])
case('scatter_reduce amax', 'aten.scatter_reduce.two', [x, i64([2], [0, 0]), i64([2], [B + 1, B - 1])], "self: v[0], dim: 0, index: v[1], src: v[2], reduce: 'amax'", [i64([4], [B + 1, MAX, MIN, -B])])
case('scatter_reduce amin', 'aten.scatter_reduce.two', [x, i64([2], [3, 3]), i64([2], [-B + 1, -B - 1])], "self: v[0], dim: 0, index: v[1], src: v[2], reduce: 'amin'", [i64([4], [B, MAX, MIN, -B - 1])])
case('scatter_reduce sum', 'aten.scatter_reduce.two', [x, i64([2], [1, 1]), i64([2], [1, 1])], "self: v[0], dim: 0, index: v[1], src: v[2], reduce: 'sum'", [i64([4], [B, MIN + 1, MIN, -B])])
case('scatter_reduce prod', 'aten.scatter_reduce.two', [x, i64([2], [0, 0]), i64([2], [2, 2])], "self: v[0], dim: 0, index: v[1], src: v[2], reduce: 'prod'", [i64([4], [W(4 * B), MAX, MIN, -B])])
case('select_scatter', 'aten.select_scatter.default', [m, i64([3], [MIN, MAX, B])], 'self: v[0], src: v[1], dim: 0, index: -1', [i64([2, 3], M[0] + [MIN, MAX, B])])
case('slice_scatter', 'aten.slice_scatter.default', [x, i64([2], [MIN, MAX])], 'self: v[0], src: v[1], dim: 0, start: 1, end: 4, step: 2', [i64([4], [B, MIN, MIN, MAX])])
case('gather_nd', 'trt.gather_nd', [m, i64([2, 2], [1, 2, 0, -3])], 'self: v[0], indices: v[1]', [i64([2], [MIN, B])])
case('scatter_nd add', 'trt.scatter_nd', [m, i64([2, 2], [1, 1, 1, 1]), i64([2], [MAX, 1])], "self: v[0], indices: v[1], updates: v[2], reduction: 'add'", [i64([2, 3], M[0] + [MAX, W(1 + MAX + 1), MIN])])
order = sorted(range(4), key=lambda k: (-T[k], k))[:2]
case('topk', 'aten.topk.default', [t], 'self: v[0], k: 2', [i64([2], [T[k] for k in order]), i64([2], order)])
case('one_hot values', 'trt.one_hot', [i64([2], [1, -1]), i64([2], [MIN, MAX])], 'indices: v[0], depth: 3, values: v[1]', [i64([2, 3], [MIN, MAX, MIN, MIN, MIN, MAX])])
# Data movement (exact by construction; checked so a float64 detour would show).
case('view', 'aten.view.default', [x], 'self: v[0], size: [2, 2]', [i64([2, 2], X)])
case('_unsafe_view', 'aten._unsafe_view.default', [x], 'self: v[0], size: [2, 2]', [i64([2, 2], X)])
case('reshape', 'aten.reshape.default', [x], 'self: v[0], shape: [4, 1]', [i64([4, 1], X)])
mm = i64([2, 2], X)
Xt = [X[0], X[2], X[1], X[3]]
case('permute', 'aten.permute.default', [mm], 'self: v[0], dims: [1, 0]', [i64([2, 2], Xt)])
case('transpose', 'aten.transpose.int', [mm], 'self: v[0], dim0: 0, dim1: 1', [i64([2, 2], Xt)])
case('t', 'aten.t.default', [mm], 'self: v[0]', [i64([2, 2], Xt)])
case('flatten', 'aten.flatten.using_ints', [mm], 'self: v[0]', [i64([4], X)])
case('unflatten', 'aten.unflatten.int', [x], 'self: v[0], dim: 0, sizes: [2, 2]', [i64([2, 2], X)])
case('squeeze', 'aten.squeeze.default', [i64([1, 4], X)], 'self: v[0]', [x])
case('squeeze dim', 'aten.squeeze.dim', [i64([1, 4], X)], 'self: v[0], dim: 0', [x])
case('squeeze dims', 'aten.squeeze.dims', [i64([1, 4], X)], 'self: v[0], dim: [0]', [x])
case('unsqueeze', 'aten.unsqueeze.default', [x], 'self: v[0], dim: 0', [i64([1, 4], X)])
case('cat', 'aten.cat.default', [x, x2], 'tensors: [v[0], v[1]]', [i64([8], X + X2)])
case('stack', 'aten.stack.default', [x, x2], 'tensors: [v[0], v[1]]', [i64([2, 4], X + X2)])
case('split', 'aten.split.Tensor', [x], 'self: v[0], split_size: 3', [i64([3], X[:3]), i64([1], X[3:])])
case('split_with_sizes', 'aten.split_with_sizes.default', [x], 'self: v[0], split_sizes: [1, 3]', [i64([1], X[:1]), i64([3], X[1:])])
case('chunk', 'aten.chunk.default', [x], 'self: v[0], chunks: 2', [i64([2], X[:2]), i64([2], X[2:])])
case('unbind', 'aten.unbind.int', [mm], 'self: v[0]', [i64([2], X[:2]), i64([2], X[2:])])
case('expand', 'aten.expand.default', [i64([1, 2], X[:2])], 'self: v[0], size: [2, 2]', [i64([2, 2], X[:2] * 2)])
case('expand_as', 'aten.expand_as.default', [i64([1, 2], X[:2]), mm], 'self: v[0], other: v[1]', [i64([2, 2], X[:2] * 2)])
case('flip', 'aten.flip.default', [x], 'self: v[0], dims: [0]', [i64([4], X[::-1])])
case('repeat', 'aten.repeat.default', [i64([2], X[:2])], 'self: v[0], repeats: [2]', [i64([4], X[:2] * 2)])
case('repeat_interleave', 'aten.repeat_interleave.self_int', [i64([2], X[:2])], 'self: v[0], repeats: 2', [i64([4], [X[0], X[0], X[1], X[1]])])
case('roll', 'aten.roll.default', [x], 'self: v[0], shifts: [1], dims: [0]', [i64([4], X[3:] + X[:3])])
case('narrow', 'aten.narrow.default', [x], 'self: v[0], dim: 0, start: 1, length: 2', [i64([2], X[1:3])])
case('select', 'aten.select.int', [mm], 'self: v[0], dim: 0, index: -1', [i64([2], X[2:])])
case('slice', 'aten.slice.Tensor', [x], 'self: v[0], dim: 0, start: 1, end: 4, step: 2', [i64([2], [X[1], X[3]])])
case('slice onnx', 'trt.slice_onnx', [x], 'self: v[0], dim: 0, start: -1, end: -5, step: -2', [i64([2], [X[3], X[1]])])
case('tril', 'aten.tril.default', [mm], 'self: v[0]', [i64([2, 2], [X[0], 0, X[2], X[3]])])
case('triu', 'aten.triu.default', [mm], 'self: v[0]', [i64([2, 2], [X[0], X[1], 0, X[3]])])
case('constant_pad_nd', 'aten.constant_pad_nd.default', [x], 'self: v[0], pad: [1, 0], value: -9223372036854775808', [i64([5], [MIN] + X)])
case('pad', 'aten.pad.default', [x], "self: v[0], pad: [0, 1], mode: 'constant', value: 4611686018427387904", [i64([5], X + [2**62])])
im = i64([1, 1, 1, 2], X[:2])
case('upsample_nearest2d', 'aten.upsample_nearest2d.vec', [im], 'input: v[0], output_size: [1, 4], scale_factors: null', [i64([1, 1, 1, 4], [X[0], X[0], X[1], X[1]])])
case('resize nearest', 'trt.resize', [im], "self: v[0], size: [1, 4], mode: 'nearest', coordinate_transformation_mode: 'asymmetric', nearest_mode: 'floor'", [i64([1, 1, 1, 4], [X[0], X[0], X[1], X[1]])])
# Creation.
case('full', 'aten.full.default', [], "size: [2], fill_value: -9223372036854775808, dtype: 'int64'", [i64([2], [MIN, MIN])])
case('full_like', 'aten.full_like.default', [x], "self: v[0], fill_value: 4611686018427387904", [i64([4], [2**62] * 4)])
case('new_full', 'aten.new_full.default', [x], "self: v[0], size: [1], fill_value: -9223372036854775808", [i64([1], [MIN])])
for op, val in [('zeros', 0), ('ones', 1)]:
    case(op, f'aten.{op}.default', [], "size: [2], dtype: 'int64'", [i64([2], [val, val])])
    case(f'{op}_like', f'aten.{op}_like.default', [x], 'self: v[0]', [i64([4], [val] * 4)])
    case(f'new_{op}', f'aten.new_{op}.default', [x], 'self: v[0], size: [1]', [i64([1], [val])])
case('arange', 'aten.arange.start', [], "start: 9007199254740992, end: 9007199254740996, dtype: 'int64'", [i64([4], [2**53 + k for k in range(4)])])
case('arange step', 'aten.arange.start_step', [], "start: -9007199254740992, end: -9007199254741000, step: -3, dtype: 'int64'", [i64([3], [-2**53 - 3 * k for k in range(3)])])
case('arange end', 'aten.arange.default', [], "end: 3, dtype: 'int64'", [i64([3], [0, 1, 2])])
# Max pooling (order and ties decide; float64 would tie 2^53 with 2^53 + 1).
V = [2**53, B, -B, -2**53]
def pool_pairs(v): return [max(v[0:2]), max(v[2:4])], [v[0:2].index(max(v[0:2])), 2 + v[2:4].index(max(v[2:4]))]
pv, pi = pool_pairs(V)
v1 = i64([1, 1, 4], V)
for n, shape, k in [(1, [1, 1, 4], '[2]'), (2, [1, 1, 2, 2], '[1, 2]'), (3, [1, 1, 1, 2, 2], '[1, 1, 2]')]:
    out = shape[:-1] + [2] if n == 1 else shape[:-1] + [1]
    case(f'max_pool{n}d', f'aten.max_pool{n}d.default', [i64(shape, V)], f'self: v[0], kernel_size: {k}', [i64(out, pv)])
    case(f'max_pool{n}d_with_indices', f'aten.max_pool{n}d_with_indices.default', [i64(shape, V)], f'self: v[0], kernel_size: {k}', [i64(out, pv), i64(out, pi)])
    case(f'adaptive_max_pool{n}d', f'aten.adaptive_max_pool{n}d.default', [i64(shape, V)], f"self: v[0], output_size: {'[2]' if n == 1 else '[2, 1]' if n == 2 else '[1, 2, 1]'}", [i64(out if n == 1 else shape[:-1] + [1], pv), i64(out if n == 1 else shape[:-1] + [1], pi)])
case('max_pool padded', 'trt.max_pool_padded', [v1], 'self: v[0], kernel_size: [2], stride: [2], pads_begin: [0], pads_end: [0], dilation: [1]', [i64([1, 1, 2], pv)])
case('max_pool onnx indices', 'trt.max_pool_onnx_indices', [v1], 'self: v[0], kernel_size: [2], stride: [2], pads_begin: [0], pads_end: [0], dilation: [1]', [i64([1, 1, 2], pv), i64([1, 1, 2], pi)])
# Matrix products.
A = [[B, 1], [2, 3]]; Bm = [[3, MAX], [1, -1]]
def matmul(a, b): return [[W(sum(a[i][k] * b[k][j] for k in range(2))) for j in range(2)] for i in range(2)]
R = matmul(A, Bm)
a = i64([2, 2], A[0] + A[1]); bm = i64([2, 2], Bm[0] + Bm[1])
flat = R[0] + R[1]
case('mm', 'aten.mm.default', [a, bm], 'self: v[0], mat2: v[1]', [i64([2, 2], flat)])
case('matmul', 'aten.matmul.default', [a, bm], 'self: v[0], other: v[1]', [i64([2, 2], flat)])
case('bmm', 'aten.bmm.default', [i64([1, 2, 2], A[0] + A[1]), i64([1, 2, 2], Bm[0] + Bm[1])], 'self: v[0], mat2: v[1]', [i64([1, 2, 2], flat)])
BT = [[Bm[0][0], Bm[1][0]], [Bm[0][1], Bm[1][1]]]
case('linear', 'aten.linear.default', [a, i64([2, 2], BT[0] + BT[1]), i64([2], [1, 1])], 'input: v[0], weight: v[1], bias: v[2]', [i64([2, 2], [W(v + 1) for v in flat])])
case('addmm', 'aten.addmm.default', [i64([2], [1, -1]), a, bm], 'self: v[0], mat1: v[1], mat2: v[2], beta: 2, alpha: 3', [i64([2, 2], [W(3 * R[i][j] + 2 * (1, -1)[j]) for i in range(2) for j in range(2)])])
import sys
if sys.argv[1:] == ['shared']: print('\n'.join(SHARED))
else: print('\n'.join(cases))
