/**
 * What program files written before the shared codec (lib/io/json-blobs.ts) do: the manifest
 * format is unchanged (1.0), but their reference engines are at engine format version 1,
 * which this library refuses with E_BAD_PROGRAM naming the segment, entry and version.
 */
import * as path from 'node:path';

import { ENGINE_FORMAT_VERSION } from '../../lib/backends/reference';
import { compile } from '../../lib/compile';
import { BadProgramError } from '../../lib/errors';
import { loadProgramBuffer, packProgramFile, PROGRAM_FORMAT_VERSION, readProgramFile } from '../../lib/runtime/program-file';
import { sha256 } from '../../lib/runtime/program-file/write';
import { rejection } from '../helpers/errors';

const MLP = path.join(__dirname, '..', 'fixtures', 'mlp', 'model.onnx');

test('a file holding a version-1 reference engine is E_BAD_PROGRAM naming the version', async () => {
  const program = await compile(MLP, { backend: 'reference', inputs: { input0: { shape: [2, 32] } } });
  try {
    const { manifest, blobs } = readProgramFile(program.saveBuffer());
    expect(manifest.formatVersion).toBe(`${PROGRAM_FORMAT_VERSION.major}.${PROGRAM_FORMAT_VERSION.minor}`);
    const seg = manifest.segments.findIndex((s) => s.kind === 'tensorrt');
    const entry = (manifest.segments[seg] as { engine: string }).engine;
    const engine = blobs.get(entry)!.slice();
    const view = new DataView(engine.buffer);
    expect(view.getUint32(8, true)).toBe(ENGINE_FORMAT_VERSION);
    view.setUint32(8, 1, true);
    blobs.set(entry, engine);
    manifest.blobs[entry] = { sha256: sha256(engine), bytes: engine.byteLength };
    const error = await rejection(loadProgramBuffer(packProgramFile(manifest, blobs), {}, 'program file "old.trtp"'));
    expect(error).toBeInstanceOf(BadProgramError);
    expect((error as BadProgramError).code).toBe('E_BAD_PROGRAM');
    expect((error as Error).message).toBe(
      `program file "old.trtp": segments[${seg}]: engine "${entry}" cannot be loaded: reference engine: format version 1 is not supported (this tensorrt-node reads version ${ENGINE_FORMAT_VERSION})`,
    );
  } finally {
    await program.dispose();
  }
});
