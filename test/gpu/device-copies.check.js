'use strict';
// DeviceTensor.to(device) and residency: a copy to the same device is bit-identical and on that
// device; an ordinal past the last device is a typed E_INVALID_ARGUMENT naming it, and the device
// stays usable. With two or more GPUs, a round trip 0 → 1 → 0 through cuMemcpyPeerAsync is
// bit-identical too; with one GPU that path cannot run here, and the output says so.
const { gpuCheck, assert, rejection, randomBytes } = require('./check-util');

gpuCheck('device-copies', async (lib, report) => {
  const { Tensor, toDevice } = lib;
  const count = report.devices.length;
  const summary = { devices: count };
  const n = (8 << 20) + 3; // not a multiple of anything convenient
  const bytes = randomBytes(n, 11);
  const host = new Tensor('uint8', [n], bytes);
  const src = await toDevice(host, 0);
  assert(JSON.stringify(src.residency) === JSON.stringify({ kind: 'device', ordinal: 0 }), `residency of a tensor on device 0 (${JSON.stringify(src.residency)})`);

  const same = await src.to(0);
  const back = (await same.toHost()).data;
  summary.sameDevice = { bytes: n, identical: Buffer.compare(Buffer.from(back), Buffer.from(bytes)) === 0, residency: same.residency };
  assert(summary.sameDevice.identical, 'to(0) from device 0 is bit-identical');
  assert(same.device === 0 && same.residency.ordinal === 0, 'to(0) lands on device 0');
  same.dispose();

  const bad = await rejection(src.to(count), `to(${count}) with ${count} device(s)`);
  summary.badOrdinal = { code: bad.code, message: bad.message };
  assert(bad.code === 'E_INVALID_ARGUMENT' && new RegExp(`There is no CUDA device ${count}`).test(bad.message), `to(${count}) is E_INVALID_ARGUMENT naming the device (${bad.code}: ${bad.message})`);
  const still = await src.to(0);
  still.dispose();

  if (count >= 2) {
    const t0 = process.hrtime.bigint();
    const peer = await src.to(1);
    const ms = Number(process.hrtime.bigint() - t0) / 1e6;
    const home = await peer.to(0);
    const roundTrip = (await home.toHost()).data;
    summary.peer = {
      residency: peer.residency,
      identical: Buffer.compare(Buffer.from(roundTrip), Buffer.from(bytes)) === 0,
      firstCopyMs: ms,
    };
    assert(peer.residency.ordinal === 1, 'to(1) lands on device 1');
    assert(summary.peer.identical, 'a 0 → 1 → 0 round trip is bit-identical');
    peer.dispose();
    home.dispose();
  } else {
    summary.peer = 'not run: one visible GPU, so the cuMemcpyPeerAsync path (to another device) cannot be exercised here';
  }
  src.dispose();
  return summary;
});
