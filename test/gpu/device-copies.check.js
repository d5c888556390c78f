'use strict';
// DeviceTensor.to(device) and residency: a copy to the same device is bit-identical and on that
// device; an ordinal past the last device is a typed E_INVALID_ARGUMENT naming it, and the device
// stays usable. With two or more GPUs, a round trip 0 → 1 → 0 through cuMemcpyPeerAsync is
// bit-identical too; with one GPU that path cannot run here, and the output says so. Strided
// device copies (gpuCopyRects) equal the same moves made on the host.
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
  summary.rects = await rectCopies(lib);
  return summary;
});

/**
 * gpuCopyRects (what a bucketed KV cache moves its slots with): a zero fill of a whole
 * destination holding random bytes, then two strided copies into it (a [6, 40]-byte block of
 * rows 40 bytes apart, and 3 rows of 8 bytes from another offset), compared byte for byte with
 * the same moves done on the host.
 */
async function rectCopies(lib) {
  const path = require('node:path');
  const { gpuBinding } = require(path.join(__dirname, '..', '..', 'dist', 'gpu', 'binding.js'));
  const { Tensor, toDevice } = lib;
  const srcBytes = randomBytes(6 * 40, 12);
  const dstBytes = randomBytes(6 * 64, 13);
  const src = await toDevice(new Tensor('uint8', [6 * 40], srcBytes), 0);
  const dst = await toDevice(new Tensor('uint8', [6 * 64], dstBytes), 0);
  await gpuBinding().gpuCopyRects([[dst.buffer, 0, 6 * 64]], [
    [dst.buffer, 16, 64, src.buffer, 0, 40, 40, 6],
    [dst.buffer, 200, 64, src.buffer, 33, 40, 8, 3],
  ]);
  const got = Buffer.from((await dst.toHost()).data);
  const want = Buffer.alloc(6 * 64);
  for (let r = 0; r < 6; r++) want.set(srcBytes.subarray(r * 40, r * 40 + 40), 16 + r * 64);
  for (let r = 0; r < 3; r++) want.set(srcBytes.subarray(33 + r * 40, 33 + r * 40 + 8), 200 + r * 64);
  const identical = Buffer.compare(got, want) === 0;
  assert(identical, 'gpuCopyRects: the fill and two strided copies equal the same moves on the host');
  src.dispose();
  dst.dispose();
  return { identical, bytes: got.length };
}
