/**
 * selectDevice(): every rule and tie-break of the selection hierarchy
 * (lib/engine/device-selection.ts), with injected device lists (the function is pure), and
 * the compile-time device setting and record.
 */
import { engineDeviceRecord, resolveDeviceSetting } from '../../lib/compile/device-target';
import { resolveSettings } from '../../lib/compile/settings';
import type { CudaDevice } from '../../lib/devices';
import { InvalidArgumentError, NoCompatibleDeviceError } from '../../lib/errors';
import { deviceTargetOf, isCompatibleDevice, selectDevice, type DeviceTarget, type SelectableDevice } from '../../lib/engine/device-selection';
import { referenceEngineDevice, TEST_H200 } from '../helpers/devices';
import { thrown } from '../helpers/errors';

const gpu = (ordinal: number, name: string, cc: string): SelectableDevice => {
  const [major, minor] = cc.split('.').map(Number) as [number, number];
  return { ordinal, name, computeCapability: { major, minor } };
};

const H200 = 'NVIDIA H200';
const H100 = 'NVIDIA H100 80GB HBM3';
const A100 = 'NVIDIA A100-SXM4-80GB';
const L40S = 'NVIDIA L40S';
const T4 = 'Tesla T4';
const ORIN = 'Orin';

const target = (over: Partial<DeviceTarget> = {}): DeviceTarget => ({
  type: 'gpu',
  gpuId: 0,
  dlaCore: null,
  computeCapability: { major: 9, minor: 0 },
  deviceName: H200,
  hardwareCompatibility: 'none',
  ...over,
});

const noDevice = (fn: () => unknown): NoCompatibleDeviceError => thrown(fn, NoCompatibleDeviceError, 'E_NO_COMPATIBLE_DEVICE');

