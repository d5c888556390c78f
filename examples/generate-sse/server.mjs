// A text-generation service on node:http that streams tokens as server-sent events. One
// program (a causal LM with a KV cache, docs/generate.md) and one generator are shared by every
// request; each request is its own generation with its own cache, so requests run side by side.
// A client that goes away aborts its generation (its cache is freed at once); SIGINT/SIGTERM
// stop accepting connections, end the generations still streaming, and dispose of the program.
//
//   node examples/generate-sse/server.mjs MODEL        (an .onnx causal LM exported with its
//                                                       KV cache, or a .trtp program from
//                                                       `tensorrt-node generate MODEL -o lm.trtp`)
//   PORT=8080 HOST=127.0.0.1 (PORT=0 picks a free port; the address is printed)
//   MAX_LENGTH=256 MAX_BATCH=1 (.onnx only: the sizes the model is compiled for)
//
//   curl -N localhost:8080/v1/generate -d '{"prompt_ids": [15496, 11], "max_new_tokens": 16}'
//   event: token
//   data: {"step":0,"token":314}
//   ...
//   event: done
//   data: {"tokens":[314, ...],"finish_reason":"length"}
//
// Request fields: prompt_ids (required), max_new_tokens, temperature, top_k, top_p, seed,
// stop_ids. Errors found before streaming answer 400 (or 500) with {code, message}; a failure
// once streaming has begun is an `event: error` with the same body.
//
// Token ids in, token ids out: the service stays independent of the tokenizer. To serve text,
// tokenize with the model's own tokenizer from npm, e.g. transformers.js (@huggingface/transformers):
//
//   import { AutoTokenizer } from '@huggingface/transformers';
//   const tokenizer = await AutoTokenizer.from_pretrained('Xenova/gpt2');  // or a local folder
//   const promptIds = tokenizer.encode('Hello, my name is');
//   ... each streamed id: tokenizer.decode([id]) (or decode all ids so far, for byte-level BPE
//   tokens that only make text together); its end-of-sequence id goes into stop_ids.
//
// (js-tiktoken or tiktoken serve OpenAI-style BPE vocabularies the same way.)
import * as http from 'node:http';
import * as path from 'node:path';
import { compileForGeneration, createGenerator, loadProgram } from 'tensorrt-node';

const model = process.argv[2];
if (model === undefined) {
  console.error('usage: node examples/generate-sse/server.mjs MODEL (.onnx with a KV cache, or .trtp)');
  process.exit(2);
}
const port = Number(process.env.PORT ?? 8080);
const host = process.env.HOST ?? '127.0.0.1';
const MAX_BODY_BYTES = 1 << 16;

/** Errors the client caused: these codes answer 400, anything else 500. */
const CLIENT_ERRORS = new Set(['E_BAD_REQUEST', 'E_INVALID_ARGUMENT']);

class BadRequest extends Error {
  code = 'E_BAD_REQUEST';
}

const program = await (/\.trtp$/i.test(model)
  ? loadProgram(model)
  : compileForGeneration(path.resolve(model), { maxLength: Number(process.env.MAX_LENGTH ?? 256), maxBatch: Number(process.env.MAX_BATCH ?? 1) })
).catch((error) => {
  console.error(`${error.code ?? 'error'}: ${error.message}`);
  process.exit(1);
});
// Refuses, naming what is missing, a program that is not a KV-cache LM or was not compiled for generation.
const generator = createGenerator(program);
console.log(`loaded ${path.basename(model)}: ${generator.layout.layers.length} layers, up to ${generator.limits.total.max} tokens a row (${program.backend} backend, cache on the ${generator.cache})`);

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

