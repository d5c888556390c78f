/**
 * Build settings the chosen backend does not use are accepted, and warned about once, at
 * `warn`, naming each setting and the backend: `precisions: ['fp16']` on the reference or
 * onnxruntime backend (which compute in the network's own dtypes) must not pass for an fp16
 * build. Settings a backend uses, and defaults, say nothing.
 */
import * as path from 'node:path';

import { compile, type CompileSettings } from '../../lib/compile';
import { ineffectiveSettings } from '../../lib/compile/ineffective-settings';
import { getBackend } from '../../lib/backends';
import { DEFAULT_BUILD_CONFIG, resolveBuildConfig } from '../../lib/engine/build-config';
import type { LogLevel } from '../../lib/logger';
import { FIXTURES } from '../helpers/fixtures';

const mlp = path.join(FIXTURES, 'mlp', 'model.onnx');

/** The warnings of a compile of the mlp with `settings`. */
async function warningsOf(settings: CompileSettings): Promise<string[]> {
  const lines: Array<[LogLevel, string]> = [];
  const program = await compile(mlp, { inputs: [{ shape: [2, 32] }], ...settings, logger: (level, message) => lines.push([level, message]) });
  await program.dispose();
  return lines.filter(([level]) => level === 'warn').map(([, message]) => message);
}

test.each(['reference', 'onnxruntime'] as const)('precisions on the %s backend: one warning naming the setting and the backend', async (backend) => {
  const warnings = await warningsOf({ backend, precisions: ['fp16', 'tf32'] });
  expect(warnings).toHaveLength(1);
  expect(warnings[0]).toContain(`the setting precisions (tf32, fp16) has no effect on the ${backend} backend`);
  expect(warnings[0]).toContain("in the network's own dtypes");
});

test('several unused settings are one warning naming each', async () => {
  const warnings = await warningsOf({ backend: 'reference', precisions: ['bf16'], workspaceBytes: 1 << 20, optimizationLevel: 5, hardwareCompatibility: 'ampere+' });
  expect(warnings).toEqual([expect.stringContaining('the settings precisions (bf16), workspaceBytes (1048576), hardwareCompatibility (ampere+), optimizationLevel (5) have no effect on the reference backend')]);
});

test('defaults, and fp32 alone, say nothing', async () => {
  expect(await warningsOf({ backend: 'reference' })).toEqual([]);
  expect(await warningsOf({ backend: 'reference', precisions: ['fp32'], optimizationLevel: 3, hardwareCompatibility: 'none' })).toEqual([]);
});

test('a device setting on a CPU backend is warned about too', async () => {
  expect(await warningsOf({ backend: 'reference', device: { gpuId: 1 } })).toEqual([expect.stringContaining('the setting device has no effect on the reference backend')]);
});

test('what each backend uses: tensorrt every knob, cuda the precisions (its timing-cache warning is its own)', () => {
  const build = resolveBuildConfig({ precisions: ['fp16'], workspaceBytes: 64, timingCache: 'cache.bin', hardwareCompatibility: 'ampere+', optimizationLevel: 1 });
  expect(ineffectiveSettings(build, getBackend('tensorrt'))).toEqual([]);
  expect(ineffectiveSettings(build, getBackend('cuda'))).toEqual(['workspaceBytes (64)', 'hardwareCompatibility (ampere+)', 'optimizationLevel (1)']);
  expect(ineffectiveSettings(build, getBackend('reference'))).toEqual(['precisions (fp16)', 'workspaceBytes (64)', 'timingCache (cache.bin)', 'hardwareCompatibility (ampere+)', 'optimizationLevel (1)']);
  expect(ineffectiveSettings(DEFAULT_BUILD_CONFIG, getBackend('onnxruntime'))).toEqual([]);
});
