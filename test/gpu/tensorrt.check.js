'use strict';
// GPU check (plain Node; runs on the GPU machine from a bundle) of the TensorRT part of the
// addon on a machine without libnvinfer. Build the addon with TensorRT's headers first
// (TENSORRT_INCLUDE_DIR=../shared/third_party/tensorrt-10.16/include npm run build:native) to
// check that build; the check says which build it found. It checks: the addon loads; TensorRT
// is reported absent cleanly (E_TENSORRT_MISSING listing what was searched and how to install
// it), never as a crash; `auto` passes over tensorrt to a usable backend; and the CUDA runtime
// still works (a DeviceTensor round trip). Exit 0 ok, 1 failed, 3 no GPU.
const path = require('node:path');
const { gpuCheck, assert, randomFloats } = require('./check-util');

const dist = path.join(__dirname, '..', '..', 'dist');

gpuCheck('tensorrt', async (lib) => {
  const { getAddon } = require(path.join(dist, 'native.js'));
  const { tensorrtStatus } = require(path.join(dist, 'tensorrt.js'));
  const { backendAvailability, resolveBackend } = require(path.join(dist, 'backends', 'index.js'));
  const addon = getAddon();
  const status = await tensorrtStatus();
  const summary = { addon: addon.path, backendBuilt: status.backendBuilt, library: status.library, tensorrtFunctions: typeof addon.binding.tensorrtBuild === 'function' };
  assert(status.backendBuilt === summary.tensorrtFunctions, 'bindingInfo().tensorrtBackend agrees with the functions the addon exports');
  if (!status.library.found) {
    assert(status.library.code === 'E_TENSORRT_MISSING', `library code ${status.library.code}`);
    assert(/ not found; searched .+; set TENSORRT_NODE_TENSORRT_LIBRARY .+ or install TensorRT 10 /.test(status.library.reason), `reason says what was searched and how to install: ${status.library.reason}`);
  }
  const availability = await backendAvailability();
  const trt = availability.find((b) => b.backend === 'tensorrt');
  summary.tensorrtAvailability = trt;
  const resolution = await resolveBackend('auto');
  summary.autoBackend = resolution.backend.name;
  if (!trt.ok) {
    assert(resolution.backend.name !== 'tensorrt', 'auto passes over an unusable tensorrt');
    assert(resolution.refusals[0].backend === 'tensorrt' && resolution.refusals[0].reasons.length > 0, 'auto records why tensorrt was refused');
    let named;
    try {
      await resolveBackend('tensorrt');
    } catch (error) {
      named = error;
    }
    assert(named && named.code === 'E_TENSORRT_MISSING', `backend: 'tensorrt' is E_TENSORRT_MISSING (got ${named && named.code})`);
    summary.namedTensorRTError = named.message;
  }
  // The CUDA runtime still works in this build of the addon.
  const data = randomFloats(1024, 3);
  const host = new lib.Tensor('float32', [1024], data);
  const device = await lib.toDevice(host, 0);
  const back = await device.toHost();
  device.dispose();
  assert(back.data.every((v, i) => v === data[i]), 'a DeviceTensor round trip returns the same floats');
  summary.deviceRoundTrip = 'ok';
  return summary;
});
