/**
 * Every op the IR declares (lib/ir/ops/) can be run by the CPU interpreter: the interpreter
 * is the reference that fallback segments, constant folding and the tests rely on, so an op
 * declared without an implementation would only fail when a model first uses it.
 */
import { opNames } from '../../lib/ir/ops';
import { implementedOps } from '../../lib/interpreter';

describe('the IR op table and the interpreter', () => {
  const declared = opNames();
  const implemented = new Set(implementedOps());

  it('enumerates the op table (all op families loaded)', () => {
    // One op of each family file of lib/ir/ops/, so a family that failed to load shows here.
    for (const op of [
      'aten.sym_size.int',
      'aten.add.Tensor',
      'aten.convolution.default',
      'aten.view.default',
      'trt.complex_mul',
      'trt.shape_dyn',
      'trt.all_reduce',
    ]) {
      expect(declared).toContain(op);
    }
  });

  it('has an interpreter implementation for every declared op', () => {
    expect(declared.filter((op) => !implemented.has(op))).toEqual([]);
  });

  it('has no interpreter implementation for an op the table does not declare', () => {
    const known = new Set(declared);
    expect([...implemented].filter((op) => !known.has(op))).toEqual([]);
  });
});
