/**
 * Finds and loads the native addon. Loading is lazy: importing tensorrt-node never touches
 * the addon, so the package works (on the CPU reference backend) even where no binary fits.
 * The first call that needs native code loads it; failure is one {@link NativeAddonLoadError}
 * that lists every place looked at and the command that fixes it.
 *
 * Lookup order: `TENSORRT_NODE_BINARY` (a .node file, for bundlers and unusual layouts), then
 * node-gyp-build's order in the package root (or the directory `TENSORRT_NODE_PREBUILD`
 * names): build/Release, build/Debug, prebuilds/<platform>-<arch>/, and prebuilds/ beside the
 * Node executable. Inside Electron's app.asar the unpacked copy is used.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import nodeGypBuild from 'node-gyp-build';

import { createError, NativeAddonLoadError } from './errors';

/** The binding interface version this JS expects (native/addon.cc kBindingAbi). */
export const BINDING_ABI = 1;

/** @internal What the addon answers about itself. */
export interface BindingInfo {
  bindingAbi: number;
  napiVersion: number;
  tensorrtBackend: boolean;
}

/** @internal One GPU as the driver describes it, before formatting (lib/devices.ts). */
export interface RawDevice {
  ordinal: number;
  name: string;
  /** 32 lowercase hex digits. */
  uuid: string;
  pciBusId: string;
  computeCapabilityMajor: number;
  computeCapabilityMinor: number;
  totalMemoryBytes: number;
  multiprocessorCount: number;
}

/** @internal */
export interface RawDeviceQuery {
  driverVersion: number;
  libraryPath: string;
  devices: RawDevice[];
}

/** @internal */
export interface RawTensorRTLibrary {
  libraryPath: string;
  version: number;
}

/** @internal The functions the addon exports. */
export interface NativeBinding {
  setErrorFactory(factory: (code: string, message: string, details: Record<string, unknown>) => Error): void;
  bindingInfo(): BindingInfo;
  cudaDevices(): Promise<RawDeviceQuery>;
  tensorrtLibrary(): Promise<RawTensorRTLibrary>;
}

/** How the addon was found, for `tensorrt-node doctor`. */
export type AddonSource = 'TENSORRT_NODE_BINARY' | 'build/Release' | 'build/Debug' | 'prebuilds' | 'prebuilds beside node';

export interface LoadedAddon {
  binding: NativeBinding;
  /** Absolute path of the loaded .node file. */
  path: string;
  source: AddonSource;
  info: BindingInfo;
}

export interface LoadAddonOptions {
  /** Package root to search (default: `process.env.TENSORRT_NODE_PREBUILD`, else this package). */
  root?: string;
  /** Explicit .node file (default: `process.env.TENSORRT_NODE_BINARY`). */
  binary?: string;
}

/** The package root: lib/ and dist/ both sit one level below it. */
export const PACKAGE_ROOT = path.resolve(__dirname, '..');

/**
 * The copy of `file` that Electron packagers unpack beside app.asar (app.asar.unpacked/...);
 * `file` itself when it is not inside an app.asar. Electron can read but not dlopen inside
 * the archive, nor start a worker thread from it.
 */
export function unpackedFromAsar(file: string): string {
  return file.replace(`${path.sep}app.asar${path.sep}`, `${path.sep}app.asar.unpacked${path.sep}`);
}

function platformTuple(): string {
  const libc = process.platform === 'linux' ? (process.env.LIBC ?? (fs.existsSync('/etc/alpine-release') ? 'musl' : 'glibc')) : '';
  return [
    `platform=${process.platform}`,
    `arch=${process.arch}`,
    libc ? `libc=${libc}` : '',
    `node=${process.versions.node}`,
    process.versions.electron ? `electron=${process.versions.electron}` : '',
    `napi=${process.versions.napi}`,
  ]
    .filter(Boolean)
    .join(' ');
}

/** The places node-gyp-build looks in, with what each holds, for the failure message. */
function describePlaces(root: string): string[] {
  const tuple = `${os.platform()}-${os.arch()}`;
  const places = [
    path.join(root, 'build', 'Release'),
    path.join(root, 'build', 'Debug'),
    path.join(root, 'prebuilds', tuple),
    path.join(path.dirname(process.execPath), 'prebuilds', tuple),
  ];
  return places.map((dir) => {
    if (!fs.existsSync(dir)) return `${dir} (does not exist)`;
    const nodes = fs.readdirSync(dir).filter((f) => f.endsWith('.node'));
    return nodes.length === 0 ? `${dir} (no .node file)` : `${dir} (holds ${nodes.join(', ')}, none matching)`;
  });
}

