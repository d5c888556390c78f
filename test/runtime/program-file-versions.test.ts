/**
 * What program files written by earlier versions of this library do:
 * - format 1.0 (tensorrt-node 0.1.0) called every engine segment `"kind": "tensorrt"`, in the
 *   manifest and in the stored partition report, whatever backend built it; format 1.1 says
 *   `"engine"`. 1.0 files still load, as the same program (the old name is read as `engine`).
 * - format 1.1 files do not record the inputs' optimization profiles (1.2 does): they load,
 *   run and inspect as before, their inputs without `profiles`.
 * - files written before the shared codec (lib/io/json-blobs.ts) hold reference engines at
 *   engine format version 1, which this library refuses with E_BAD_PROGRAM naming the
 *   segment, entry and version.
 */
import * as path from 'node:path';

import { ENGINE_FORMAT_VERSION } from '../../lib/backends/reference';
import { inspectProgramBytes } from '../../lib/cli/inspect-command';
import { compile } from '../../lib/compile';
import { BadProgramError } from '../../lib/errors';
import { Tensor } from '../../lib/ir/tensor';
import { formatPartitionReport } from '../../lib/partitioning/report-format';
import { checkFormatVersion, loadProgramBuffer, packProgramFile, PROGRAM_FORMAT_VERSION, readProgramFile } from '../../lib/runtime/program-file';
import { sha256 } from '../../lib/runtime/program-file/write';
import { rejection } from '../helpers/errors';
import { asFormat10ProgramFile, rawManifest } from '../helpers/legacy-program-file';

const MLP = path.join(__dirname, '..', 'fixtures', 'mlp', 'model.onnx');

describe('engine segments: "engine" since format 1.1, "tensorrt" in format 1.0 files', () => {
  // Two engine segments around a fallback one, so that the kinds are not all one name.
  const settings = { backend: 'reference' as const, inputs: { input0: { shape: [2, 32] } }, torchExecutedOps: ['aten.relu.default'], minBlockSize: 1 };

  test('this library writes "engine" segments, and a report that names their backend', async () => {
    const program = await compile(MLP, settings);
    try {
      const raw = rawManifest(program.saveBuffer());
      expect(raw.formatVersion).toBe('1.3');
      expect(raw.segments.map((s) => s.kind)).toEqual(['engine', 'fallback', 'engine']);
      expect(raw.report.segments.map((s) => s.kind)).toEqual(['engine', 'fallback', 'engine']);
      expect(raw.report.backend).toBe('reference');
      expect(JSON.stringify(raw)).not.toContain('"tensorrt"');
      // A 1.0 reader (tensorrt-node 0.1.0) refuses it by its version, not by a kind it does not know.
      expect(() => checkFormatVersion(raw.formatVersion, 'program file "m.trtp"', '0.2.0', { major: 1, minor: 0 })).toThrow(
        /format version 1\.3 is newer than this tensorrt-node \(.*\) reads \(up to 1\.0\)/,
      );
    } finally {
      await program.dispose();
    }
  });

  test('a format 1.0 file ("kind": "tensorrt", a report without backend) loads as the same program', async () => {
    const program = await compile(MLP, settings);
    try {
      const old = asFormat10ProgramFile(program.saveBuffer());
      const raw = rawManifest(old);
      expect(raw.formatVersion).toBe('1.0');
      expect(raw.segments.map((s) => s.kind)).toEqual(['tensorrt', 'fallback', 'tensorrt']);
      expect(raw.report.segments.map((s) => s.kind)).toEqual(['tensorrt', 'fallback', 'tensorrt']);
      expect(raw.report.backend).toBeUndefined();

      // Read: the old name comes back as `engine`; the version stays what the file says.
      const { manifest } = readProgramFile(old);
      expect(manifest.formatVersion).toBe('1.0');
      expect(manifest.segments.map((s) => s.kind)).toEqual(['engine', 'fallback', 'engine']);

      const loaded = await loadProgramBuffer(old);
      try {
        expect(loaded.data.segments.map((s) => s.kind)).toEqual(['engine', 'fallback', 'engine']);
        expect(loaded.backend).toBe('reference');
        // The report as compile() made it: kinds renamed, the backend taken from the manifest.
        expect(loaded.report).toEqual(program.report);
        expect(formatPartitionReport(loaded.report)).toBe(formatPartitionReport(program.report));
        expect(formatPartitionReport(loaded.report).split('\n')[0]).toBe('9/10 ops converted, in 2 engine segments (reference), plus 1 fallback segment');
        expect(String(loaded)).toBe(String(program));
        expect(String(loaded)).toContain('[engine(reference) → fallback → engine(reference)]');
        const input = Tensor.from('float32', [2, 32], Array.from({ length: 64 }, (_, i) => Math.sin(i)));
        const [a] = await program.run([input]);
        const [b] = await loaded.run([input]);
        expect(Buffer.from(b!.data.buffer, b!.data.byteOffset, b!.data.byteLength).equals(Buffer.from(a!.data.buffer, a!.data.byteOffset, a!.data.byteLength))).toBe(true);
        // Saved again, it is a file of the current format, byte for byte what the compiled program saves.
        expect(Buffer.from(loaded.saveBuffer()).equals(Buffer.from(program.saveBuffer()))).toBe(true);
      } finally {
        await loaded.dispose();
      }

      // inspect reads it too, and says which version the file is.
      const report = await inspectProgramBytes(old, 'old.trtp', 'program file "old.trtp"', []);
      expect(report.formatVersion).toBe('1.0');
      expect(report.segments.map((s) => [s.kind, s.backend])).toEqual([['engine', 'reference'], ['fallback', undefined], ['engine', 'reference']]);
    } finally {
      await program.dispose();
    }
  });

  test('any other kind is E_BAD_PROGRAM naming the two it may be', async () => {
    const program = await compile(MLP, settings);
    try {
      const { manifest, blobs } = readProgramFile(program.saveBuffer());
      const m = structuredClone(manifest) as unknown as { segments: Array<{ kind: string }> };
      m.segments[0]!.kind = 'TensorRT';
      const error = await rejection(loadProgramBuffer(packProgramFile(m, blobs), {}, 'program file "bad.trtp"'));
      expect(error).toBeInstanceOf(BadProgramError);
      expect(error.message).toBe('program file "bad.trtp": segments[0].kind is "TensorRT", not "engine" or "fallback"');
    } finally {
      await program.dispose();
    }
  });
});

test('a file holding a version-1 reference engine is E_BAD_PROGRAM naming the version', async () => {
  const program = await compile(MLP, { backend: 'reference', inputs: { input0: { shape: [2, 32] } } });
  try {
    const { manifest, blobs } = readProgramFile(program.saveBuffer());
    expect(manifest.formatVersion).toBe(`${PROGRAM_FORMAT_VERSION.major}.${PROGRAM_FORMAT_VERSION.minor}`);
    const seg = manifest.segments.findIndex((s) => s.kind === 'engine');
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
