/**
 * The pure formatting functions of lib/devices.ts and lib/tensorrt.ts, fed hand-made values
 * of the shapes the addon produces (native/addon.cc CudaDevicesWorker::Result).
 */
import { formatCudaVersion, formatGpuUuid, parsePciBusId, toCudaDevice, toDeviceReport } from '../lib/devices';
import type { RawDevice, RawDeviceQuery } from '../lib/native';
import { formatTensorRTVersion } from '../lib/tensorrt';
import { FAKE_H200 } from './helpers/devices';

describe('formatGpuUuid', () => {
  test('groups 32 hex digits as nvidia-smi prints them', () => {
    expect(formatGpuUuid('8f2a4c1de5b64793a01b2c3d4e5f6071')).toBe('GPU-8f2a4c1d-e5b6-4793-a01b-2c3d4e5f6071');
  });

  test('lowercases', () => {
    expect(formatGpuUuid('FEEDFACE000102038090A0B0C0D0E0FF')).toBe('GPU-feedface-0001-0203-8090-a0b0c0d0e0ff');
  });

  test.each([
    ['too short', '8f2a4c1de5b64793a01b2c3d4e5f607'],
    ['too long', '8f2a4c1de5b64793a01b2c3d4e5f60711'],
    ['not hex', '8f2a4c1de5b64793a01b2c3d4e5f607g'],
    ['already formatted', 'GPU-8f2a4c1d-e5b6-4793-a01b-2c3d4e5f6071'],
    ['with dashes', '8f2a4c1d-e5b6-4793-a01b-2c3d4e5f6071'],
    ['empty', ''],
    ['with a newline', '8f2a4c1de5b64793a01b2c3d4e5f6071\n'],
  ])('rejects %s', (_what, input) => {
    expect(() => formatGpuUuid(input)).toThrow(TypeError);
    expect(() => formatGpuUuid(input)).toThrow('expected 32 hex digits');
  });
});

describe('parsePciBusId', () => {
  test.each([
    ['0000:19:00.0', { domain: 0, bus: 0x19, device: 0, function: 0 }],
    ['0000:3B:00.0', { domain: 0, bus: 0x3b, device: 0, function: 0 }],
    ['0000:3b:1f.7', { domain: 0, bus: 0x3b, device: 0x1f, function: 7 }],
    // nvidia-smi prints 8-digit domains.
    ['00000001:AF:00.1', { domain: 1, bus: 0xaf, device: 0, function: 1 }],
    ['ffffffff:ff:ff.0', { domain: 0xffffffff, bus: 0xff, device: 0xff, function: 0 }],
  ])('%s', (text, expected) => {
    expect(parsePciBusId(text)).toEqual(expected);
  });

  test.each([
    ['no domain', '19:00.0'],
    ['function 8', '0000:19:00.8'],
    ['three-digit bus', '0000:190:00.0'],
    ['nine-digit domain', '000000000:19:00.0'],
    ['no function', '0000:19:00'],
    ['trailing space', '0000:19:00.0 '],
    ['not hex', '0000:1g:00.0'],
    ['empty', ''],
  ])('rejects %s', (_what, text) => {
    expect(() => parsePciBusId(text)).toThrow(TypeError);
    expect(() => parsePciBusId(text)).toThrow('not a PCI bus id');
  });
});

describe('formatCudaVersion', () => {
  test.each([
    [13000, '13.0'],
    [12040, '12.4'],
    [12090, '12.9'],
    [11080, '11.8'],
    [10010, '10.1'],
  ])('%d is %s', (n, text) => {
    expect(formatCudaVersion(n)).toBe(text);
  });
});

describe('formatTensorRTVersion', () => {
  test.each([
    [101600, '10.16.0'],
    [100100, '10.1.0'],
    [100803, '10.8.3'],
    [110000, '11.0.0'],
  ])('%d is %s', (n, text) => {
    expect(formatTensorRTVersion(n)).toBe(text);
  });
});

const rawH200: RawDevice = {
  ordinal: 0,
  name: 'NVIDIA H200',
  uuid: '8f2a4c1de5b64793a01b2c3d4e5f6071',
  pciBusId: '0000:19:00.0',
  computeCapabilityMajor: 9,
  computeCapabilityMinor: 0,
  totalMemoryBytes: 150754820096,
  multiprocessorCount: 132,
};

describe('toDeviceReport', () => {
  test('shapes the addon answer', () => {
    const raw: RawDeviceQuery = { driverVersion: 12040, libraryPath: '/usr/lib/x86_64-linux-gnu/libcuda.so.1', devices: [rawH200] };
    expect(toDeviceReport(raw)).toEqual({
      driver: { version: '12.4', versionNumber: 12040, library: '/usr/lib/x86_64-linux-gnu/libcuda.so.1' },
      devices: [FAKE_H200],
    });
  });

  test('keeps the device order and ordinals', () => {
    const second = { ...rawH200, ordinal: 1, name: 'second', pciBusId: '0000:3B:00.0' };
    const report = toDeviceReport({ driverVersion: 13000, libraryPath: 'libcuda.so.1', devices: [rawH200, second] });
    expect(report.devices.map((d) => [d.ordinal, d.name, d.pci.bus])).toEqual([
      [0, 'NVIDIA H200', 0x19],
      [1, 'second', 0x3b],
    ]);
  });

  test('an empty device list stays empty', () => {
    expect(toDeviceReport({ driverVersion: 13000, libraryPath: 'x', devices: [] }).devices).toEqual([]);
  });

  test('a malformed uuid or bus id from the driver is rejected, not passed on', () => {
    expect(() => toCudaDevice({ ...rawH200, uuid: 'abc' })).toThrow(TypeError);
    expect(() => toCudaDevice({ ...rawH200, pciBusId: 'n/a' })).toThrow(TypeError);
  });
});
