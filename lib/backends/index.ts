/** The backends (docs/backends.md): the contract, the registry and `auto`'s resolution. */
export { BACKENDS, backendAvailability, backendsByPriority, getBackend, isBackendName, resolveBackend } from './registry';
export type { BackendRefusal, BackendResolution } from './registry';
export { BACKEND_NAMES } from '../engine/backend';
export type { Availability, Backend, BackendName, Engine, EngineSignature } from '../engine/backend';
export { DEFAULT_BUILD_CONFIG, resolveBuildConfig } from '../engine/build-config';
export type { BuildConfig, BuildSettings, Precision } from '../engine/build-config';
export type { DeviceValue, Residency, RunValue } from '../engine/residency';
export type { BuildContext, BuildPhaseEvent } from '../engine/build-context';
