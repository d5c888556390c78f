/**
 * examples/http-service: the server runs in a child process on an ephemeral port; concurrent
 * requests (single rows and a whole batch) are checked against the fixture's PyTorch outputs,
 * bad requests against the documented error codes, and SIGTERM must end it cleanly (exit 0,
 * program disposed).
 */
import * as path from 'node:path';

import { Tensor } from '../../lib/ir/tensor';
import { requireBuild } from '../helpers/built-package';
import { expectClose } from '../helpers/compare';
import { loadFixture } from '../helpers/fixtures';
import { EXAMPLES } from './example-fixtures';
import { startExampleServer, type ExampleServer } from './example-server';

const SCRIPT = path.join(EXAMPLES, 'http-service', 'server.mjs');


async function post(url: string, body: unknown): Promise<{ status: number; body: any }> {
  const res = await fetch(`${url}/v1/infer`, { method: 'POST', body: typeof body === 'string' ? body : JSON.stringify(body) });
  return { status: res.status, body: await res.json() };
}

const rowsOf = (t: Tensor): number[][] => {
  const per = t.data.length / t.shape[0]!;
  return Array.from({ length: t.shape[0]! }, (_, i) => Array.from(t.data.subarray(i * per, (i + 1) * per) as Float32Array));
};

describe('examples/http-service', () => {
  const { cases } = loadFixture('mlp');
  const input = rowsOf(cases[0]!.inputs[0]!);
  const expected = rowsOf(cases[0]!.outputs[0]!);
  const asTensor = (rows: number[][]): Tensor => new Tensor('float32', [rows.length, rows[0]!.length], Float32Array.from(rows.flat()));
  let server: ExampleServer | undefined;

  beforeAll(async () => {
    requireBuild();
    server = await startExampleServer(SCRIPT);
  }, 30_000);
  afterAll(() => {
    if (server && server.child.exitCode === null && server.child.signalCode === null) server.child.kill('SIGKILL');
  });

  it('answers concurrent requests of different batch sizes from one program, matching PyTorch', async () => {
    const singles = input.map((row) => post(server!.url, { inputs: [row] }));
    const batch = post(server!.url, { inputs: input });
    const answers = await Promise.all([...singles, batch]);
    answers.forEach((a) => expect(a.status).toBe(200));
    answers.slice(0, input.length).forEach((a, i) => expectClose(asTensor(a.body.outputs), asTensor([expected[i]!]), undefined, `row ${i}`));
    expectClose(asTensor(answers[input.length]!.body.outputs), asTensor(expected), undefined, 'batch');
  });

  it('answers bad requests with 400 and the error code', async () => {
    const tooMany = await post(server!.url, { inputs: Array.from({ length: 65 }, () => input[0]) });
    expect(tooMany).toEqual({ status: 400, body: { code: 'E_SHAPE_OUT_OF_RANGE', message: expect.stringContaining('must be in [1, 64], got 65') } });
    const narrow = await post(server!.url, { inputs: [input[0]!.slice(1)] });
    expect(narrow).toEqual({ status: 400, body: { code: 'E_BAD_INPUT', message: expect.stringContaining('dim 1 must be 32, got 31') } });
    expect(await post(server!.url, 'not json')).toEqual({ status: 400, body: { code: 'E_BAD_REQUEST', message: 'the body is not JSON' } });
  });

  it('stops on SIGTERM: closes the server, disposes the program, exits 0', async () => {
    server!.child.kill('SIGTERM');
    expect(await server!.exit).toEqual({ code: 0, signal: null });
    expect(server!.stdout()).toContain('SIGTERM: closing the server\nstopped\n');
    expect(server!.stderr()).toBe('');
  });
});
