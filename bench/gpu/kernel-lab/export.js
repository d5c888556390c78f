#!/usr/bin/env node
/**
 * Writes cases.h for lab.cu: the kernels the cuda backend generates today for the memory-bound
 * layers that dominate the transformers' device time (bench/gpu/profile.bench.js's graph profile), with their
 * real launch geometry and packed arguments. lab.cu compiles them with NVRTC exactly as the
 * addon does, times them and reads their register counts beside hand-written candidate forms.
 * Needs `npm run build:ts` (it reads dist/).
 */
'use strict';
const fs = require('node:fs');
const path = require('node:path');
const dist = path.join(__dirname, '../../../dist');
const { mapLaunchInfo, mapSpecLaunch } = require(`${dist}/backends/cuda/layers/map.js`);
const nn = require(`${dist}/backends/cuda/layers/nn.js`);
const { packKernelArgs } = require(`${dist}/gpu/plan.js`);

const dense = (shape) => shape.map((_, i) => shape.slice(i + 1).reduce((a, d) => a * d, 1));
const volume = (s) => s.reduce((a, d) => a * d, 1);

/** Buffers are numbered per case; sizes in bytes. */
const cases = [];
function add(name, buffers, launches) {
  if (launches.length !== 1) throw new Error(`${name}: ${launches.length} launches`);
  cases.push({ name, buffers, launch: launches[0] });
}

