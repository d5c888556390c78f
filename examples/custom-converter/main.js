'use strict';
// Registering a custom converter. The built-in converters of aten.convolution.default handle
// static shapes and a run-time batch. This example registers its own converter for 2-D
// convolutions whose batch dim is known only at run time, with a higher priority than the
// built-in one (so it is tried first) and a checkArgs that refuses what it does not handle
// (a refused node goes to the next candidate, here the built-in converter; when no candidate
// accepts a node, every refusal is listed in the report's `reasons`; the chosen converter is
// the report's `converter`): first a narrower version that refuses grouped convolutions, then
// the full one. It compiles MobileNetV3 for batch 1..8 once and checks batch 2 and batch 1
// against PyTorch.
//
//   node examples/custom-converter/main.js [FIXTURE_DIR]     (default test/fixtures/mobilenet_v3_small)
const fs = require('node:fs');
const path = require('node:path');
const { compile, dryRun, registerConverter, unregisterConverter, Tensor } = require('tensorrt-node');
// A converter's arguments are graph IR values: the IR is the package's `/ir` subpath (docs/api.md).
const { Value } = require('tensorrt-node/ir');

const fixtureDir = path.resolve(process.argv[2] ?? path.join(__dirname, '..', '..', 'test', 'fixtures', 'mobilenet_v3_small'));
const NAME = 'example: 2-D convolution, run-time batch';

/** `true` when the converter below can build `node`, otherwise why not (shown in the report). */
function checkArgs(node) {
  const { input, weight, bias, transposed } = node.args;
  if (transposed) return 'transposed convolutions are not handled';
  if (!(weight instanceof Value) || weight.producer.kind !== 'constant') return 'the weight is not a constant';
  if (bias instanceof Value && bias.producer.kind !== 'constant') return 'the bias is not a constant';
  if (weight.type.dtype !== 'float32' || input.type.dtype !== 'float32') return 'float32 only';
  const shape = input.type.shape;
  if (shape.length !== 4) return `a rank-${shape.length} input is not a 2-D convolution`;
  const runTime = shape.slice(1).filter((d) => typeof d !== 'number');
  if (runTime.length > 0) return 'only the batch dim may be a run-time dim (channels and spatial dims must be static)';
  for (const name of ['stride', 'padding', 'dilation', 'groups']) {
    if ([node.args[name]].flat().some((v) => typeof v !== 'number')) return `argument ${name} is a run-time value`;
  }
  return true;
}

/** One TensorRT convolution layer; PyTorch's symmetric padding is pre- and post-padding. */
function convolution(node, ctx) {
  const { input, weight, bias, stride, padding, dilation, groups } = node.args;
  const kernel = weight.producer.tensor;
  const layer = {
    kind: 'convolution',
    nbOutputMaps: kernel.shape[0],
    kernelSize: kernel.shape.slice(2),
    stride,
    prePadding: padding,
    postPadding: padding,
    dilation,
    groups,
    kernel,
    bias: bias instanceof Value ? bias.producer.tensor : null,
  };
  return [ctx.add(layer, [ctx.tensor(input)])];
}

function readTensor(entry) {
  const bytes = fs.readFileSync(path.join(fixtureDir, entry.file));
  return new Tensor('float32', entry.shape, new Float32Array(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength)));
}

/** Rows [from, to) of a batched tensor. */
function rows(t, from, to) {
  const per = t.data.length / t.shape[0];
  return new Tensor(t.dtype, [to - from, ...t.shape.slice(1)], t.data.slice(from * per, to * per));
}

/**
 * Fixture tolerance for float32 (test/fixtures/README.md: rtol 1e-4, atol 1e-5), with atol
 * scaled by the largest expected magnitude: the MobileNet fixture's outputs are ~1e-9 (random
 * weights), so an absolute 1e-5 alone would accept anything.
 */
function close(actual, expected) {
  const scale = expected.data.reduce((m, x) => Math.max(m, Math.abs(x)), 0);
  return actual.data.length === expected.data.length && expected.data.every((e, i) => Math.abs(actual.data[i] - e) <= 1e-5 * scale + 1e-4 * Math.abs(e));
}

function summary(report) {
  const converted = report.ops.filter((op) => op.converted).length;
  return `${converted}/${report.ops.length} ops converted`;
}

async function main() {
  if (!fs.existsSync(path.join(fixtureDir, 'meta.json'))) {
    console.error(`usage: node ${path.basename(__filename)} FIXTURE_DIR (no meta.json in ${fixtureDir})`);
    process.exitCode = 2;
    return;
  }
  const meta = JSON.parse(fs.readFileSync(path.join(fixtureDir, 'meta.json'), 'utf8'));
  const model = path.join(fixtureDir, meta.files.onnx);
  const [, c, h, w] = meta.inputs[0].shape;
  const batchRange = { inputs: [{ min: [1, c, h, w], opt: [2, c, h, w], max: [8, c, h, w] }] };

  const before = await dryRun(model, batchRange);
  const conv = (r) => r.ops.find((op) => op.target === 'aten.convolution.default');
  console.log(`built-in converters only: ${summary(before)}`);
  console.log(`  first convolution converted by: ${conv(before).converter}`);

  // A narrower converter first: its checkArgs refuses grouped (depthwise) convolutions, which
  // then go to the next candidate, the built-in converter.
  const narrow = registerConverter('aten.convolution.default', convolution, {
    static: false,
    dynamic: true,
    priority: 1,
    checkArgs: (node) => (node.args.groups !== 1 ? 'grouped convolutions are not handled' : checkArgs(node)),
    name: `${NAME}, groups = 1`,
  });
  const partial = await dryRun(model, batchRange);
  unregisterConverter(narrow);
  const convs = partial.ops.filter((op) => op.target === 'aten.convolution.default');
  const depthwise = convs.find((op) => op.converter !== narrow.name);
  console.log(`with a groups = 1 converter: ${convs.filter((op) => op.converter === narrow.name).length}/${convs.length} convolutions by it`);
  console.log(`  ${depthwise.node} (grouped): ${depthwise.converter}`);

  const converter = registerConverter('aten.convolution.default', convolution, { static: false, dynamic: true, priority: 1, checkArgs, name: NAME });
  try {
    const program = await compile(model, batchRange);
    console.log(`with the custom converter, batch 1..8: ${summary(program.report)}`);
    console.log(`  first convolution converted by: ${conv(program.report).converter}`);
    try {
      const input = readTensor(meta.inputs[0]);
      const expected = readTensor(meta.outputs[0]);
      const [batch2] = await program.run([input]);
      const [batch1] = await program.run([rows(input, 0, 1)]);
      const ok = close(batch2, expected) && close(batch1, rows(expected, 0, 1));
      console.log(`batch 2 and batch 1 ${ok ? 'match' : 'DO NOT match'} PyTorch (one compiled program)`);
      if (!ok) process.exitCode = 1;
    } finally {
      await program.dispose();
    }
  } finally {
    // The registry is process-wide: remove what this example added.
    unregisterConverter(converter);
  }
}

main().catch((error) => {
  console.error(error.code ? `${error.code}: ${error.message}` : error);
  process.exitCode = 1;
});
