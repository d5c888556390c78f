import { InvalidArgumentError } from '../../lib/errors';
import {
  angle,
  complexAbs,
  complexAdd,
  complexDiv,
  complexMul,
  complexSub,
  conj,
  imag,
  polar,
  real,
  toComplex,
  viewAsComplex,
  viewAsReal,
} from '../../lib/kernels/complex';
import { Tensor } from '../../lib/ir/tensor';
import { expectClose, expectTensor } from '../helpers/compare';

// z = [1+2i, 3-4i, -0.5+0i]
const z = (): Tensor => Tensor.from('complex64', [3], [1, 2, 3, -4, -0.5, 0]);

describe('views', () => {
  it('viewAsReal shares the data and appends a dimension of 2', () => {
    const t = Tensor.from('complex128', [2, 1], [1, 2, 3, 4]);
    const r = viewAsReal(t);
    expect(r.dtype).toBe('float64');
    expect([...r.shape]).toEqual([2, 1, 2]);
    expect(r.data).toBe(t.data);
    expect(viewAsReal(z()).dtype).toBe('float32');
  });

  it('viewAsComplex shares the data and drops the trailing 2', () => {
    const r = Tensor.from('float32', [2, 2], [1, 2, 3, 4]);
    const c = viewAsComplex(r);
    expect(c.dtype).toBe('complex64');
    expect([...c.shape]).toEqual([2]);
    expect(c.data).toBe(r.data);
    expect(viewAsComplex(Tensor.from('float64', [2], [5, 6])).shape).toEqual([]);
  });

  it('viewAsComplex checks the last dimension and the dtype', () => {
    expect(() => viewAsComplex(new Tensor('float32', [2, 3]))).toThrow(/viewAsComplex: the last dimension must be 2, got shape \[2, 3\]/);
    expect(() => viewAsComplex(new Tensor('float32', []))).toThrow(InvalidArgumentError);
    expect(() => viewAsComplex(new Tensor('float16', [2]))).toThrow(/float32 or float64/);
    expect(() => viewAsReal(new Tensor('float32', [2]))).toThrow(/viewAsReal: expected a complex tensor/);
  });
});

describe('arithmetic', () => {
  it('complexAdd and complexSub with alpha', () => {
    const w = Tensor.from('complex64', [], [1, 1]);
    expectTensor(complexAdd(z(), w), 'complex64', [3], [2, 3, 4, -3, 0.5, 1]);
    expectTensor(complexSub(z(), w, 2), 'complex64', [3], [-1, 0, 1, -6, -2.5, -2]);
  });

  it('complexMul: (a+bi)(c+di) = (ac−bd) + (ad+bc)i, with broadcasting', () => {
    const a = Tensor.from('complex64', [2, 1], [1, 1, 0, 2]); // 1+i, 2i
    const b = Tensor.from('complex64', [2], [1, -1, 3, 0]); // 1−i, 3
    // (1+i)(1−i) = 2, (1+i)·3 = 3+3i, 2i(1−i) = 2+2i, 2i·3 = 6i
    expectTensor(complexMul(a, b), 'complex64', [2, 2], [2, 0, 3, 3, 2, 2, 0, 6]);
  });

  it('a real operand is promoted to complex', () => {
    const r = Tensor.from('float32', [3], [2, 0.5, -1]);
    expectTensor(complexMul(z(), r), 'complex64', [3], [2, 4, 1.5, -2, 0.5, -0]);
    expectTensor(complexAdd(r, z()), 'complex64', [3], [3, 2, 3.5, -4, -1.5, 0]);
    expect(complexMul(z(), Tensor.from('float64', [1], [1])).dtype).toBe('complex128');
    expect(complexAdd(Tensor.from('int32', [1], [1]), z()).dtype).toBe('complex64');
  });

  it('complexDiv: (a+bi)/(c+di) = ((ac+bd) + (bc−ad)i)/(c²+d²)', () => {
    const a = Tensor.from('complex128', [3], [1, 2, 3, -4, 7, 1]);
    const b = Tensor.from('complex128', [3], [3, 4, 0, 2, 2, 0]);
    // (1+2i)/(3+4i) = (11 + 2i)/25; (3−4i)/(2i) = (−8 − 6i)/4; (7+i)/2
    expectClose(complexDiv(a, b), Tensor.from('complex128', [3], [11 / 25, 2 / 25, -2, -1.5, 3.5, 0.5]), { rtol: 1e-15, atol: 1e-15 });
  });

  it('complexDiv stays finite where c² + d² would overflow', () => {
    const a = Tensor.from('complex128', [1], [1e300, 1e300]);
    const b = Tensor.from('complex128', [1], [1e300, 1e300]);
    expectClose(complexDiv(a, b), Tensor.from('complex128', [1], [1, 0]), { rtol: 1e-15, atol: 1e-15 });
  });

  it('division by complex zero gives infinities or NaN', () => {
    const r = complexDiv(Tensor.from('complex64', [1], [1, 0]), Tensor.from('complex64', [1], [0, 0])).toArray();
    expect(r[0]).toBe(Infinity);
    expect(r[1]).toBeNaN();
  });

  it('shape clashes and non-complex result dtypes are errors naming the kernel', () => {
    expect(() => complexMul(z(), new Tensor('complex64', [2]))).toThrow(/complexMul: .*\[3\].*\[2\]/);
    expect(() => complexAdd(z(), z(), 1, 'float32')).toThrow(/complexAdd: result dtype must be complex/);
  });

  it('does not mutate its inputs', () => {
    const a = z();
    const before = a.toArray();
    complexDiv(a, a);
    conj(a);
    expect(a.toArray()).toEqual(before);
  });
});

