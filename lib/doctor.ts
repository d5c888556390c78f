/**
 * `tensorrt-node doctor`: what this installation can use and why not. Every probe reports
 * its failure as data, so the report is complete even on a machine with nothing installed.
 */
import { backendAvailability, type BackendName } from './backends';
import { loadOrt, ORT_INSTALL_COMMAND, REFERENCE_FALLBACK_COST } from './backends/onnxruntime';
import { probeDevices, type DeviceProbe } from './devices';
import { memoryOfDevices, type DeviceMemoryInfo } from './gpu/device';
import { ncclStatus, type NcclStatus } from './collectives/library';
import { cudaLibraries, type CudaLibraryStatus } from './gpu/libraries';
import { getAddon, type AddonSource } from './native';
import { tensorrtStatus, type TensorRTStatus } from './tensorrt';
import { VERSION } from './version';

/** One backend's answer to available(). */
export type BackendStatus = { backend: BackendName; priority: number } & ({ ok: true } | { ok: false; reasons: string[] });

export interface DoctorReport {
  tensorrtNode: { version: string };
  node: { version: string; napiVersion: number; platform: string; arch: string; electron: string | null };
  addon:
    | { loaded: true; path: string; source: AddonSource; napiVersion: number }
    | { loaded: false; code: string; reason: string };
  cuda: DeviceProbe;
  tensorrt: TensorRTStatus | { error: { code: string; message: string } };
  /** NVRTC, cuBLASLt and cuDNN (found, version, or why not) and each device's free memory. */
  gpu: { libraries: CudaLibraryStatus[]; memory: DeviceMemoryInfo[] };
  /** NCCL (collectives for tensor-parallel programs): found and its version, or why not. */
  nccl?: NcclStatus;
  /**
   * onnxruntime-node (the optional peer dependency of the onnxruntime backend): its version,
   * or why it cannot be used (`missing`: not installed; `install` is the command that adds it).
   */
  onnxruntimeNode?: { found: true; version: string } | { found: false; problem: 'missing' | 'load-failed' | 'too-old'; reason: string; install: string };
  /** The backend compile() uses when none is named (`auto`'s resolution). */
  defaultBackend: BackendName;
  /** Every backend by priority: usable, or the reasons why not (lib/backends/registry.ts). */
  backends?: BackendStatus[];
}

function asFailure(error: unknown): { code: string; message: string } {
  const { code, message } = error as { code?: string; message?: string };
  return { code: code ?? 'E_INTERNAL', message: message ?? String(error) };
}

/** Gathers the report. Never throws for missing drivers, devices, libraries or binaries. */
export async function doctor(): Promise<DoctorReport> {
  const node = {
    version: process.versions.node,
    napiVersion: Number(process.versions.napi),
    platform: process.platform,
    arch: process.arch,
    electron: process.versions.electron ?? null,
  };
  let addon: DoctorReport['addon'];
  try {
    const loaded = getAddon();
    addon = { loaded: true, path: loaded.path, source: loaded.source, napiVersion: loaded.info.napiVersion };
  } catch (error) {
    const failure = asFailure(error);
    addon = { loaded: false, code: failure.code, reason: failure.message };
  }
  const cuda = await probeDevices();
  let tensorrt: DoctorReport['tensorrt'];
  try {
    tensorrt = await tensorrtStatus();
  } catch (error) {
    tensorrt = { error: asFailure(error) };
  }
  const libraries = await cudaLibraries();
  const nccl = await ncclStatus();
  const memory = await memoryOfDevices(cuda.devices);
  const backends = await backendAvailability();
  const defaultBackend = backends.find((b) => b.ok)?.backend ?? 'reference';
  const ort = loadOrt();
  const onnxruntimeNode: DoctorReport['onnxruntimeNode'] = ort.ok
    ? { found: true, version: ort.version }
    : { found: false, problem: ort.problem, reason: ort.reason, install: ORT_INSTALL_COMMAND };
  return { tensorrtNode: { version: VERSION }, node, addon, cuda, tensorrt, gpu: { libraries, memory }, nccl, onnxruntimeNode, defaultBackend, backends };
}

const GIB = 1024 ** 3;

function indent(text: string, prefix: string): string {
  return text
    .split('\n')
    .map((line) => prefix + line)
    .join('\n');
}

const NEEDS_ADDON = 'not checked (it needs the native addon, which did not load)';
const PAD = '                ';

/** A probe's failure that only repeats the addon's: printed once, under "Native addon". */
function isAddonFailure(report: DoctorReport, code: string | undefined): boolean {
  return !report.addon.loaded && code === 'E_ADDON_LOAD';
}

