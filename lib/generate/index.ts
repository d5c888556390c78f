/**
 * Text generation with causal language models that keep a KV cache (docs/generate.md):
 * createGenerator() / generate() over a compiled program, compileForGeneration() to compile a
 * model with the dynamic sizes generation needs.
 */
export { createGenerator, generate, Generator } from './generator';
export type { FinishReason, GenerateResult, GenerateStep, GeneratorOptions, RunSizes } from './generator';
export type { GenerateOptions } from './options';
export { DEFAULT_MAX_NEW_TOKENS } from './options';
export { discoverLayout } from './layout';
export type { KvCacheLayer, KvCacheLayout, NamedIO } from './layout';
export type { GenerationLimits, SizeRange } from './limits';
export { compileForGeneration, generationInputs } from './compile';
export type { GenerationCompileSettings, GenerationSizes } from './compile';
export type { CachePlace } from './kv-cache';
export { SeededRandom } from './sampling';
