/** `inspect` says what each cuda engine computes in, how many layers stayed fp32 (lib/network/precision.ts), and the device memory its build recorded. */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

import { buildCudaEngine } from '../../lib/backends/cuda/build';
import { cudaEngineMemory } from '../../lib/backends/cuda/engine-format';
import { DEFAULT_BUILD_CONFIG } from '../../lib/engine/build-config';
import { formatInspectReport, inspectProgramBytes } from '../../lib/cli/inspect-command';
import { compile } from '../../lib/compile';
import { packProgramFile, readProgramFile } from '../../lib/runtime/program-file';
import { sha256 } from '../../lib/runtime/program-file/write';
import { fakeCompiler, fakeLowering, weightedNetwork } from '../backends/cuda/helpers';
import { loadFixture } from '../helpers/fixtures';

test('a program with a cuda engine built for fp16 shows its precision summary', async () => {
  const fixture = loadFixture('mlp');
  const program = await compile(path.join(fixture.dir, fixture.files.onnx!), { backend: 'reference', inputs: [{ shape: [4, 32] }] });
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'trtp-precision-'));
  try {
    const file = path.join(tmp, 'mlp.trtp');
    await program.save(file);
    await program.dispose();
    const { manifest, blobs } = readProgramFile(fs.readFileSync(file));
    const m = structuredClone(manifest);
    const seg = m.segments.find((s) => s.kind === 'engine') as unknown as { backend: string; engine: string; device: Record<string, unknown> };
    seg.backend = 'cuda';
    Object.assign(seg.device, { type: 'gpu', gpuId: 0, computeCapability: { major: 9, minor: 0 }, deviceName: 'NVIDIA H200', backend: 'cuda', backendVersion: m.backends.reference });
    m.backends = { ...m.backends, cuda: m.backends.reference! };
    const engine = await buildCudaEngine(weightedNetwork(), { ...DEFAULT_BUILD_CONFIG, precisions: ['fp32', 'fp16'] }, { name: 'NVIDIA H200', computeCapability: { major: 9, minor: 0 } }, { lower: fakeLowering(), compile: fakeCompiler() });
    const edited = new Map(blobs);
    edited.set(seg.engine, engine);
    m.blobs[seg.engine] = { sha256: sha256(engine), bytes: engine.byteLength };
    const report = await inspectProgramBytes(packProgramFile(m, edited), 'p.trtp', 'program "p.trtp"', []);
    const summary = 'fp16: 3 layers in fp16, 0 kept fp32, 2 casts, 1 weights converted';
    expect(report.segments.find((s) => s.backend === 'cuda')!.precision).toBe(summary);
    expect(formatInspectReport(report)).toContain(`      precision: ${summary}`);
    // The device memory the build recorded: weights (the 6-element bias, one 256-byte slot) and the arena.
    const memory = report.segments.find((s) => s.backend === 'cuda')!.memory!;
    expect(memory).toEqual(cudaEngineMemory(engine));
    expect(memory.weightBytes).toBe(256);
    expect(formatInspectReport(report)).toContain(`      device memory: weights 256 B, activations up to ${memory.arenaBytes} B (1 profile shape), plus library workspaces and I/O buffers`);
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
  }
}, 60_000);
