#!/usr/bin/env node
'use strict';
// Generates the recording TensorRT double (a fake libnvinfer.so.10) from TensorRT's public
// headers: one recorder class per apiv::V* class of NvInferImpl.h, overriding every pure
// virtual method (so any call the addon makes is recorded, never a link or abstract-class
// error), and one shell per public class that holds apiv pointers (ITensor, every layer,
// IBuilder, ICudaEngine, ...), wired the way TensorRT's own objects are: the public class's
// inline methods forward to the recorders. Behaviour beyond recording (objects that hold
// their names and dims, plans, engines) is in behaviour.inc; the rest returns safe defaults.
//
//   node scripts/fake-nvinfer/generate.js INCLUDE_DIR OUT.cc
// prints the number of classes and methods it generated.
const fs = require('node:fs');
const path = require('node:path');

const [includeDir, outFile] = process.argv.slice(2);
if (!includeDir || !outFile) {
  process.stderr.write('usage: generate.js TENSORRT_INCLUDE_DIR OUT.cc\n');
  process.exit(2);
}

const stripComments = (s) => s.replace(/\/\*[\s\S]*?\*\//g, '').replace(/\/\/.*$/gm, '');

/** Splits "a, b<c, d>, e(f, g)" at top-level commas. */
function splitTop(s) {
  const out = [];
  let depth = 0;
  let cur = '';
  for (const ch of s) {
    if ('<(['.includes(ch)) depth++;
    if ('>)]'.includes(ch)) depth--;
    if (ch === ',' && depth === 0) {
      out.push(cur);
      cur = '';
    } else cur += ch;
  }
  if (cur.trim() !== '') out.push(cur);
  return out.map((x) => x.trim());
}

/** Parameter → declared type without its name or default value. */
function paramType(p) {
  const noDefault = p.replace(/=.*$/, '').trim();
  const m = /^(.*?[\s*&])([A-Za-z_]\w*)$/.exec(noDefault);
  // A trailing identifier after a space, * or & is the name, unless nothing else is left.
  if (m && m[1].trim() !== '' && !/^(const|unsigned|signed|long)$/.test(m[1].trim())) return m[1].trim();
  return noDefault;
}

function parseImpl(text) {
  const src = stripComments(text).replace(/#if !STRIP_TRT_RTX_INTERNAL_API|#endif.*$/gm, '');
  const classes = [];
  const re = /class\s+(V\w+)\s*:\s*public\s+VRoot\s*\{([\s\S]*?)\n\};/g;
  for (let m; (m = re.exec(src)); ) {
    const methods = [];
    const body = m[2].replace(/public:/g, '').replace(/\s+/g, ' ');
    for (const decl of body.split(';')) {
      // Attribute macros (TRT_NODISCARD, TRT_DEPRECATED) before `virtual` carry no ABI.
      const d = decl.trim().replace(/^(?:[A-Z][A-Z0-9_]*\s+)+(?=virtual )/, '');
      if (!d.startsWith('virtual ')) continue;
      const mm = /^virtual\s+(.+?)\s*\b(\w+)\s*\((.*)\)\s*(const)?\s*(noexcept)?\s*=\s*0$/.exec(d);
      if (!mm) throw new Error(`cannot parse: ${d}`);
      const [, ret, name, args, isConst, noexcept] = mm;
      methods.push({ ret: ret.trim(), name, params: splitTop(args).map(paramType), isConst: !!isConst, noexcept: !!noexcept });
    }
    classes.push({ name: m[1], methods });
  }
  return classes;
}

/** Public classes holding apiv pointers: name → { base, members: [{v, member}] }. */
function parsePublic(texts) {
  const out = new Map();
  for (const text of texts) {
    const src = stripComments(text);
    const re = /class\s+(?:TRT_DEPRECATED(?:_API)?\s+)?(I\w+)\s*(?:final\s*)?(?::\s*public\s+([\w:]+))?\s*\{|apiv::(V\w+)\s*\*\s*(m\w+)\s*;/g;
    let current = null;
    for (let m; (m = re.exec(src)); ) {
      if (m[1]) {
        current = { name: m[1], base: m[2] ? m[2].replace(/^nvinfer1::/, '') : null, members: [] };
        if (!out.has(current.name)) out.set(current.name, current);
        else current = out.get(current.name);
      } else if (current) current.members.push({ v: m[3], member: m[4] });
    }
  }
  return out;
}

const impl = parseImpl(fs.readFileSync(path.join(includeDir, 'NvInferImpl.h'), 'utf8'));
const publicClasses = parsePublic(['NvInfer.h', 'NvInferRuntime.h'].map((f) => fs.readFileSync(path.join(includeDir, f), 'utf8')));

/** The apiv members of a public class and its bases, base first. */
function chain(name) {
  const members = [];
  for (let c = publicClasses.get(name); c; c = c.base ? publicClasses.get(c.base) : null) {
    for (const m of c.members) members.unshift({ owner: c.name, ...m });
  }
  return members;
}
const shells = [...publicClasses.values()].filter((c) => c.members.length > 0).map((c) => c.name);
const shellSet = new Set(shells);
const implNames = new Set(impl.map((c) => c.name));
for (const s of shells) for (const m of chain(s)) if (!implNames.has(m.v)) throw new Error(`${s} holds apiv::${m.v}, which NvInferImpl.h does not declare`);

// Behaviours: "VClass::method" or "VClass::method/arity" → C++ body (params are a0..an).
const B = {
  'VTensor::setName': 'self->name = a0 == nullptr ? "" : a0;',
  'VTensor::getName': 'return self->name.c_str();',
  'VTensor::setDimensions': 'self->dims = a0;',
  'VTensor::getDimensions': 'return self->dims;',
  'VTensor::getType': 'return static_cast<DataType>(self->dtype);',
  'VLayer::setName': 'self->name = a0 == nullptr ? "" : a0;',
  'VLayer::getName': 'return self->name.c_str();',
  'VLayer::getNbOutputs': 'return self->nbOutputs;',
  'VLayer::getOutput': 'return fake::LayerOutput(self, a0);',
  // IAttention is no ILayer but is named and read the same way.
  'VAttention::setName': 'self->name = a0 == nullptr ? "" : a0; return true;',
  'VAttention::getName': 'return self->name.c_str();',
  'VAttention::getNbOutputs': 'return self->nbOutputs;',
  'VAttention::getOutput': 'return fake::LayerOutput(self, a0);',
  'VNetworkDefinition::addInput': 'return fake::NewInput(self, a0, a1, a2);',
  'VNetworkDefinition::markOutput': 'self->netOutputs.push_back(fake::Lookup(&a0));',
  'VNetworkDefinition::getNbInputs': 'return static_cast<int32_t>(self->netInputs.size());',
  'VNetworkDefinition::getNbOutputs': 'return static_cast<int32_t>(self->netOutputs.size());',
  'VNetworkDefinition::getInput': 'return a0 >= 0 && a0 < static_cast<int32_t>(self->netInputs.size()) ? static_cast<ITensor*>(self->netInputs[a0]->iface) : nullptr;',
  'VNetworkDefinition::getOutput': 'return a0 >= 0 && a0 < static_cast<int32_t>(self->netOutputs.size()) ? static_cast<ITensor*>(self->netOutputs[a0]->iface) : nullptr;',
  'VBuilder::createNetworkV2': 'return fake::New<Shell_INetworkDefinition>(nullptr);',
  'VBuilder::createBuilderConfig': 'return fake::New<Shell_IBuilderConfig>(nullptr);',
  'VBuilder::createOptimizationProfile': 'return fake::New<Shell_IOptimizationProfile>(self);',
  'VBuilder::buildSerializedNetwork/2': 'return fake::Build(self, a0, a1);',
  'VBuilderConfig::createTimingCache': 'return fake::NewBytes<Shell_ITimingCache>(a0, a1);',
  'VBuilderConfig::setProgressMonitor': 'self->monitor = a0;',
  'VBuilderConfig::getProgressMonitor': 'return self->monitor;',
  'VBuilderConfig::addOptimizationProfile': 'self->profiles.push_back(fake::Lookup(a0)); return static_cast<int32_t>(self->profiles.size()) - 1;',
  'VBuilderConfig::getNbOptimizationProfiles': 'return static_cast<int32_t>(self->profiles.size());',
  'VTimingCache::serialize': 'return fake::SerializeCache(self);',
  'VHostMemory::data': 'return const_cast<uint8_t*>(self->bytes.data());',
  'VHostMemory::size': 'return self->bytes.size();',
  'VHostMemory::type': 'return DataType::kUINT8;',
  'VOptimizationProfile::setDimensions': 'return fake::SetProfileDims(self, a0, a1, a2);',
  'VOptimizationProfile::getDimensions': 'return fake::ProfileDims(self, a0, a1);',
  'VRuntime::deserializeCudaEngine/2': 'return fake::Deserialize(self, a0, a1);',
  'VCudaEngine::getNbIOTensors': 'return static_cast<int32_t>(self->io.size());',
  'VCudaEngine::getIOTensorName': 'return a0 >= 0 && a0 < static_cast<int32_t>(self->io.size()) ? self->io[a0].name.c_str() : nullptr;',
  'VCudaEngine::getTensorIOMode': 'const auto* io = fake::FindIO(self, a0); return io == nullptr ? TensorIOMode::kNONE : static_cast<TensorIOMode>(io->mode);',
  'VCudaEngine::getTensorDataType': 'const auto* io = fake::FindIO(self, a0); return static_cast<DataType>(io == nullptr ? 0 : io->dtype);',
  'VCudaEngine::getTensorShape': 'const auto* io = fake::FindIO(self, a0); return io == nullptr ? Dims{-1, {}} : io->dims;',
  'VCudaEngine::getNbOptimizationProfiles': 'return static_cast<int32_t>(self->engineProfiles.size());',
  'VCudaEngine::getProfileShape': 'return fake::EngineProfileDims(self, a0, a1, a2);',
  'VCudaEngine::getTensorLocation': 'return TensorLocation::kDEVICE;',
  'VCudaEngine::createExecutionContext': 'return fake::NewContext(self);',
  'VExecutionContext::setInputShape': 'return fake::SetInputShape(self, a0, a1);',
  'VExecutionContext::getTensorShape': 'return fake::ContextShape(self, a0);',
  'VExecutionContext::setTensorAddress': 'if (a0 == nullptr) return false; self->addresses[a0] = reinterpret_cast<uintptr_t>(a1); return true;',
  'VExecutionContext::getEngine': 'return *static_cast<ICudaEngine*>(self->engine->iface);',
  'VExecutionContext::enqueueV3': 'return fake::Enqueue(self, a0);',
  'VExecutionContext::setOutputAllocator': 'return fake::SetOutputAllocator(self, a0, a1);',
  'VExecutionContext::getOutputAllocator': 'auto it = a0 == nullptr ? self->allocators.end() : self->allocators.find(a0); return it == self->allocators.end() ? nullptr : it->second;',
  'VNetworkDefinition::addNonZeroV2': 'return fake::AddNonZero(self, a0, a1);',
  'VNetworkDefinition::addNonZero': 'return fake::AddNonZero(self, a0, DataType::kINT32);',
};
const NETWORK_ADD = /^(add\w*)$/;

const isPointer = (t) => /\*\s*$/.test(t);
const isInteger = (t) => /^(std::)?(u?int(8|16|32|64)_t|size_t)$/.test(t.trim());

function formatArgs(params) {
  const parts = [];
  for (let i = 0; i < params.length; i++) {
    const t = params[i];
    const next = params[i + 1];
    if (/const\s*\*$/.test(t) && !/^(char|AsciiChar)\s+const\s*\*$/.test(t) && next !== undefined && isInteger(next)) {
      parts.push(/^void\s+const\s*\*$/.test(t) ? `fake::ArgBlob(a${i}, static_cast<size_t>(a${i + 1}))` : `fake::ArgList(a${i}, static_cast<int64_t>(a${i + 1}))`);
      parts.push(`fake::Arg(a${i + 1})`);
      i++;
    } else parts.push(`fake::Arg(a${i})`);
  }
  return parts.length === 0 ? 'std::string()' : parts.join(' + "," + ');
}

function body(cls, m) {
  const key = `${cls.name}::${m.name}`;
  const special = B[`${key}/${m.params.length}`] ?? B[key];
  if (special) return special;
  const layerShell = /^(?:nvinfer1::)?(I\w+)\s*\*$/.exec(m.ret);
  if (cls.name === 'VNetworkDefinition' && NETWORK_ADD.test(m.name) && layerShell && shellSet.has(layerShell[1])) {
    const outputs = /^addTopK/.test(m.name) ? 2 : 1;
    return `return fake::NewLayer<Shell_${layerShell[1]}>(self, ${outputs});`;
  }
  if (m.ret === 'bool') return /^(set|add|mark|enqueue|execute|unmark)/.test(m.name) ? 'return true;' : 'return false;';
  return `return fake::Default<${m.ret}>();`;
}

let out = `// Generated by scripts/fake-nvinfer/generate.js from ${path.basename(includeDir)}/NvInferImpl.h; do not edit.\n`;
out += '#include "fake_support.h"\n\nnamespace nvinfer1 {\nnamespace fakegen {\n\n';
for (const s of shells) out += `struct Shell_${s};\n`;
let methodCount = 0;
for (const c of impl) {
  out += `\nstruct Rec_${c.name} final : apiv::${c.name} {\n  fake::Obj* self = nullptr;\n`;
  for (const m of c.methods) {
    const params = m.params.map((t, i) => `${t} a${i}`).join(', ');
    out += `  ${m.ret} ${m.name}(${params})${m.isConst ? ' const' : ''}${m.noexcept ? ' noexcept' : ''} override;\n`;
    methodCount++;
  }
  out += '};\n';
}
for (const s of shells) {
  const members = chain(s);
  out += `\nstruct Shell_${s} final : ${s}, fake::Obj {\n`;
  members.forEach((m, i) => (out += `  Rec_${m.v} r${i};\n`));
  out += `  Shell_${s}() : fake::Obj("${s}") {\n`;
  members.forEach((m, i) => (out += `    r${i}.self = this;\n    this->${m.owner}::${m.member} = &r${i};\n`));
  out += `    fake::Register(static_cast<${s}*>(this), this);\n  }\n`;
  out += `  ~Shell_${s}() { fake::Record(this, "~", "", ""); fake::Unregister(static_cast<${s}*>(this)); }\n};\n`;
}
out += '\n}  // namespace fakegen\n}  // namespace nvinfer1\n\n#include "behaviour.inc"\n\nnamespace nvinfer1 {\nnamespace fakegen {\n';
for (const c of impl) {
  for (const m of c.methods) {
    const params = m.params.map((t, i) => `${t} a${i}`).join(', ');
    const key = `${c.name}::${m.name}`;
    out += `\n${m.ret} Rec_${c.name}::${m.name}(${params})${m.isConst ? ' const' : ''}${m.noexcept ? ' noexcept' : ''} {\n`;
    m.params.forEach((_, i) => (out += `  (void)a${i};\n`));
    out += `  const std::string args_ = ${formatArgs(m.params)};\n`;
    if (m.ret === 'bool' || isPointer(m.ret)) {
      out += `  if (fake::ShouldFail("${key}")) { fake::Record(self, "${key}", args_, "\\"FAILED\\""); return ${m.ret === 'bool' ? 'false' : 'nullptr'}; }\n`;
    }
    if (m.ret === 'void') {
      out += `  [&]() { ${body(c, m)} }();\n  fake::Record(self, "${key}", args_, "");\n}\n`;
    } else {
      out += `  auto&& r_ = [&]() -> ${m.ret} { ${body(c, m)} }();\n  fake::Record(self, "${key}", args_, fake::Ret(r_));\n  return r_;\n}\n`;
    }
  }
}
out += '\n}  // namespace fakegen\n}  // namespace nvinfer1\n';
fs.writeFileSync(outFile, out);
process.stdout.write(JSON.stringify({ classes: impl.length, methods: methodCount, shells: shells.length }) + '\n');