describe('selectDevice: GPU engines', () => {
  test('one GPU with the same compute capability is the only candidate', () => {
    const s = selectDevice(target(), [gpu(0, H200, '9.0')], 0);
    expect(s.device.ordinal).toBe(0);
    expect(s.rule).toBe('only-candidate');
    expect(s.candidates.map((d) => d.ordinal)).toEqual([0]);
    expect(s.warnings).toEqual([]);
  });

  test('one GPU of another compute capability: the no-compatible-device message, naming what was found', () => {
    const e = noDevice(() => selectDevice(target(), [gpu(0, A100, '8.0')], 0));
    expect(e.message).toBe(
      'Unable to deserialize program: engines were built for compute capability 9.0, but no device with compute capability 9.0 is available ' +
        `(found: device 0 "${A100}" (compute capability 8.0))`,
    );
    expect(e.details).toMatchObject({ found: [{ ordinal: 0, name: A100, computeCapability: '8.0' }] });
  });

  test('no device at all: "found: no CUDA device"', () => {
    const e = noDevice(() => selectDevice(target({ computeCapability: { major: 8, minor: 6 } }), [], null));
    expect(e.message).toBe(
      'Unable to deserialize program: engines were built for compute capability 8.6, but no device with compute capability 8.6 is available (found: no CUDA device)',
    );
  });

  test('the minor version counts: 8.0 does not run 8.6 engines', () => {
    expect(isCompatibleDevice(target({ computeCapability: { major: 8, minor: 6 } }), gpu(0, A100, '8.0'))).toBe(false);
    const e = noDevice(() => selectDevice(target({ computeCapability: { major: 8, minor: 6 } }), [gpu(0, A100, '8.0'), gpu(1, H200, '9.0')], 0));
    expect(e.message).toContain(`(found: device 0 "${A100}" (compute capability 8.0), device 1 "${H200}" (compute capability 9.0))`);
  });

  test('two identical GPUs: the current device wins', () => {
    const s = selectDevice(target(), [gpu(0, H200, '9.0'), gpu(1, H200, '9.0')], 1);
    expect(s.device.ordinal).toBe(1);
    expect(s.rule).toBe('current-device');
    expect(s.candidates.map((d) => d.ordinal)).toEqual([1, 0]);
  });

  test('two identical GPUs, neither current: the lowest id wins', () => {
    const s = selectDevice(target(), [gpu(1, H200, '9.0'), gpu(0, H200, '9.0')], null);
    expect(s.device.ordinal).toBe(0);
    expect(s.rule).toBe('lowest-id');
    expect(s.reason).toBe('the lowest device id among equally good candidates');
    // the current device being outside the list changes nothing
    expect(selectDevice(target(), [gpu(2, H200, '9.0'), gpu(1, H200, '9.0')], 0).device.ordinal).toBe(1);
  });

  test('same compute capability, different names: the same model wins over the current device', () => {
    const devices = [gpu(0, H100, '9.0'), gpu(1, H200, '9.0')];
    const s = selectDevice(target(), devices, 0);
    expect(s.device.ordinal).toBe(1);
    expect(s.rule).toBe('same-name');
    expect(s.reason).toBe(`the same model as the build device ("${H200}")`);
    expect(s.warnings).toEqual([]);
  });

  test('same compute capability, only another model: accepted with a warning (level none)', () => {
    const s = selectDevice(target(), [gpu(0, H100, '9.0')], 0);
    expect(s.device.ordinal).toBe(0);
    expect(s.warnings).toHaveLength(1);
    expect(s.warnings[0]).toContain(`built on "${H200}"`);
    expect(s.warnings[0]).toContain(H100);
  });

  test('mixed compute capabilities: only the matching ones are candidates, whatever is current', () => {
    const devices = [gpu(0, A100, '8.0'), gpu(1, L40S, '8.9'), gpu(2, H200, '9.0'), gpu(3, H100, '9.0'), gpu(4, T4, '7.5')];
    const s = selectDevice(target(), devices, 0);
    expect(s.device.ordinal).toBe(2);
    expect(s.candidates.map((d) => d.ordinal)).toEqual([2, 3]);
    expect(s.rule).toBe('same-name');
    // A100 engines: only the A100 qualifies
    const a = selectDevice(target({ computeCapability: { major: 8, minor: 0 }, deviceName: A100 }), devices, 2);
    expect(a.device.ordinal).toBe(0);
    expect(a.rule).toBe('only-candidate');
  });

  test('the current device is preferred among same-name candidates', () => {
    const devices = [gpu(0, H200, '9.0'), gpu(1, H200, '9.0'), gpu(2, H100, '9.0')];
    expect(selectDevice(target(), devices, 1).device.ordinal).toBe(1);
    // a current device of another model loses to a same-name one
    const s = selectDevice(target(), devices, 2);
    expect(s.device.ordinal).toBe(0);
    expect(s.candidates.map((d) => d.ordinal)).toEqual([0, 1, 2]);
    expect(s.rule).toBe('lowest-id'); // what separated it from the runner-up (the other H200)
    // among other-model candidates only, the current one wins
    const other = selectDevice(target({ deviceName: 'NVIDIA GH200 480GB' }), devices, 2);
    expect(other.device.ordinal).toBe(2);
    expect(other.rule).toBe('current-device');
  });

  test('the recorded gpuId is not a preference (the hierarchy ranks current device, then lowest id)', () => {
    const s = selectDevice(target({ gpuId: 1 }), [gpu(0, H200, '9.0'), gpu(1, H200, '9.0')], null);
    expect(s.device.ordinal).toBe(0);
  });

  test('an explicit device goes before every preference', () => {
    const devices = [gpu(0, H200, '9.0'), gpu(1, H100, '9.0'), gpu(2, H200, '9.0')];
    const s = selectDevice(target(), devices, 0, { device: 1 });
    expect(s.device.ordinal).toBe(1);
    expect(s.rule).toBe('explicit');
    expect(s.reason).toBe('asked for explicitly (device 1)');
    // the rest keeps its order
    expect(s.candidates.map((d) => d.ordinal)).toEqual([1, 0, 2]);
    expect(selectDevice(target(), devices, 0, { device: 2 }).device.ordinal).toBe(2);
  });

  test('an explicit device never breaks compatibility', () => {
    const devices = [gpu(0, A100, '8.0'), gpu(1, H200, '9.0')];
    const e = noDevice(() => selectDevice(target(), devices, 1, { device: 0 }));
    expect(e.message).toBe(
      'Unable to deserialize program: device 0 was asked for, but engines were built for compute capability 9.0 and ' +
        `device 0 "${A100}" (compute capability 8.0) cannot run them (compatible: device 1 "${H200}" (compute capability 9.0))`,
    );
    expect(e.details.requested).toBe(0);
    const missing = noDevice(() => selectDevice(target(), devices, 1, { device: 5 }));
    expect(missing.message).toContain('device 5 was asked for, but there is no device 5 (found: ');
    // with no compatible device at all, the no-compatible-device message comes first
    expect(noDevice(() => selectDevice(target(), [gpu(0, A100, '8.0')], 0, { device: 0 })).message).toContain('no device with compute capability 9.0 is available');
  });
});

