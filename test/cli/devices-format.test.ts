/**
 * `tensorrt-node devices`: the exit code (documented: 0 listed, 2 no driver or no device,
 * 1 error) and the terminal table, on hand-made probes.
 */
import { DEVICES_EXIT, devicesExitCode, formatDevices } from '../../lib/cli/devices-command';
import type { DeviceProbe } from '../../lib/devices';
import { FAKE_A100, FAKE_H200 } from '../helpers/devices';

const driver = { version: '13.0', versionNumber: 13000, library: '/usr/lib/x86_64-linux-gnu/libcuda.so.1' };

function failed(code: string, message = `failure ${code}`, withDriver = false): DeviceProbe {
  return { ok: false, driver: withDriver ? driver : null, devices: [], error: { code, message } };
}

describe('devicesExitCode', () => {
  test('the documented numbers', () => {
    expect(DEVICES_EXIT).toEqual({ ok: 0, error: 1, noDevice: 2 });
  });

  test('0 when devices were listed', () => {
    expect(devicesExitCode({ ok: true, driver, devices: [FAKE_H200], error: null })).toBe(0);
  });

  test.each([
    ['E_CUDA_MISSING', 2],
    ['E_NO_DEVICE', 2],
    ['E_CUDA', 1],
    ['E_ADDON_LOAD', 1],
    ['E_INTERNAL', 1],
  ])('%s exits %d', (code, exit) => {
    expect(devicesExitCode(failed(code))).toBe(exit);
  });

  test('a failure without an error description is an error, not "no device"', () => {
    expect(devicesExitCode({ ok: false, driver: null, devices: [], error: null })).toBe(1);
  });
});

describe('formatDevices', () => {
  const table = formatDevices({ ok: true, driver, devices: [FAKE_H200, FAKE_A100], error: null }).split('\n');

  test('a driver line, a header and one row per device', () => {
    expect(table).toHaveLength(4);
    expect(table[0]).toBe(`CUDA driver 13.0 (${driver.library})`);
    expect(table[1]!.split(/\s{2,}/)).toEqual(['#', 'name', 'cc', 'memory', 'free', 'SMs', 'PCI bus', 'UUID']);
    expect(table[2]!.split(/\s{2,}/)).toEqual(['0', 'NVIDIA H200', '9.0', '140.4 GiB', '?', '132', '0000:19:00.0', FAKE_H200.uuid]);
    expect(table[3]!.split(/\s{2,}/)).toEqual(['1', 'NVIDIA A100-SXM4-80GB', '8.0', '79.3 GiB', '?', '108', '0000:3B:00.0', FAKE_A100.uuid]);
  });

  test('free memory per device where it is known, ? where not', () => {
    // 3 GiB + 0.25 GiB free on device 1; device 0 did not answer.
    const memory = [{ device: 1, freeBytes: 3.25 * 1024 ** 3, totalBytes: FAKE_A100.totalMemoryBytes }];
    const rows = formatDevices({ ok: true, driver, devices: [FAKE_H200, FAKE_A100], error: null }, memory).split('\n');
    expect(rows[2]!.split(/\s{2,}/)[4]).toBe('?');
    expect(rows[3]!.split(/\s{2,}/)[4]).toBe('3.3 GiB');
  });

  test('columns are aligned and lines carry no trailing spaces', () => {
    const starts = (line: string): number[] => ['name', 'cc', 'memory', 'free', 'SMs', 'PCI bus', 'UUID'].map((_, i) => {
      // Start of the (i+1)-th column: after the i-th run of two or more spaces.
      const gaps = [...line.matchAll(/ {2,}/g)];
      return gaps[i]!.index! + gaps[i]![0].length;
    });
    const header = starts(table[1]!);
    expect(starts(table[2]!)).toEqual(header);
    expect(starts(table[3]!)).toEqual(header);
    for (const line of table) expect(line).toBe(line.trimEnd());
  });

  test('no device with a driver: the driver, the code and the message', () => {
    const text = formatDevices(failed('E_NO_DEVICE', 'the driver reports zero devices', true));
    expect(text.split('\n')).toEqual([
      `CUDA driver 13.0 (${driver.library})`,
      'No CUDA device available [E_NO_DEVICE]',
      'the driver reports zero devices',
    ]);
  });

  test('no driver: the code and the whole message', () => {
    const message = 'The CUDA driver library could not be loaded.\n  - libcuda.so.1: not found';
    const text = formatDevices(failed('E_CUDA_MISSING', message));
    expect(text).toBe(`No CUDA device available [E_CUDA_MISSING]\n${message}`);
  });
});
