'use strict';
// GPU check (plain Node, no jest: it runs on the GPU machine from a bundle). Compares what
// devices() reports with nvidia-smi, field by field, and prints a JSON summary. Exit 0 when
// they agree, 1 when they differ, 3 when there is no usable GPU here.
const { execFileSync } = require('node:child_process');

const { devicesOrSkip } = require('./check-util');

function nvidiaSmi() {
  try {
    const csv = execFileSync(
      'nvidia-smi',
      ['--query-gpu=index,name,uuid,pci.bus_id,memory.total,compute_cap', '--format=csv,noheader,nounits'],
      { encoding: 'utf8' },
    );
    return csv
      .trim()
      .split('\n')
      .map((line) => {
        const [index, name, uuid, pci, memoryMiB, cc] = line.split(',').map((s) => s.trim());
        return { index: Number(index), name, uuid, pci, memoryMiB: Number(memoryMiB), cc };
      });
  } catch {
    return null;
  }
}

(async () => {
  const report = await devicesOrSkip();
  const smi = nvidiaSmi();
  const problems = [];
  if (smi === null) problems.push('nvidia-smi is not available to compare with');
  else if (process.env.CUDA_VISIBLE_DEVICES === undefined) {
    if (smi.length !== report.devices.length) problems.push(`nvidia-smi lists ${smi.length} GPUs, devices() ${report.devices.length}`);
    for (const d of report.devices) {
      const s = smi.find((x) => x.uuid === d.uuid);
      if (!s) {
        problems.push(`device ${d.ordinal} uuid ${d.uuid} is not in nvidia-smi's list`);
        continue;
      }
      if (s.name !== d.name) problems.push(`device ${d.ordinal} name ${d.name} != ${s.name}`);
      if (s.cc !== `${d.computeCapability.major}.${d.computeCapability.minor}`) problems.push(`device ${d.ordinal} cc differs: ${s.cc}`);
      // nvidia-smi reports MiB of usable memory; the driver's total may differ by reserved memory.
      const mib = d.totalMemoryBytes / 2 ** 20;
      if (Math.abs(mib - s.memoryMiB) / s.memoryMiB > 0.02) problems.push(`device ${d.ordinal} memory ${mib} MiB vs ${s.memoryMiB}`);
      // nvidia-smi prints an 8-digit PCI domain, the driver 4 digits: compare the numbers.
      const [sd, sb] = s.pci.split(':').map((x) => parseInt(x, 16));
      if (sd !== d.pci.domain || sb !== d.pci.bus || s.pci.toLowerCase().slice(-4) !== d.pciBusId.toLowerCase().slice(-4)) {
        problems.push(`device ${d.ordinal} PCI ${d.pciBusId} vs ${s.pci}`);
      }
    }
  }
  console.log(JSON.stringify({ skipped: false, report, nvidiaSmi: smi, problems }, null, 2));
  process.exit(problems.length === 0 ? 0 : 1);
})();
