/**
 * calibrate()'s refusals, each a typed error with a stable code naming what is wrong (the
 * option, the file, the batch and input), and its warnings: no batches, a batch missing an
 * input or with a wrong one, a model path that does not exist, bad options, an op type the
 * model lacks (a warning), an abort before, between and during batches (the batch source is
 * told to stop).
 */
import { AbortedError } from '../../lib/errors';
import type { LogLevel } from '../../lib/logger';
import { Tensor } from '../../lib/ir/tensor';
import { calibrate, type CalibrateOptions } from '../../lib/quantization';
import { rejection } from '../helpers/errors';
import { batchesFor, convNet, mlp } from './models';

const m = mlp();
const good = batchesFor(m, 3, 4, 1);

test('no batches: E_INVALID_ARGUMENT saying at least one is needed', async () => {
  for (const empty of [[], (function* () {})(), (async function* () {})()]) {
    const e = await rejection(calibrate(m.model, empty as Iterable<Record<string, Tensor>>));
    expect(e.code).toBe('E_INVALID_ARGUMENT');
    expect(e.message).toContain('at least one batch');
  }
});

test('batches that are not an iterable: E_INVALID_ARGUMENT', async () => {
  const e = await rejection(calibrate(m.model, { x: good[0]!.x } as never));
  expect(e.code).toBe('E_INVALID_ARGUMENT');
  expect(e.message).toContain('iterable');
});

describe('a bad batch is E_BAD_INPUT naming the batch (0-based) and the input', () => {
  test('a batch missing an input; the source is told to stop', async () => {
    let stopped = false;
    function* source(): Generator<Record<string, Tensor>> {
      try {
        yield good[0]!;
        yield {};
        yield good[1]!;
      } finally {
        stopped = true;
      }
    }
    const e = await rejection(calibrate(m.model, source()));
    expect(e.code).toBe('E_BAD_INPUT');
    expect(e.message).toContain('calibration batch 1 is missing input "x"');
    expect(e.details).toMatchObject({ batch: 1, input: 'x' });
    expect(stopped).toBe(true);
  });

  test.each([
    ['an input the model does not take', { ...good[0]!, y: good[0]!.x! }, '"y", which is not an input of the model'],
    ['a wrong dtype', { x: Tensor.from('int32', [4, 16], new Array(64).fill(1)) }, 'input "x" is int32, the model takes float32[N, 16]'],
    ['a wrong shape', { x: new Tensor('float32', [4, 15]) }, 'input "x" has shape [4, 15], the model takes float32[N, 16]'],
    ['a wrong rank', { x: new Tensor('float32', [64]) }, 'input "x" has shape [64]'],
    ['not a Tensor', { x: [1, 2, 3] }, 'input "x" must be a Tensor'],
    ['not a record', good[0]!.x!, 'is not an input record'],
  ])('%s', async (_, batch, message) => {
    const e = await rejection(calibrate(m.model, [good[0]!, batch as never]));
    expect(e.code).toBe('E_BAD_INPUT');
    expect(e.message).toContain('calibration batch 1');
    expect(e.message).toContain(message);
    expect(e.details.batch).toBe(1);
  });

  test.each(['onnxruntime', 'interpreter'] as const)('the same refusal with the %s runner', async (runner) => {
    const e = await rejection(calibrate(m.model, [{}], { runner }));
    expect(e.code).toBe('E_BAD_INPUT');
    expect(e.message).toContain('calibration batch 0 is missing input "x"');
  });
});

describe('the model', () => {
  test('a path that does not exist: E_BAD_MODEL naming it', async () => {
    const e = await rejection(calibrate('/nonexistent/dir/model.onnx', good));
    expect(e.code).toBe('E_BAD_MODEL');
    expect(e.message).toContain('/nonexistent/dir/model.onnx');
    expect(e.details.file).toBe('/nonexistent/dir/model.onnx');
  });

  test('bytes that are not an ONNX model: E_BAD_MODEL', async () => {
    const e = await rejection(calibrate(new Uint8Array([1, 2, 3, 4, 5]), good));
    expect(e.code).toBe('E_BAD_MODEL');
  });

  test('neither a path nor bytes: E_INVALID_ARGUMENT', async () => {
    expect((await rejection(calibrate(42 as never, good))).code).toBe('E_INVALID_ARGUMENT');
  });
});

