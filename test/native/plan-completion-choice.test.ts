/** Which path `'auto'` picks for a plan run (lib/gpu/gpu-plan.ts): pure, so tested without a device. */
import { DEFAULT_POLL_MICROS, INLINE_ENQUEUE_STEPS, inlinePollMicros, usesCompletionThread } from '../../lib/gpu/gpu-plan';

describe("GpuPlan completion 'auto'", () => {
  test('short enqueues take the completion thread, long ones the pool', () => {
    expect(usesCompletionThread({}, 1)).toBe(true);
    expect(usesCompletionThread({}, INLINE_ENQUEUE_STEPS)).toBe(true);
    expect(usesCompletionThread({}, INLINE_ENQUEUE_STEPS + 1)).toBe(false);
    expect(usesCompletionThread({ completion: 'auto' }, 1000)).toBe(false);
  });

  test("an explicit choice wins over the size; anything else is E_INVALID_ARGUMENT", () => {
    expect(usesCompletionThread({ completion: 'thread' }, 1000)).toBe(true);
    expect(usesCompletionThread({ completion: 'pool' }, 1)).toBe(false);
    expect(() => usesCompletionThread({ completion: 'spin' as never }, 1)).toThrow(
      expect.objectContaining({ code: 'E_INVALID_ARGUMENT' }),
    );
  });
});

describe("GpuPlan 'auto' polling on the calling thread", () => {
  test("'auto' polls for the default, the environment's or the given µs; 'thread' and 'pool' never do", () => {
    expect(inlinePollMicros({}, {})).toBe(DEFAULT_POLL_MICROS);
    expect(inlinePollMicros({}, { TENSORRT_NODE_INLINE_POLL_US: '0' })).toBe(0);
    expect(inlinePollMicros({ completion: 'auto' }, { TENSORRT_NODE_INLINE_POLL_US: '75' })).toBe(75);
    expect(inlinePollMicros({ pollMicros: 5 }, { TENSORRT_NODE_INLINE_POLL_US: '75' })).toBe(5);
    expect(inlinePollMicros({ completion: 'thread', pollMicros: 5 }, {})).toBe(0);
    expect(inlinePollMicros({ completion: 'pool' }, {})).toBe(0);
  });

  test('out-of-range or non-integer values are E_INVALID_ARGUMENT naming the setting', () => {
    for (const pollMicros of [-1, 1001, 2.5, Number.NaN]) {
      expect(() => inlinePollMicros({ pollMicros }, {})).toThrow(expect.objectContaining({ code: 'E_INVALID_ARGUMENT', message: expect.stringContaining('pollMicros') }));
    }
    expect(() => inlinePollMicros({}, { TENSORRT_NODE_INLINE_POLL_US: 'fast' })).toThrow(expect.objectContaining({ message: 'TENSORRT_NODE_INLINE_POLL_US must be an integer from 0 to 1000, got "fast"' }));
  });
});
