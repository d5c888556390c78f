/**
 * program.run()'s one-pass input check (lib/runtime/fast-input-check.ts) against the general
 * one (checkRunInputs): whatever it accepts, the general check accepts in the same order;
 * whatever it refuses, it leaves to the general check (it returns undefined, never throws).
 * And the Tensor brand it relies on (isIntactTensor).
 */
import { sym, symMul, type SymbolRange } from '../../lib/ir/symbolic';
import { tensorType } from '../../lib/ir/graph';
import { FastInputCheck } from '../../lib/runtime/fast-input-check';
import { checkRunInputs } from '../../lib/runtime/program-io';
import { DEFAULT_RUN_LIMITS } from '../../lib/engine/resource-limits';
import { isIntactTensor, Tensor, trustedTensor } from '../../lib/ir/tensor';
import type { ShapedInputs } from '../../lib/interpreter/bind-inputs';

const batch = sym('batch');
const shaped: ShapedInputs = {
  inputs: [
    { name: 'x', tensorType: tensorType('float32', [batch, 3]) },
    { name: 'ids', tensorType: tensorType('int64', [batch]) },
  ],
  symbols: new Map<string, SymbolRange>([['batch', { min: 1, max: 8 }]]),
};
const x = (b: number): Tensor => new Tensor('float32', [b, 3]);
const ids = (b: number): Tensor => new Tensor('int64', [b]);

/** The general check's answer: the ordered inputs, or the error's code and message. */
function general(inputs: unknown, limits = DEFAULT_RUN_LIMITS): Tensor[] | string {
  try {
    return checkRunInputs(shaped, inputs as Tensor[], limits);
  } catch (e) {
    return `${(e as { code: string }).code}: ${(e as Error).message}`;
  }
}

describe('FastInputCheck', () => {
  const check = FastInputCheck.of(shaped, DEFAULT_RUN_LIMITS)!;

  test('accepts what the general check accepts, in the same order, and counts the elements', () => {
    const a = x(2);
    const b = ids(2);
    for (const given of [[a, b], { ids: b, x: a }]) {
      expect(check.check(given)).toEqual(general(given));
      expect(check.check(given)![0]).toBe(a);
      expect(check.elements).toBe(2 * 3 + 2);
    }
  });

  const reassigned = x(2);
  (reassigned as { shape: readonly number[] }).shape = [2, 3];
  const detached = x(2);
  structuredClone(detached.data.buffer, { transfer: [detached.data.buffer as ArrayBuffer] });
  const refused: Record<string, unknown> = {
    'a wrong dtype': [new Tensor('float64', [2, 3]), ids(2)],
    'a wrong static dim': [new Tensor('float32', [2, 4]), ids(2)],
    'a wrong rank': [new Tensor('float32', [6]), ids(2)],
    'a symbol bound twice differently': [x(2), ids(3)],
    'a symbol out of its range': [x(9), ids(9)],
    'a missing input': [x(2)],
    'an extra input': [x(2), ids(2), ids(2)],
    'a missing name': { x: x(2) },
    'an unknown name': { x: x(2), ids: ids(2), y: ids(2) },
    'a plain object posing as a tensor': [{ dtype: 'float32', shape: [2, 3], data: new Float32Array(6) }, ids(2)],
    'a tensor whose shape was reassigned': [reassigned, ids(2)],
    'a tensor whose buffer was detached': [detached, ids(2)],
    'an empty tensor': [x(0), ids(0)],
    'null': null,
    'a number': 3,
  };
  test.each(Object.keys(refused))('leaves %s to the general check', (kind) => {
    expect(check.check(refused[kind])).toBeUndefined();
  });

  test('every refused case the general check refuses with a typed error, except the ones it accepts (an equal shape reassigned)', () => {
    for (const [kind, given] of Object.entries(refused)) {
      const answer = general(given);
      if (kind === 'a tensor whose shape was reassigned') expect(Array.isArray(answer)).toBe(true);
      else if (kind === 'an empty tensor' || kind === 'a symbol out of its range') expect(answer).toMatch(/^E_SHAPE_OUT_OF_RANGE: /);
      else expect({ kind, answer }).toEqual({ kind, answer: expect.stringMatching(/^E_BAD_INPUT: /) });
    }
  });

  test('leaves an input larger than maxTensorBytes to the general check', () => {
    const small = { maxTensorBytes: 16 };
    const tight = FastInputCheck.of(shaped, small)!;
    expect(tight.check([x(2), ids(2)])).toBeUndefined();
    expect(general([x(2), ids(2)], small)).toMatch(/^E_RESOURCE_LIMIT: input "x"/);
    expect(tight.check([x(1), ids(1)])).toEqual(general([x(1), ids(1)], small));
  });

  test('has no tables for a dim that is an expression (only the general check evaluates those)', () => {
    const expr: ShapedInputs = { inputs: [{ name: 'x', tensorType: tensorType('float32', [symMul(batch, 2)]) }], symbols: new Map() };
    expect(FastInputCheck.of(expr, DEFAULT_RUN_LIMITS)).toBeUndefined();
  });
});

describe('isIntactTensor', () => {
  test('a tensor as built is intact; reassigning a field breaks it (a shape or data even when equal)', () => {
    const t = Tensor.from('float32', [2], [1, 2]);
    expect(isIntactTensor(t)).toBe(true);
    expect(isIntactTensor(t.reshape([1, 2]))).toBe(true);
    for (const [field, value] of [
      ['dtype', 'int32'],
      ['shape', [2]],
      ['data', new Float32Array(2)],
    ] as const) {
      const u = Tensor.from('float32', [2], [1, 2]);
      (u as unknown as Record<string, unknown>)[field] = value;
      expect({ field, intact: isIntactTensor(u) }).toEqual({ field, intact: false });
    }
  });

  test('an object made from the prototype, without the constructor, is not intact (and does not throw)', () => {
    const fake = Object.assign(Object.create(Tensor.prototype) as Tensor, { dtype: 'float32', shape: [1], data: new Float32Array(1) });
    expect(isIntactTensor(fake)).toBe(false);
  });

  test('trustedTensor() makes an intact tensor over the same data, and the constructor checks again afterwards', () => {
    const data = new Float32Array([1, 2, 3, 4]);
    const t = trustedTensor('float32', [2, 2], data);
    expect(isIntactTensor(t)).toBe(true);
    expect(t.data).toBe(data);
    expect(t.toArray()).toEqual([1, 2, 3, 4]);
    expect(Object.isFrozen(t.shape)).toBe(true);
    expect(() => new Tensor('float32', [2], new Float32Array(3))).toThrow(expect.objectContaining({ code: 'E_INVALID_ARGUMENT' }));
  });
});
