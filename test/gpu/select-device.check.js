'use strict';
// GPU check (plain Node, no jest: it runs on the GPU machine from a bundle). With the real
// devices() list (an H100 or an H200: both compute capability 9.0): an engine record built on an
// H200 with compute capability 9.0 selects a 9.0 device, with a warning when it is another
// model; one saying 8.0 is refused with the no-compatible-device message naming the devices. Then the same through
// loadProgramBuffer() with a program file whose engine record says so (the device check runs
// before any engine is deserialized, so the engine bytes are a placeholder). Prints both messages as JSON.
// Exit 0: passed; 1: failed; 3: no usable GPU here.
const crypto = require('node:crypto');
const path = require('node:path');

const root = path.join(__dirname, '..', '..');
const { selectDevice, loadProgramBuffer } = require(path.join(root, 'dist', 'index.js'));
const { devicesOrSkip } = require('./check-util');
const { zipSync } = require(require.resolve('fflate', { paths: [root] }));

const record = (major, minor, deviceName) => ({
  type: 'gpu',
  gpuId: 0,
  dlaCore: null,
  computeCapability: { major, minor },
  deviceName,
  hardwareCompatibility: 'none',
});

/** A program file with one TensorRT engine whose record says compute capability major.minor. */
function programFile(major, minor, deviceName) {
  const engine = new TextEncoder().encode('placeholder engine: never deserialized when the device check fails');
  const manifest = {
    format: 'tensorrt-node program',
    formatVersion: '1.0',
    library: { name: 'tensorrt-node', version: require(path.join(root, 'package.json')).version },
    backend: 'tensorrt',
    backends: { tensorrt: '10.16.0' },
    inputs: [{ name: 'x', value: 'x', dtype: 'float32', shape: [1, 4] }],
    outputs: [{ name: 'y', value: 'y', dtype: 'float32', shape: [1, 4] }],
    symbols: [],
    segments: [
      {
        kind: 'tensorrt',
        backend: 'tensorrt',
        engine: 'engines/segment0.engine',
        inputs: ['x'],
        outputs: ['y'],
        device: { ...record(major, minor, deviceName), allowGpuFallback: false, backend: 'tensorrt', backendVersion: '10.16.0' },
      },
    ],
    constants: [],
    report: { ops: [], segments: [] },
    blobs: { 'engines/segment0.engine': { sha256: crypto.createHash('sha256').update(engine).digest('hex'), bytes: engine.length } },
  };
  return zipSync({ 'manifest.json': new TextEncoder().encode(JSON.stringify(manifest)), 'engines/segment0.engine': engine }, { level: 0 });
}

const errorOf = async (f) => {
  try {
    await f();
    return null;
  } catch (error) {
    return { code: error.code, message: error.message };
  }
};

(async () => {
  const report = await devicesOrSkip();
  const problems = [];
  const found = report.devices.map((d) => ({ ordinal: d.ordinal, name: d.name, computeCapability: `${d.computeCapability.major}.${d.computeCapability.minor}` }));

  // 9.0: a 9.0 device is selected; another model than the record's is named in a warning.
  let selected = null;
  try {
    const s = selectDevice(record(9, 0, 'NVIDIA H200'), report.devices, 0);
    selected = { ordinal: s.device.ordinal, name: s.device.name, rule: s.rule, reason: s.reason, warnings: s.warnings };
    if (s.device.computeCapability.major !== 9 || s.device.computeCapability.minor !== 0) {
      problems.push(`compute capability 9.0 selected ${s.device.name} of compute capability ${s.device.computeCapability.major}.${s.device.computeCapability.minor}`);
    }
    if (s.device.name !== 'NVIDIA H200' && !s.warnings.some((w) => w.includes('another model'))) {
      problems.push(`an engine built on an NVIDIA H200 selected ${s.device.name} without a warning: ${JSON.stringify(s.warnings)}`);
    }
  } catch (error) {
    selected = { code: error.code, message: error.message };
    problems.push(`compute capability 9.0 was refused: ${error.message}`);
  }

  // 8.0: refused with the no-compatible-device message.
  const refused = await errorOf(() => selectDevice(record(8, 0, 'NVIDIA A100-SXM4-80GB'), report.devices, 0));
  const noCompatibleDevice = /^Unable to deserialize program: engines were built for compute capability 8\.0, but no device with compute capability 8\.0 is available \(found: device \d+ ".*" \(compute capability 9\.0\).*\)$/;
  if (refused === null) problems.push('compute capability 8.0 was accepted');
  else if (refused.code !== 'E_NO_COMPATIBLE_DEVICE' || !noCompatibleDevice.test(refused.message)) problems.push(`unexpected refusal: ${JSON.stringify(refused)}`);

  // The same through a program file: 9.0 passes the device check (and then needs the TensorRT
  // backend, which this build does not have yet); 8.0 fails it.
  const load90 = await errorOf(() => loadProgramBuffer(programFile(9, 0, 'NVIDIA H200')));
  if (load90 !== null && load90.code === 'E_NO_COMPATIBLE_DEVICE') problems.push(`a 9.0 program file was refused: ${load90.message}`);
  const load80 = await errorOf(() => loadProgramBuffer(programFile(8, 0, 'NVIDIA A100-SXM4-80GB')));
  if (load80 === null || load80.code !== 'E_NO_COMPATIBLE_DEVICE' || !noCompatibleDevice.test(load80.message)) problems.push(`an 8.0 program file: ${JSON.stringify(load80)}`);

  console.log(JSON.stringify({ skipped: false, found, selected, refused, load90, load80, problems }, null, 2));
  process.exit(problems.length === 0 ? 0 : 1);
})();
