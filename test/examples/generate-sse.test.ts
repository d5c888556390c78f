/**
 * examples/generate-sse: the server runs in a child process on an ephemeral port with the tiny
 * KV-cache LM (test/helpers/tiny-kv-lm.ts) written to a file; its server-sent events are read
 * as they come and their tokens checked against the onnxruntime oracle's greedy ones
 * (test/generate/lm-oracle.ts). Also: bad requests answer 400 with the library's code, a
 * client that leaves mid-stream does not disturb the next request, and SIGTERM ends it cleanly.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

import { requireBuild } from '../helpers/built-package';
import { tinyKvLm } from '../helpers/tiny-kv-lm';
import { oracleGreedy } from '../generate/lm-oracle';
import { EXAMPLES } from './example-fixtures';
import { startExampleServer, type ExampleServer } from './example-server';

const SCRIPT = path.join(EXAMPLES, 'generate-sse', 'server.mjs');
const PROMPT = [3, 1, 4, 1, 5];


interface SseEvent {
  event: string;
  data: any;
}

/** Reads server-sent events from `res` until `until` says stop (or the stream ends); the reader is cancelled after. */
async function readEvents(res: Response, until: (events: SseEvent[]) => boolean = () => false): Promise<SseEvent[]> {
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  const events: SseEvent[] = [];
  let buffered = '';
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    buffered += decoder.decode(value, { stream: true });
    let end: number;
    while ((end = buffered.indexOf('\n\n')) >= 0) {
      const block = buffered.slice(0, end);
      buffered = buffered.slice(end + 2);
      const field = (name: string): string | undefined => block.split('\n').find((l) => l.startsWith(`${name}: `))?.slice(name.length + 2);
      events.push({ event: field('event') ?? 'message', data: JSON.parse(field('data') ?? 'null') });
    }
    if (until(events)) {
      await reader.cancel();
      break;
    }
  }
  return events;
}

const post = (url: string, body: unknown, signal?: AbortSignal): Promise<Response> =>
  fetch(`${url}/v1/generate`, { method: 'POST', body: typeof body === 'string' ? body : JSON.stringify(body), ...(signal === undefined ? {} : { signal }) });

describe('examples/generate-sse', () => {
  const lm = tinyKvLm();
  let tmp: string;
  let server: ExampleServer | undefined;
  let oracle: number[];

  beforeAll(async () => {
    requireBuild();
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'trtn-sse-'));
    const model = path.join(tmp, 'lm.onnx');
    fs.writeFileSync(model, lm.model);
    oracle = (await oracleGreedy(lm, PROMPT, 12)).tokens;
    server = await startExampleServer(SCRIPT, [model], { MAX_LENGTH: '32' });
  }, 60_000);
  afterAll(() => {
    if (server && server.child.exitCode === null && server.child.signalCode === null) server.child.kill('SIGKILL');
    fs.rmSync(tmp, { recursive: true, force: true });
  });

  it('streams one token event per step, then done: the greedy tokens', async () => {
    const res = await post(server!.url, { prompt_ids: PROMPT, max_new_tokens: 12 });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/event-stream');
    const events = await readEvents(res);
    expect(events.slice(0, 12)).toEqual(oracle.map((token, step) => ({ event: 'token', data: { step, token } })));
    expect(events[12]).toEqual({ event: 'done', data: { tokens: oracle, finish_reason: 'length' } });
    expect(events).toHaveLength(13);
  });

  it('reads the first events as they come, and ends at a stop id', async () => {
    const first = await readEvents(await post(server!.url, { prompt_ids: PROMPT, max_new_tokens: 12 }), (e) => e.length >= 3);
    expect(first.slice(0, 3).map((e) => e.data.token)).toEqual(oracle.slice(0, 3));
    const stop = oracle[4]!;
    const events = await readEvents(await post(server!.url, { prompt_ids: PROMPT, max_new_tokens: 12, stop_ids: [stop] }));
    const at = oracle.indexOf(stop);
    expect(events[events.length - 1]).toEqual({ event: 'done', data: { tokens: oracle.slice(0, at + 1), finish_reason: 'stop' } });
  });

  it('samples reproducibly with a seed', async () => {
    const body = { prompt_ids: PROMPT, max_new_tokens: 8, temperature: 1.2, top_k: 5, seed: 11 };
    const [a, b] = await Promise.all([post(server!.url, body).then((r) => readEvents(r)), post(server!.url, body).then((r) => readEvents(r))]);
    expect(a[a.length - 1]!.data.tokens).toHaveLength(8);
    expect(b).toEqual(a);
  });

  it('answers bad requests with 400 and the error code', async () => {
    const bad = async (body: unknown): Promise<{ status: number; body: any }> => {
      const res = await post(server!.url, body);
      return { status: res.status, body: await res.json() };
    };
    expect(await bad('nope')).toEqual({ status: 400, body: { code: 'E_BAD_REQUEST', message: 'the body is not JSON' } });
    expect(await bad({ prompt_ids: [1, 99] })).toEqual({ status: 400, body: { code: 'E_INVALID_ARGUMENT', message: expect.stringContaining('the prompt[1] is 99, not a token id') } });
    expect(await bad({ prompt_ids: PROMPT, max_new_tokens: 40 })).toEqual({ status: 400, body: { code: 'E_INVALID_ARGUMENT', message: expect.stringContaining('this program takes at most 32') } });
  });

  it('a client leaving mid-stream aborts its generation; the next request is served', async () => {
    const controller = new AbortController();
    const res = await post(server!.url, { prompt_ids: PROMPT, max_new_tokens: 28 }, controller.signal);
    const reader = res.body!.getReader();
    await reader.read();
    controller.abort();
    const events = await readEvents(await post(server!.url, { prompt_ids: PROMPT, max_new_tokens: 4 }));
    expect(events[events.length - 1]).toEqual({ event: 'done', data: { tokens: oracle.slice(0, 4), finish_reason: 'length' } });
  });

  it('stops on SIGTERM: exit 0 after disposing the program', async () => {
    server!.child.kill('SIGTERM');
    const { code } = await server!.exit;
    expect(code).toBe(0);
    expect(server!.stdout()).toContain('stopped');
    expect(server!.stderr()).toBe('');
  });
});