// BERT-base: bias + GELU (erf) over [1024, 3072] fp16, the bias broadcast over rows.
{
  const dims = [1024, 3072];
  const body = '  float x = h2f(f2h(x0 + x1));\n  return 0.5f * x * (1.0f + erff(x * 0.70710678118654752f));';
  add('bert bias+gelu [1024,3072] fp16', [volume(dims) * 2, volume(dims) * 2, 3072 * 2], mapSpecLaunch(
    { key: 'lab.bias_gelu.float16', inputs: ['float16', 'float16'], output: 'float16', body },
    dims, { at: { buffer: 0 }, strides: dense(dims) }, [{ at: { buffer: 1 }, strides: dense(dims) }, { at: { buffer: 2 }, strides: [0, 1] }]));
}
// Llama attention scores: scale and causal mask [512, 512] broadcast over [1, 16, 512, 512] fp16.
{
  const dims = [1, 16, 512, 512];
  add('llama scale+mask [16,512,512] fp16', [volume(dims) * 2, volume(dims) * 2, 512 * 512 * 2], mapSpecLaunch(
    { key: 'lab.scale_mask.float16', inputs: ['float16', 'float16'], output: 'float16', body: '  return h2f(f2h(x0 * 0.08838834764831845f)) + x1;' },
    dims, { at: { buffer: 0 }, strides: dense(dims) }, [{ at: { buffer: 1 }, strides: dense(dims) }, { at: { buffer: 2 }, strides: [0, 0, 512, 1] }]));
}
// A dense rank-1 copy of the same bytes as the GELU's input (the map kernel's floor).
{
  const dims = [1024 * 3072];
  add('copy map [3145728] fp16', [volume(dims) * 2, volume(dims) * 2], mapSpecLaunch(
    { key: 'copy.float16', inputs: ['float16'], output: 'float16', body: '  return x0;', raw: true },
    dims, { at: { buffer: 0 }, strides: [1] }, [{ at: { buffer: 1 }, strides: [1] }]));
}
const ctx = (kind, params, inputs, outputs) => ({
  layer: { name: `lab_${kind}`, params: { kind, ...params }, inputs: [], outputs: [] },
  inputs, outputs, values: [], scratch: () => { throw new Error('no scratch'); }, weight: () => { throw new Error('no weights'); }, check: () => { throw new Error('no run-time checks'); },
});
const t = (shape, buffer) => ({ dtype: 'float16', shape, at: { buffer } });
// BERT softmax over 128 keys: [8, 12, 128, 128] fp16.
{
  const s = [8, 12, 128, 128];
  add('bert softmax [8,12,128,128] fp16', [volume(s) * 2, volume(s) * 2], nn.softmax(ctx('softmax', { axis: 3 }, [t(s, 1)], [t(s, 0)])));
}
// Llama softmax over 512 keys: [1, 16, 512, 512] fp16.
{
  const s = [1, 16, 512, 512];
  add('llama softmax [16,512,512] fp16', [volume(s) * 2, volume(s) * 2], nn.softmax(ctx('softmax', { axis: 3 }, [t(s, 1)], [t(s, 0)])));
}
// BERT LayerNorm over 768 channels: [8, 128, 768] fp16 with fp16 scale and bias.
{
  const s = [8, 128, 768];
  add('bert layernorm [8,128,768] fp16', [volume(s) * 2, volume(s) * 2, 768 * 2, 768 * 2], nn.normalization(
    ctx('normalization', { axes: [2], epsilon: 1e-12, nbGroups: 1 }, [t(s, 1), t([1, 1, 768], 2), t([1, 1, 768], 3)], [t(s, 0)])));
}
// Llama RMSNorm over 2048 channels: [1, 512, 2048] fp16 with an fp16 weight and the zero bias fuse-rmsnorm adds.
{
  const s = [1, 512, 2048];
  add('llama rmsnorm [512,2048] fp16', [volume(s) * 2, volume(s) * 2, 2048 * 2, 2], nn.normalization(
    ctx('normalization', { axes: [2], epsilon: 1e-5, nbGroups: 1, rms: true }, [t(s, 1), t([1, 1, 2048], 2), t([1, 1, 1], 3)], [t(s, 0)])));
}
// The same rows with their producers computed as they load (row prologues, lowering/prologue.ts).
const offer = (launches) => ({ producer: mapLaunchInfo(launches[0]), input: 0, taken: false });
// BERT attention: scores · 0.125, masked by a [8, 1, 1, 128] bool mask (select), then softmax.
{
  const s = [8, 12, 128, 128];
  const scaled = mapSpecLaunch({ key: 'lab.scale.float16', inputs: ['float16', 'float16'], output: 'float16', body: '  return x0 * x1;' },
    s, { at: { buffer: 1 }, strides: dense(s) }, [{ at: { buffer: 2 }, strides: dense(s) }, { at: { buffer: 3 }, strides: [0, 0, 0, 0] }]);
  const masked = mapSpecLaunch({ key: 'lab.masked.float16', inputs: ['bool', 'float16', 'float16'], output: 'float16', body: '  return x0 ? h2f(f2h(x1 * 0.125f)) : x2;' },
    s, { at: { buffer: 1 }, strides: dense(s) }, [{ at: { buffer: 4 }, strides: [128, 0, 0, 1] }, { at: { buffer: 2 }, strides: dense(s) }, { at: { buffer: 3 }, strides: [0, 0, 0, 0] }]);
  void scaled;
  const c = ctx('softmax', { axis: 3 }, [t(s, 1)], [t(s, 0)]);
  c.prologue = offer(masked);
  add('bert scale+mask+softmax [8,12,128,128] fp16', [volume(s) * 2, volume(s) * 2, volume(s) * 2, 256, 8 * 128], nn.softmax(c));
}
// BERT: bias + residual, then LayerNorm over 768.
{
  const s = [8, 128, 768];
  const sum = mapSpecLaunch({ key: 'lab.bias_residual.float16', inputs: ['float16', 'float16', 'float16'], output: 'float16', body: '  return h2f(f2h(x0 + x1)) + x2;' },
    s, { at: { buffer: 1 }, strides: dense(s) }, [{ at: { buffer: 4 }, strides: dense(s) }, { at: { buffer: 5 }, strides: [0, 0, 1] }, { at: { buffer: 6 }, strides: dense(s) }]);
  const c = ctx('normalization', { axes: [2], epsilon: 1e-12, nbGroups: 1 }, [t(s, 1), t([1, 1, 768], 2), t([1, 1, 768], 3)], [t(s, 0)]);
  c.prologue = offer(sum);
  add('bert bias+residual+layernorm [8,128,768] fp16', [volume(s) * 2, volume(s) * 2, 768 * 2, 768 * 2, volume(s) * 2, 768 * 2, volume(s) * 2], nn.normalization(c));
}
// Attention as one kernel (lowering/attention.ts), as the two transformers run it, in each tiling.
const { attentionLaunch } = require(`${dist}/backends/cuda/layers/attention.js`);
// Llama: 16 query heads over 4 kv heads (batch box [1, 4, 4]), 512 tokens, head dim 128, causal; q, k, v read [1, 512, h, 128].
{
  const p = { batch: [1, 4, 4], seqQ: 512, seqKV: 512, headDim: 128, scale: 0.08838834764831845, causal: true, query: [0, 512, 128, 2048], key: [0, 128, 0, 512], value: [0, 128, 0, 512], output: [0, 512, 128, 2048], outputShape: [1, 512, 2048] };
  const c = ctx('matmul', { opA: 'none', opB: 'none', attention: p }, [t([1, 512, 16, 128], 1), t([1, 512, 4, 128], 2), t([1, 512, 4, 128], 3)], [t([1, 512, 2048], 0)]);
  add('llama attention causal [16,512,128] fp16', [512 * 2048 * 2, 512 * 2048 * 2, 512 * 512 * 2, 512 * 512 * 2], attentionLaunch(c, p));
  add('llama attention causal [16,512,128] fp16, 2 row groups x 4 key streams', [512 * 2048 * 2, 512 * 2048 * 2, 512 * 512 * 2, 512 * 512 * 2], attentionLaunch(c, p, { rowGroups: 2, streams: 4 }));
  add('llama attention causal [16,512,128] fp16, 2 row groups x 2 key streams', [512 * 2048 * 2, 512 * 2048 * 2, 512 * 512 * 2, 512 * 512 * 2], attentionLaunch(c, p, { rowGroups: 2, streams: 2 }));
}
// BERT: 8 × 12 heads, 128 tokens, head dim 64, an additive [8, 1, 1, 128] mask; q, k, v read [8, 128, 12, 64].
{
  const p = { batch: [8, 12], seqQ: 128, seqKV: 128, headDim: 64, scale: 0.125, causal: false, query: [98304, 64, 768], key: [98304, 64, 768], value: [98304, 64, 768], output: [98304, 64, 768], mask: [128, 0, 0, 1], outputShape: [8, 128, 768] };
  const s = [8, 128, 768];
  const c = ctx('matmul', { opA: 'none', opB: 'none', attention: p }, [t(s, 1), t(s, 2), t(s, 3), t([8, 1, 1, 128], 4)], [t(s, 0)]);
  add('bert attention add-mask [96,128,64] fp16', [volume(s) * 2, volume(s) * 2, volume(s) * 2, volume(s) * 2, 8 * 128 * 2], attentionLaunch(c, p));
  add('bert attention add-mask [96,128,64] fp16, 2 row groups x 4 key streams', [volume(s) * 2, volume(s) * 2, volume(s) * 2, volume(s) * 2, 8 * 128 * 2], attentionLaunch(c, p, { rowGroups: 2, streams: 4 }));
  add('bert attention add-mask [96,128,64] fp16, 2 row groups x 2 key streams', [volume(s) * 2, volume(s) * 2, volume(s) * 2, volume(s) * 2, 8 * 128 * 2], attentionLaunch(c, p, { rowGroups: 2, streams: 2 }));
}
// Hand-edited forms of a generated kernel (variants/*.cu): `// case: <entry>` names the case,
// `// variant: <name>` the form, `// body: <file>` pulls in a shared body. Each is compiled after
// the case's own prelude, with ENTRY as its name, and launched with the case's arguments.
const variantDir = path.join(__dirname, 'variants');
const variants = [];
for (const file of fs.existsSync(variantDir) ? fs.readdirSync(variantDir).filter((f) => f.endsWith('.cu')).sort() : []) {
  const text = fs.readFileSync(path.join(variantDir, file), 'utf8');
  const tag = (name) => text.match(new RegExp(`^// ${name}: (.+)$`, 'm'))?.[1].trim();
  const entry = tag('case');
  const at = cases.findIndex((c) => c.launch.kernel.entry === entry);
  if (at < 0) throw new Error(`${file}: no case has the entry ${entry} (a lowering change renames a kernel: update the variant)`);
  const source = cases[at].launch.kernel.source;
  const end = source.indexOf('\n#endif\n', source.indexOf('#define GRID_STRIDE'));
  const body = tag('body') ? fs.readFileSync(path.join(variantDir, tag('body')), 'utf8') : '';
  const kernel = `${source.slice(0, end + 8)}\n${text}\n${body}`.replaceAll('ENTRY', entry);
  variants.push({ at, name: tag('variant') ?? file, source: kernel });
}
if (process.env.DUMP) cases.forEach((c, i) => fs.writeFileSync(path.join(process.env.DUMP, `case${i}.cu`), c.launch.kernel.source));

