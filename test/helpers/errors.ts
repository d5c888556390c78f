/**
 * The typed error a call throws or a promise rejects with, for tests that check its code,
 * class and message.
 */
import { TensorRTNodeError } from '../../lib/errors';

/**
 * Awaits `promise` and returns the TensorRTNodeError it rejects with. Fails (throws) when it
 * resolves; anything else it rejects with is rethrown as it is.
 */
export async function rejection(promise: Promise<unknown>): Promise<TensorRTNodeError> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof TensorRTNodeError) return error;
    throw error;
  }
  throw new Error('expected a rejection');
}

/**
 * Calls `fn` and returns the TensorRTNodeError it throws. Fails (throws) when it returns;
 * anything else it throws is rethrown as it is.
 */
export function thrownError(fn: () => unknown): TensorRTNodeError {
  try {
    fn();
  } catch (error) {
    if (error instanceof TensorRTNodeError) return error;
    throw error;
  }
  throw new Error('expected an error');
}

/** Calls `fn` and returns what it throws, after checking that it is a `type` with `code`; fails when it returns. */
export function thrown<E extends TensorRTNodeError>(fn: () => unknown, type: abstract new (...args: never[]) => E, code: string): E {
  const error = thrownError(fn);
  expect(error).toBeInstanceOf(type);
  expect(error.code).toBe(code);
  return error as E;
}