describe('selectDevice: hardware-compatibility levels (TensorRT HardwareCompatibilityLevel)', () => {
  const devices = [gpu(0, T4, '7.5'), gpu(1, A100, '8.0'), gpu(2, L40S, '8.9'), gpu(3, H200, '9.0'), gpu(4, 'NVIDIA B200', '10.0')];
  const built86 = { computeCapability: { major: 8, minor: 6 }, deviceName: 'NVIDIA RTX A6000' };

  test('"none" (kNONE) needs the exact compute capability', () => {
    expect(() => selectDevice(target({ ...built86 }), devices, 0)).toThrow(NoCompatibleDeviceError);
  });

  test('"same-compute-capability" (kSAME_COMPUTE_CAPABILITY) needs it too, and accepts another model without a warning', () => {
    const t = target({ hardwareCompatibility: 'same-compute-capability' });
    const s = selectDevice(t, [gpu(0, H100, '9.0')], 0);
    expect(s.device.ordinal).toBe(0);
    expect(s.warnings).toEqual([]);
    const e = noDevice(() => selectDevice(t, [gpu(0, A100, '8.0')], 0));
    expect(e.message).toContain('built for compute capability 9.0, but no device with compute capability 9.0 is available');
  });

  test('"ampere+" (kAMPERE_PLUS) runs on every GPU of compute capability 8.0 or newer, never on older ones', () => {
    const t = target({ ...built86, hardwareCompatibility: 'ampere+' });
    const s = selectDevice(t, devices, 0);
    expect(s.candidates.map((d) => d.ordinal)).toEqual([1, 2, 3, 4]);
    expect(s.device.ordinal).toBe(1);
    expect(s.rule).toBe('lowest-id');
    expect(s.warnings[0]).toContain('hardware compatibility "ampere+"');
    expect(isCompatibleDevice(t, gpu(0, T4, '7.5'))).toBe(false);
    const e = noDevice(() => selectDevice(t, [gpu(0, T4, '7.5')], 0));
    expect(e.message).toBe(
      'Unable to deserialize program: engines were built for compute capability 8.6 with hardware compatibility "ampere+", ' +
        `but no device with compute capability 8.0 or newer is available (found: device 0 "${T4}" (compute capability 7.5))`,
    );
  });

  test('"ampere+" still prefers the build compute capability, then the name, then the current device', () => {
    const t = target({ hardwareCompatibility: 'ampere+' });
    const list = [gpu(0, A100, '8.0'), gpu(1, H100, '9.0'), gpu(2, H200, '9.0'), gpu(3, H200, '9.0')];
    const s = selectDevice(t, list, 0);
    expect(s.device.ordinal).toBe(2);
    expect(s.candidates.map((d) => d.ordinal)).toEqual([2, 3, 1, 0]);
    expect(selectDevice(t, list.slice(0, 3), 0).rule).toBe('same-name');
    expect(selectDevice(t, list, 3).device.ordinal).toBe(3);
    const cc = selectDevice(t, [gpu(0, A100, '8.0'), gpu(1, H100, '9.0')], 0);
    expect(cc.device.ordinal).toBe(1);
    expect(cc.rule).toBe('same-compute-capability');
    expect(cc.warnings).toEqual([]);
    // an explicit device may pick another compatible architecture
    expect(selectDevice(t, list, 0, { device: 0 }).device.ordinal).toBe(0);
  });
});

describe('selectDevice: DLA engines', () => {
  const dla = target({ type: 'dla', gpuId: 1, dlaCore: 1, computeCapability: { major: 8, minor: 7 }, deviceName: ORIN });

  test('the same compute capability and the same device id', () => {
    const s = selectDevice(dla, [gpu(0, ORIN, '8.7'), gpu(1, ORIN, '8.7')], 0);
    expect(s.device.ordinal).toBe(1);
    expect(s.rule).toBe('dla-device');
    expect(s.candidates.map((d) => d.ordinal)).toEqual([1]);
  });

  test('the name does not matter, the device id and compute capability do', () => {
    expect(selectDevice(dla, [gpu(1, 'Jetson AGX Orin', '8.7')], 1).device.ordinal).toBe(1);
    const e = noDevice(() => selectDevice(dla, [gpu(0, ORIN, '8.7')], 0));
    expect(e.message).toBe(
      'Unable to deserialize program: engines were built for DLA core 1 of device 1 with compute capability 8.7, ' +
        `but no device 1 with compute capability 8.7 is available (found: device 0 "${ORIN}" (compute capability 8.7))`,
    );
    expect(() => selectDevice(dla, [gpu(0, ORIN, '8.7'), gpu(1, 'Xavier', '7.2')], 0)).toThrow(NoCompatibleDeviceError);
  });

  test('an explicit device must be the DLA engine\'s device', () => {
    expect(selectDevice(dla, [gpu(0, ORIN, '8.7'), gpu(1, ORIN, '8.7')], 0, { device: 1 }).device.ordinal).toBe(1);
    expect(noDevice(() => selectDevice(dla, [gpu(0, ORIN, '8.7'), gpu(1, ORIN, '8.7')], 0, { device: 0 })).message).toContain('device 0 was asked for');
  });
});