const cstr = (s) => `R"TRNLAB(${s})TRNLAB"`;
let out = '// Written by bench/gpu/kernel-lab/export.js from dist/: do not edit.\n#pragma once\n#include <cstdint>\n';
out += 'struct LabPtr { uint32_t at, buffer; uint64_t offset; };\n';
out += 'struct LabCase { const char* name; const char* key; const char* entry; const char* source; uint32_t grid[3], block[3], shared; const uint8_t* params; uint32_t paramBytes; const LabPtr* ptrs; uint32_t nptrs; const uint64_t* buffers; uint32_t nbuffers; };\n';
cases.forEach((c, i) => {
  const l = c.launch;
  const packed = packKernelArgs(l.args, c.name);
  out += `static const uint8_t params${i}[] = {${[...packed.bytes].join(',')}};\n`;
  out += `static const LabPtr ptrs${i}[] = {${packed.pointers.map((p) => `{${p.at}u, ${p.slice.buffer}u, ${p.slice.offset ?? 0}ull}`).join(', ')}};\n`;
  out += `static const uint64_t buffers${i}[] = {${c.buffers.map((b) => `${b}ull`).join(', ')}};\n`;
  out += `static const char source${i}[] = ${cstr(l.kernel.source)};\n`;
});
const dim3 = (d) => `{${[0, 1, 2].map((k) => d[k] ?? 1).join(', ')}}`;
out += 'static const LabCase kCases[] = {\n';
cases.forEach((c, i) => {
  const l = c.launch;
  out += `  {${JSON.stringify(c.name)}, ${JSON.stringify(l.kernel.key)}, ${JSON.stringify(l.kernel.entry)}, source${i}, ${dim3(l.grid)}, ${dim3(l.block)}, ${l.sharedBytes ?? 0}, params${i}, sizeof(params${i}), ptrs${i}, ${packKernelArgs(l.args).pointers.length}, buffers${i}, ${c.buffers.length}},\n`;
});
out += '};\nstatic const int kNumCases = sizeof(kCases) / sizeof(kCases[0]);\n';
out += 'struct LabVariant { int at; const char* name; const char* source; };\n';
variants.forEach((v, i) => { out += `static const char variant${i}[] = ${cstr(v.source)};\n`; });
out += `static const LabVariant kVariants[] = {${variants.map((v, i) => `{${v.at}, ${JSON.stringify(v.name)}, variant${i}}`).join(', ') || '{-1, "", ""}'}};\n`;
out += `static const int kNumVariants = ${variants.length};\n`;
fs.writeFileSync(path.join(process.argv[2] ?? __dirname, 'cases.h'), out);
console.log([...cases.map((c) => `${c.name}: ${c.launch.kernel.entry} grid ${c.launch.grid} block ${c.launch.block}`), ...variants.map((v) => `  variant of case ${v.at}: ${v.name}`)].join('\n'));