/** The report as text for a terminal: each fact once. */
export function formatDoctorReport(report: DoctorReport): string {
  const lines: string[] = [];
  lines.push(`tensorrt-node ${report.tensorrtNode.version}`);
  const n = report.node;
  lines.push(`Node.js       ${n.version} (N-API ${n.napiVersion}, ${n.platform}-${n.arch}${n.electron ? `, Electron ${n.electron}` : ''})`);
  if (report.addon.loaded) {
    lines.push(`Native addon  ${report.addon.path} (found via ${report.addon.source}, N-API ${report.addon.napiVersion})`);
  } else {
    lines.push(`Native addon  not loaded [${report.addon.code}]`, indent(report.addon.reason, PAD));
  }
  const c = report.cuda;
  if (isAddonFailure(report, c.error?.code)) lines.push(`CUDA driver   ${NEEDS_ADDON}`);
  else if (c.driver) lines.push(`CUDA driver   CUDA ${c.driver.version} (${c.driver.library})`);
  else lines.push(`CUDA driver   not available [${c.error?.code}]`);
  if (c.ok) {
    for (const d of c.devices) {
      lines.push(
        `GPU ${d.ordinal}         ${d.name}, compute capability ${d.computeCapability.major}.${d.computeCapability.minor}, ` +
          `${(d.totalMemoryBytes / GIB).toFixed(1)} GiB, ${d.multiprocessorCount} SMs, ${d.uuid}, PCI ${d.pciBusId}`,
      );
    }
  } else if (c.error && !isAddonFailure(report, c.error.code)) {
    if (c.driver) lines.push(`GPUs          none [${c.error.code}]`);
    lines.push(indent(c.error.message, PAD));
  }
  for (const m of report.gpu.memory) {
    lines.push(`GPU ${m.device} memory  ${(m.freeBytes / GIB).toFixed(1)} GiB free of ${(m.totalBytes / GIB).toFixed(1)} GiB`);
  }
  for (const l of report.gpu.libraries) {
    const label = `${l.name}`.padEnd(14);
    if (l.found) lines.push(`${label}${l.version} (${l.path})`);
    else if (isAddonFailure(report, l.error?.code)) lines.push(`${label}${NEEDS_ADDON}`);
    else lines.push(`${label}not found [${l.error?.code}]`);
  }
  const nccl = report.nccl;
  if (nccl?.found) lines.push(`nccl          ${nccl.version} (${nccl.path})`);
  else if (nccl && isAddonFailure(report, nccl.error?.code)) lines.push(`nccl          ${NEEDS_ADDON}`);
  else if (nccl) lines.push(`nccl          not found [${nccl.error?.code}]`);
  const t = report.tensorrt;
  if ('error' in t) {
    if (isAddonFailure(report, t.error.code)) lines.push(`TensorRT      ${NEEDS_ADDON}`);
    else lines.push(`TensorRT      unknown [${t.error.code}]`, indent(t.error.message, PAD));
  } else if (t.library.found) {
    lines.push(`TensorRT      ${t.library.version} (${t.library.path})`);
  } else {
    lines.push(`TensorRT      none (${t.library.reason}) [${t.library.code}]`);
  }
  const backendBuilt = !('error' in t) && t.backendBuilt;
  lines.push(
    backendBuilt
      ? 'TRT backend   built into the addon'
      : 'TRT backend   built without TensorRT: rebuild the addon with TENSORRT_ROOT naming a TensorRT 10 install (docs/tensorrt.md)',
  );
  const ort = report.onnxruntimeNode;
  if (ort?.found) lines.push(`onnxruntime   ${ort.version} (onnxruntime-node)`);
  else if (ort?.problem === 'missing') {
    // The cost is the point: nothing fails without it, everything on the CPU is slower.
    lines.push(`onnxruntime   onnxruntime-node is not installed: where no GPU backend is usable, \`auto\` runs engine segments on ${REFERENCE_FALLBACK_COST}`);
    lines.push(indent(`install it: ${ort.install}`, PAD));
  } else if (ort) lines.push(`onnxruntime   not usable: ${ort.reason}`);
  // Reports from older versions (doctor --json files) have no backends list.
  for (const b of report.backends ?? []) {
    lines.push(`Backend       ${b.backend}: ${b.ok ? 'usable' : 'not usable'}`);
    if (!b.ok) for (const reason of b.reasons) lines.push(indent(`- ${reason}`, PAD));
  }
  lines.push(
    report.defaultBackend === 'reference'
      ? `Default       reference backend (CPU${backendBuilt ? '; TensorRT is not usable here' : ''})`
      : `Default       ${report.defaultBackend} backend`,
  );
  return lines.join('\n');
}