describe('parts, magnitude and phase', () => {
  it('conj, real and imag', () => {
    expectTensor(conj(z()), 'complex64', [3], [1, -2, 3, 4, -0.5, -0]);
    expectTensor(real(z()), 'float32', [3], [1, 3, -0.5]);
    expectTensor(imag(z()), 'float32', [3], [2, -4, 0]);
    const r = Tensor.from('float32', [2], [1, 2]);
    expect(real(r).data).toBe(r.data);
    expect(conj(r).data).toBe(r.data);
    expect(() => imag(r)).toThrow(/imag: expected a complex tensor/);
  });

  it('complexAbs is the hypotenuse, without overflow', () => {
    expectTensor(complexAbs(z()), 'float32', [3], [Math.fround(Math.sqrt(5)), 5, 0.5]);
    expectClose(complexAbs(Tensor.from('complex128', [1], [3e200, 4e200])), Tensor.from('float64', [1], [5e200]), { rtol: 1e-15, atol: 0 });
  });

  it('angle is atan2(imag, real); of a real tensor 0 or π', () => {
    const expected = [Math.atan2(2, 1), Math.atan2(-4, 3), Math.PI].map(Math.fround);
    expectTensor(angle(z()), 'float32', [3], expected);
    expectTensor(angle(Tensor.from('float64', [3], [2, -1, 0])), 'float64', [3], [0, Math.PI, 0]);
    expectTensor(angle(Tensor.from('int32', [1], [-3])), 'float32', [1], [Math.fround(Math.PI)]);
  });

  it('polar builds abs·e^(i·angle) with broadcasting', () => {
    const abs = Tensor.from('float64', [2, 1], [1, 2]);
    const ang = Tensor.from('float64', [2], [0, Math.PI / 2]);
    const p = polar(abs, ang);
    expect(p.dtype).toBe('complex128');
    expectClose(p, Tensor.from('complex128', [2, 2], [1, 0, 0, 1, 2, 0, 0, 2]), { rtol: 0, atol: 1e-15 });
    expect(polar(Tensor.from('float32', [1], [1]), Tensor.from('float32', [1], [0])).dtype).toBe('complex64');
    expect(() => polar(Tensor.from('float32', [1], [1]), Tensor.from('float64', [1], [0]))).toThrow(/polar: abs and angle/);
  });

  it('toComplex lifts reals and converts widths', () => {
    expectTensor(toComplex(Tensor.from('int32', [2], [1, -2]), 'complex64'), 'complex64', [2], [1, 0, -2, 0]);
    expectTensor(toComplex(3, 'complex128'), 'complex128', [], [3, 0]);
    const c128 = Tensor.from('complex128', [1], [0.1, 0.2]);
    expectTensor(toComplex(c128, 'complex64'), 'complex64', [1], [Math.fround(0.1), Math.fround(0.2)]);
  });
});