/** The request's JSON body as generate() options; the library checks the values themselves. */
function parseRequest(text) {
  let body;
  try {
    body = JSON.parse(text);
  } catch {
    throw new BadRequest('the body is not JSON');
  }
  if (body === null || typeof body !== 'object' || !Array.isArray(body.prompt_ids) || body.prompt_ids.some(Array.isArray)) {
    throw new BadRequest('"prompt_ids" must be a list of token ids (one prompt a request)');
  }
  const options = {};
  for (const [field, option] of [['max_new_tokens', 'maxNewTokens'], ['temperature', 'temperature'], ['top_k', 'topK'], ['top_p', 'topP'], ['seed', 'seed'], ['stop_ids', 'stopTokenIds']]) {
    if (body[field] !== undefined) options[option] = body[field];
  }
  return { promptIds: body.prompt_ids, options };
}

function sendJson(res, status, body) {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}

const event = (res, name, data) => res.write(`event: ${name}\ndata: ${JSON.stringify(data)}\n\n`);

async function handle(req, res) {
  if (req.method === 'GET' && req.url === '/healthz') return sendJson(res, 200, { ok: true, backend: program.backend });
  if (req.method !== 'POST' || req.url !== '/v1/generate') return sendJson(res, 404, { code: 'E_NOT_FOUND', message: 'POST /v1/generate or GET /healthz' });
  // The client closing its connection before the end aborts the generation.
  const controller = new AbortController();
  res.on('close', () => {
    if (!res.writableFinished) controller.abort(new Error('the client went away'));
  });
  let steps;
  let stopIds;
  try {
    const { promptIds, options } = parseRequest(await readBody(req));
    stopIds = new Set(options.stopTokenIds ?? []);
    // Bad prompts and options, and requests longer than the program takes, throw here: a 400.
    steps = generator.stream(promptIds, { ...options, signal: controller.signal });
  } catch (error) {
    const client = CLIENT_ERRORS.has(error.code);
    sendJson(res, error.status ?? (client ? 400 : 500), { code: error.code ?? 'E_SERVER', message: client ? error.message : 'internal error' });
    if (!client) console.error(error);
    return;
  }
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' });
  const tokens = [];
  try {
    // One prompt a request: each step has one token.
    for await (const { step, tokens: [token] } of steps) {
      tokens.push(token);
      event(res, 'token', { step, token });
    }
    event(res, 'done', { tokens, finish_reason: stopIds.has(tokens[tokens.length - 1]) ? 'stop' : 'length' });
  } catch (error) {
    // E_ABORTED after the client left: nobody to tell.
    if (!controller.signal.aborted) event(res, 'error', { code: error.code ?? 'E_SERVER', message: error.message });
  } finally {
    res.end();
  }
}

// Requests in progress per connection, for the shutdown: a connection that serves none is
// ended at once (server.closeIdleConnections() leaves out one that has not sent a request yet,
// such as a spare a client opened), and one serving a stream as soon as the stream ends.
const connections = new Map();
let stopping = false;
const server = http.createServer((req, res) => {
  const socket = req.socket;
  connections.set(socket, (connections.get(socket) ?? 0) + 1);
  res.on('close', () => {
    connections.set(socket, connections.get(socket) - 1);
    if (stopping && connections.get(socket) === 0) socket.end();
  });
  void handle(req, res);
});
server.on('connection', (socket) => {
  connections.set(socket, 0);
  socket.on('close', () => connections.delete(socket));
});
server.listen(port, host, () => {
  const { address, port: actual } = server.address();
  console.log(`listening on http://${address}:${actual}`);
});

function shutdown(signal) {
  if (stopping) {
    console.error(`${signal} again: exiting now`);
    process.exit(1);
  }
  stopping = true;
  console.log(`${signal}: closing the server`);
  // close() calls back once every connection has ended. Streams still open end now with an
  // `event: error` (E_ABORTED), and their connections after them.
  server.close(async () => {
    await program.dispose();
    console.log('stopped');
  });
  for (const [socket, requests] of connections) if (requests === 0) socket.end();
  void generator.dispose();
}
process.on('SIGINT', shutdown);
process.on('SIGTERM', shutdown);