describe('engine device records', () => {
  const h200 = TEST_H200;
  const orin: CudaDevice = { ...h200, ordinal: 1, name: ORIN, computeCapability: { major: 8, minor: 7 } };

  test('the reference backend records that it needs no GPU, whatever the setting', () => {
    for (const setting of [undefined, { gpuId: 3 }, { type: 'dla' as const, dlaCore: 1 }]) {
      const record = engineDeviceRecord(resolveDeviceSetting(setting), { name: 'reference' as const, version: '0.1.0', residency: 'host' as const }, [h200]);
      expect(record).toEqual(referenceEngineDevice('0.1.0'));
      expect(deviceTargetOf(record)).toBeNull();
    }
  });

  test('a GPU backend records the current device by default, or the one asked for', () => {
    const trt = { name: 'tensorrt' as const, version: '10.16.0', residency: 'device' as const };
    const record = engineDeviceRecord(resolveDeviceSetting(undefined), trt, [h200, orin]);
    expect(record).toEqual({
      type: 'gpu',
      gpuId: 0,
      dlaCore: null,
      allowGpuFallback: false,
      computeCapability: { major: 9, minor: 0 },
      deviceName: H200,
      hardwareCompatibility: 'none',
      backend: 'tensorrt',
      backendVersion: '10.16.0',
    });
    expect(engineDeviceRecord(resolveDeviceSetting(undefined), trt, [h200, orin], 1).deviceName).toBe(ORIN);
    const dla = engineDeviceRecord(resolveDeviceSetting({ type: 'dla', gpuId: 1, dlaCore: 1, allowGpuFallback: true }), trt, [h200, orin]);
    expect(dla).toMatchObject({ type: 'dla', gpuId: 1, dlaCore: 1, allowGpuFallback: true, computeCapability: { major: 8, minor: 7 }, deviceName: ORIN });
    // and the record selects its own device back
    expect(selectDevice(deviceTargetOf(dla)!, [h200, orin], 0).device.ordinal).toBe(1);
    expect(selectDevice(deviceTargetOf(record)!, [h200, orin], 0).device.ordinal).toBe(0);
  });

  test('a GPU backend refuses a missing GPU id and DLA on a device without DLA cores', () => {
    const trt = { name: 'tensorrt' as const, version: '10.16.0', residency: 'device' as const };
    expect(() => engineDeviceRecord(resolveDeviceSetting({ gpuId: 2 }), trt, [h200])).toThrow(/device\.gpuId 2: there is no such CUDA device.*found: device 0 "NVIDIA H200"/);
    expect(() => engineDeviceRecord(resolveDeviceSetting({ type: 'dla' }), trt, [h200])).toThrow(/has no DLA cores/);
  });
});

describe('settings.device validation', () => {
  test('defaults', () => {
    expect(resolveSettings({}).device).toEqual({ type: 'gpu', gpuId: undefined, dlaCore: null, allowGpuFallback: false });
    expect(resolveSettings({ device: { type: 'dla' } }).device).toEqual({ type: 'dla', gpuId: undefined, dlaCore: 0, allowGpuFallback: false });
    expect(resolveSettings({ device: { gpuId: 1 } }).device.gpuId).toBe(1);
  });

  test.each([
    [{ device: 'cuda:0' }, 'device must be an object'],
    [{ device: { type: 'cpu' } }, 'device.type must be "gpu" or "dla", got "cpu"'],
    [{ device: { gpuId: -1 } }, 'device.gpuId must be a non-negative integer, got -1'],
    [{ device: { gpuId: 1.5 } }, 'device.gpuId must be a non-negative integer, got 1.5'],
    [{ device: { type: 'dla', dlaCore: 'one' } }, 'device.dlaCore must be a non-negative integer, got "one"'],
    [{ device: { dlaCore: 1 } }, 'device.dlaCore is only meaningful with device.type "dla"'],
    [{ device: { allowGpuFallback: true } }, 'device.allowGpuFallback is only meaningful with device.type "dla"'],
    [{ device: { type: 'dla', allowGpuFallback: 'yes' } }, 'device.allowGpuFallback must be a boolean, got "yes"'],
    [{ device: { gpu_id: 0 } }, 'device has an unknown key "gpu_id"'],
  ])('%j: %s', (settings, message) => {
    expect(() => resolveSettings(settings as never)).toThrow(InvalidArgumentError);
    expect(() => resolveSettings(settings as never)).toThrow(`compile settings: ${message}`);
  });
});