describe('options', () => {
  test.each([
    [{ method: 'kl' }, 'method must be one of minmax, entropy, percentile'],
    [{ precision: 'int4' }, 'precision must be one of int8, fp8'],
    [{ percentile: 0 }, 'percentile must be a number in (0, 100]'],
    [{ percentile: 101 }, 'percentile must be a number in (0, 100]'],
    [{ ops: [] }, 'ops must be a non-empty list'],
    [{ ops: 'Conv' }, 'ops must be a non-empty list'],
    [{ exclude: [3] }, 'exclude must be a list of node names'],
    [{ perChannelWeights: 'yes' }, 'perChannelWeights must be a boolean'],
    [{ runner: 'gpu' }, 'runner must be one of auto, onnxruntime, interpreter'],
    [{ signal: {} }, 'signal must be an AbortSignal'],
    [{ onProgress: 1 }, 'onProgress must be a function'],
  ])('%j: E_INVALID_ARGUMENT naming the option', async (options, message) => {
    const e = await rejection(calibrate(m.model, good, options as unknown as CalibrateOptions));
    expect(e.code).toBe('E_INVALID_ARGUMENT');
    expect(e.message).toContain(message);
  });

  test('an op type in `ops` the model lacks, or an excluded name it lacks: a warning (logger and report), not an error', async () => {
    const logged: [LogLevel, string][] = [];
    const c = convNet();
    const { report } = await calibrate(c.model, batchesFor(c, 1, 2, 1), { ops: ['Conv', 'LSTM'], exclude: ['nope'], logger: (level, message) => logged.push([level, message]) });
    const warnings = logged.filter(([level]) => level === 'warn').map(([, message]) => message);
    expect(warnings).toEqual(report.warnings);
    expect(warnings.some((w) => w.includes('no LSTM node'))).toBe(true);
    expect(warnings.some((w) => w.includes('"nope"'))).toBe(true);
    expect(report.quantizedNodeNames).toEqual(['conv1', 'conv2']);
  });

  test('an op type other than the four: a Q/DQ pair on each of its non-constant inputs, constants left float', async () => {
    const { report } = await calibrate(m.model, good, { ops: ['Add'] });
    expect(report.activations.map((a) => [a.tensor, a.consumers])).toEqual([['h2', ['fc2_bias']]]);
    expect(report.weights).toEqual([]);
    expect(report.opset).toEqual({ from: 17, to: 17 });
  });
});

describe('abort', () => {
  test('before the start: E_ABORTED, no batch pulled', async () => {
    const controller = new AbortController();
    controller.abort();
    let pulled = 0;
    const source = (function* () {
      pulled++;
      yield good[0]!;
    })();
    const e = await rejection(calibrate(m.model, source, { signal: controller.signal }));
    expect(e).toBeInstanceOf(AbortedError);
    expect(e.code).toBe('E_ABORTED');
    expect(pulled).toBe(0);
  });

  test.each(['onnxruntime', 'interpreter'] as const)('mid-way (%s): E_ABORTED after the batch it came in, quoting the reason; the source is stopped', async (runner) => {
    const controller = new AbortController();
    let stopped = false;
    let pulled = 0;
    function* source(): Generator<Record<string, Tensor>> {
      try {
        for (let i = 0; i < 5; i++) {
          pulled++;
          yield good[i % good.length]!;
        }
      } finally {
        stopped = true;
      }
    }
    const seen: number[] = [];
    const e = await rejection(
      calibrate(m.model, source(), {
        runner,
        signal: controller.signal,
        onProgress: ({ batches }) => {
          seen.push(batches);
          if (batches === 2) controller.abort(new Error('enough'));
        },
      }),
    );
    expect(e.code).toBe('E_ABORTED');
    expect(e.message).toContain('enough');
    expect(seen).toEqual([1, 2]);
    expect(pulled).toBe(2);
    expect(stopped).toBe(true);
  });

  test('while waiting for a batch that never comes: E_ABORTED at once', async () => {
    const controller = new AbortController();
    const never: AsyncIterable<Record<string, Tensor>> = {
      [Symbol.asyncIterator]: () => ({ next: () => new Promise(() => undefined) }),
    };
    const pending = calibrate(m.model, never, { signal: controller.signal });
    setTimeout(() => controller.abort(), 20);
    expect((await rejection(pending)).code).toBe('E_ABORTED');
  });

  test('during an onnxruntime run: the worker is stopped and the call rejects with E_ABORTED', async () => {
    const c = convNet();
    // A small batch, then a large one (hundreds of ms of onnxruntime): the abort comes 1 ms into the second.
    const batches = [...batchesFor(c, 1, 2, 3), ...batchesFor(c, 1, 2048, 4)];
    const controller = new AbortController();
    const started = performance.now();
    const pending = calibrate(c.model, batches, {
      signal: controller.signal,
      runner: 'onnxruntime',
      onProgress: ({ batches: n }) => {
        if (n === 1) setTimeout(() => controller.abort(), 1);
      },
    });
    const e = await rejection(pending);
    expect(e.code).toBe('E_ABORTED');
    expect(performance.now() - started).toBeLessThan(10_000);
  });
});