function sourceOf(file: string, root: string): AddonSource {
  const rel = path.relative(root, file).split(path.sep).join('/');
  if (rel.startsWith('build/Release/')) return 'build/Release';
  if (rel.startsWith('build/Debug/')) return 'build/Debug';
  if (rel.startsWith('prebuilds/')) return 'prebuilds';
  return 'prebuilds beside node';
}

const FIX =
  'To fix: use a tensorrt-node package with a prebuild for this platform (it ships linux-x64 and linux-arm64, for glibc), or ' +
  'build the addon in a clone of the tensorrt-node repository (`npm ci` builds it, `npm run build:native` ' +
  'rebuilds it; needs python3, make and a C++17 compiler, no CUDA or TensorRT) and point ' +
  'TENSORRT_NODE_BINARY at its build/Release/tensorrt_node.node.';

function requireBinding(file: string): NativeBinding {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  return require(file) as NativeBinding;
}

/**
 * Loads the addon without caching (tests use this with other roots). Most code wants
 * {@link getAddon}.
 * @internal
 */
export function loadAddon(options: LoadAddonOptions = {}): LoadedAddon {
  const root = unpackedFromAsar(path.resolve(options.root ?? (process.env.TENSORRT_NODE_PREBUILD || PACKAGE_ROOT)));
  const explicit = options.binary ?? process.env.TENSORRT_NODE_BINARY;
  const named = options.binary !== undefined ? 'the binary option' : 'TENSORRT_NODE_BINARY';
  let file: string;
  let source: AddonSource;
  if (explicit) {
    file = path.resolve(explicit);
    source = 'TENSORRT_NODE_BINARY';
    if (!fs.existsSync(file)) {
      throw new NativeAddonLoadError(
        `The tensorrt-node native addon was not found at ${file}, the path ${named} names. ` +
          'Leave it unset to use the packaged binary, or point it at an existing tensorrt_node.node.',
        { details: { tried: [file], platform: platformTuple() } },
      );
    }
  } else {
    try {
      file = unpackedFromAsar(nodeGypBuild.path(root));
    } catch (cause) {
      const places = describePlaces(root);
      throw new NativeAddonLoadError(
        `No tensorrt-node native addon was found for ${platformTuple()}. Looked in:\n` +
          places.map((p) => `  - ${p}`).join('\n') +
          `\n${FIX}`,
        { cause, details: { tried: places, platform: platformTuple() } },
      );
    }
    source = sourceOf(file, root);
  }

  let binding: NativeBinding;
  try {
    binding = requireBinding(file);
  } catch (cause) {
    const reason = cause instanceof Error ? cause.message : String(cause);
    throw new NativeAddonLoadError(
      `The tensorrt-node native addon at ${file} (found via ${source}) failed to load: ${reason}\n` +
        `It may be built for another platform or Node-API version (this is ${platformTuple()}). ${FIX}`,
      { cause, details: { tried: [file], platform: platformTuple() } },
    );
  }

  const info = typeof binding.bindingInfo === 'function' ? binding.bindingInfo() : undefined;
  if (info === undefined || info.bindingAbi !== BINDING_ABI) {
    throw new NativeAddonLoadError(
      `The tensorrt-node native addon at ${file} speaks binding ABI ${info?.bindingAbi ?? 'unknown'}, ` +
        `but this version of the JavaScript needs ${BINDING_ABI}: the binary is stale. Rebuild it with ` +
        '`npm run build:native`, or reinstall tensorrt-node.',
      { details: { tried: [file], bindingAbi: info?.bindingAbi } },
    );
  }
  binding.setErrorFactory(createError);
  return { binding, path: file, source, info };
}

let cached: LoadedAddon | undefined;
let cachedError: unknown;

/** The addon, loaded on first call; a load failure is remembered and rethrown. */
export function getAddon(): LoadedAddon {
  if (cached !== undefined) return cached;
  if (cachedError !== undefined) throw cachedError;
  try {
    cached = loadAddon();
    return cached;
  } catch (error) {
    cachedError = error;
    throw error;
  }
}
