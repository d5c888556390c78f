// An HTTP inference service on node:http. One program is compiled at start-up and shared by
// every request: Program.run() queues work on the program's worker thread, so concurrent
// requests never block the event loop. SIGINT/SIGTERM stop accepting connections, let every
// request already being handled finish (connections that have not sent one are closed), then
// dispose of the program and exit with code 0.
//
//   node examples/http-service/server.mjs [MODEL]          (default test/fixtures/mlp/model.pt2)
//   PORT=8080 HOST=127.0.0.1 (PORT=0 picks a free port; the address is printed)
//
//   curl -s localhost:8080/v1/infer -d '{"inputs": [[0.1, 0.2, ... 32 numbers]]}'
//   → {"outputs": [[... 10 numbers]]}
//
// The model's first input must be float32 [batch, ...features] with a dynamic batch; each
// request sends a batch of rows and gets one output row per input row.
import * as http from 'node:http';
import * as path from 'node:path';
import { compile, formatShape, Tensor } from 'tensorrt-node';

const model = path.resolve(process.argv[2] ?? path.join(import.meta.dirname, '..', '..', 'test', 'fixtures', 'mlp', 'model.pt2'));
const port = Number(process.env.PORT ?? 8080);
const host = process.env.HOST ?? '127.0.0.1';
const MAX_BODY_BYTES = 1 << 20;

/** Errors the client caused: these codes answer 400, anything else 500. */
const CLIENT_ERRORS = new Set(['E_BAD_REQUEST', 'E_BAD_INPUT', 'E_SHAPE_OUT_OF_RANGE']);

class BadRequest extends Error {
  code = 'E_BAD_REQUEST';
}

// A torch.export archive carries the batch range (range_constraints); for an ONNX model
// give one here, e.g. { inputs: [{ min: [1, 32], max: [64, 32] }] }.
const program = await compile(model).catch((error) => {
  console.error(`${error.code ?? 'error'}: ${error.message}`);
  process.exit(1);
});
const [inputInfo] = program.inputs;
console.log(`compiled ${path.basename(model)}: ${inputInfo.name}: ${inputInfo.dtype}${formatShape(inputInfo.shape)} (${program.backend} backend)`);

function readBody(req) {
  return new Promise((resolve, reject) => {
    const chunks = [];
    let size = 0;
    req.on('data', (chunk) => {
      size += chunk.length;
      if (size > MAX_BODY_BYTES) reject(Object.assign(new BadRequest(`the body is larger than ${MAX_BODY_BYTES} bytes`), { status: 413 }));
      else chunks.push(chunk);
    });
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

/** `{"inputs": [[...row], ...]}` → a float32 tensor [rows, rowLength]; the program checks the shape. */
function parseInputs(text) {
  let body;
  try {
    body = JSON.parse(text);
  } catch {
    throw new BadRequest('the body is not JSON');
  }
  const rows = body?.inputs;
  if (!Array.isArray(rows) || rows.length === 0 || !rows.every((r) => Array.isArray(r) && r.length === rows[0].length && r.every(Number.isFinite))) {
    throw new BadRequest('"inputs" must be a non-empty array of equally long arrays of finite numbers');
  }
  return new Tensor('float32', [rows.length, rows[0].length], Float32Array.from(rows.flat()));
}

function toRows(t) {
  const per = t.data.length / t.shape[0];
  return Array.from({ length: t.shape[0] }, (_, i) => Array.from(t.data.subarray(i * per, (i + 1) * per)));
}

function send(res, status, body) {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}

async function handle(req, res) {
  if (req.method === 'GET' && req.url === '/healthz') return send(res, 200, { ok: true, backend: program.backend });
  if (req.method !== 'POST' || req.url !== '/v1/infer') return send(res, 404, { code: 'E_NOT_FOUND', message: 'POST /v1/infer or GET /healthz' });
  try {
    const input = parseInputs(await readBody(req));
    const [output] = await program.run([input]);
    send(res, 200, { outputs: toRows(output) });
  } catch (error) {
    const client = CLIENT_ERRORS.has(error.code);
    // Library errors carry a stable code and a message naming the input, dim and range.
    send(res, error.status ?? (client ? 400 : 500), { code: error.code ?? 'E_SERVER', message: client ? error.message : 'internal error' });
    if (!client) console.error(error);
  }
}

const server = http.createServer((req, res) => void handle(req, res));
server.listen(port, host, () => {
  const { address, port: actual } = server.address();
  console.log(`listening on http://${address}:${actual}`);
});

let stopping = false;
function shutdown(signal) {
  if (stopping) {
    console.error(`${signal} again: exiting now`);
    process.exit(1);
  }
  stopping = true;
  console.log(`${signal}: closing the server`);
  // close() stops accepting and calls back once every connection has ended; idle keep-alive
  // connections would hold it open, so close those now (busy ones close after their response).
  server.close(async () => {
    await program.dispose();
    console.log('stopped');
  });
  server.closeIdleConnections();
}
process.on('SIGINT', shutdown);
process.on('SIGTERM', shutdown);
