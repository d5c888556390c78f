/** The backends (docs/backends.md): the contract, the registry and `auto`'s resolution. */
export { BACKENDS, backendAvailability, backendsByPriority, getBackend, isBackendName, resolveBackend } from './registry';
export type { BackendRefusal, BackendResolution } from './registry';
export { BACKEND_NAMES } from './types';
export type { Availability, Backend, BackendName, Engine, EngineSignature, Runner } from './types';
export { DEFAULT_BUILD_CONFIG, resolveBuildConfig } from './build-config';
export type { BuildConfig, BuildSettings, Precision } from './build-config';
export type { DeviceValue, Residency, RunValue } from './residency';
export type { BuildContext, BuildPhaseEvent } from './build-context';
