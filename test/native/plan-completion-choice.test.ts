/** Which path `'auto'` picks for a plan run (lib/gpu/gpu-plan.ts): pure, so tested without a device. */
import { INLINE_ENQUEUE_STEPS, usesCompletionThread } from '../../lib/gpu/gpu-plan';

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
