/**
 * The package's two entry points (docs/api.md): the main entry holds what an application uses,
 * `tensorrt-node/ir` (lib/ir-entry.ts) the graph-building internals, and no name has two homes.
 */
import * as errors from '../lib/errors';
import * as main from '../lib/index';
import * as ir from '../lib/ir-entry';
import { Program as ProgramClass } from '../lib/runtime/program';
import { TensorParallelProgram as TensorParallelProgramClass } from '../lib/runtime/tensor-parallel/program';

const names = (m: object): string[] => Object.keys(m).sort();

describe('the main entry', () => {
  it('exports every error class and ERROR_CODES, but not createError', () => {
    const expected = names(errors).filter((n) => n !== 'createError');
    expect(expected).toContain('TensorRTNodeError');
    expect(expected.filter((n) => !(n in main))).toEqual([]);
    expect('createError' in main).toBe(false);
  });

  it.each(['compile', 'dryRun', 'loadProgram', 'loadProgramBuffer', 'Tensor', 'devices', 'doctor', 'readNpy', 'writeNpy', 'selectDevice', 'registerConverter', 'listConverters', 'unregisterConverter', 'formatShape'])(
    'exports %s',
    (name) => {
      expect(typeof (main as Record<string, unknown>)[name]).toBe('function');
    },
  );

  it.each(['Graph', 'Node', 'Value', 'call', 'tensorType', 'printGraph', 'verifyGraph', 'opNames', 'interpret', 'Network', 'printNetwork', 'shardGraph', 'loadOnnx', 'loadPt2'])(
    'leaves %s to tensorrt-node/ir',
    (name) => {
      expect(name in main).toBe(false);
      expect(typeof (ir as Record<string, unknown>)[name]).toBe('function');
    },
  );

  it('gives Program for instanceof only: the class itself at run time, with no constructor in its type', () => {
    expect(main.Program).toBe(ProgramClass);
    expect(Object.create(ProgramClass.prototype) instanceof main.Program).toBe(true);
    expect({} instanceof main.Program).toBe(false);
    expect(main.TensorParallelProgram).toBe(TensorParallelProgramClass);
    // Type checks (npm run typecheck covers test/): `new` on the public face does not compile.
    const construct = (): unknown =>
      // @ts-expect-error Program is made by compile() and loadProgram(), never by `new`
      new main.Program();
    expect(typeof construct).toBe('function');
  });
});

describe('the two entries', () => {
  it('share no name: each export has one home', () => {
    const mainNames = new Set(names(main));
    expect(names(ir).filter((n) => mainNames.has(n))).toEqual([]);
  });
});
