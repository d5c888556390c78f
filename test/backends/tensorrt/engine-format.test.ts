/** The tensorrt backend's engine bytes: a round trip, and malformed bytes as E_BAD_MODEL naming the problem. */
import { deserializeTensorRTEngine, serializeTensorRTEngine } from '../../../lib/backends/tensorrt/engine-format';
import { tensorrtBackend } from '../../../lib/backends/tensorrt';
import { BadModelError } from '../../../lib/errors';

const RECORD = {
  libraryVersion: 101600,
  hardwareCompatibility: 'ampere+' as const,
  versionCompatible: false,
  inputs: [{ name: 'x', dtype: 'float32' as const, shape: [-1, 3] }],
  outputs: [{ name: 'y', dtype: 'int64' as const, shape: [-1] }],
  plan: new TextEncoder().encode('PLAN BYTES'),
};

describe('tensorrt engine format', () => {
  it('round-trips the record and the plan bytes', () => {
    const back = deserializeTensorRTEngine(serializeTensorRTEngine(RECORD));
    expect({ ...back, plan: new TextDecoder().decode(back.plan) }).toEqual({ ...RECORD, plan: 'PLAN BYTES' });
    expect(tensorrtBackend.inspect(serializeTensorRTEngine(RECORD))).toEqual({ inputNames: ['x'], outputNames: ['y'] });
  });

  it('refuses other bytes, naming what is wrong', () => {
    expect(() => deserializeTensorRTEngine(new Uint8Array(8))).toThrow(BadModelError);
    expect(() => deserializeTensorRTEngine(new TextEncoder().encode('TRTNREF1' + '\0'.repeat(40)))).toThrow(/^tensorrt engine: /);
    const bytes = serializeTensorRTEngine({ ...RECORD, inputs: [{ name: 'x', dtype: 'complex64' as never, shape: [1] }] });
    expect(() => deserializeTensorRTEngine(bytes)).toThrow('tensorrt engine: input 0 is malformed');
    const truncated = serializeTensorRTEngine(RECORD).subarray(0, 60);
    expect(() => deserializeTensorRTEngine(truncated)).toThrow(BadModelError);
  });
});
