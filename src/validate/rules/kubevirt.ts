/** KubeVirt VirtualMachineInstance specs: the API server's checks beyond the OpenAPI schemas (see ../rules.ts). */
import type { Ajv } from 'ajv';
import { keyword, isObject, asArray, quantity, show } from './support.ts';

export function registerKubevirtRules(ajv: Ajv): void {
  // KubeVirt virt-api (v1.9, the version of the vendored CRDs), VMICreateAdmitter:
  // ValidateVirtualMachineInstanceSpec (also run on a VirtualMachine's template), plus
  // ValidateVirtualMachineInstanceMandatoryFields and validateVirtualMachineInstanceSpecVolumeDisks,
  // which run when the VMI is created: on a VirtualMachine they fail when it starts. Checks that
  // depend on the cluster's KubeVirt configuration (feature gates, rollout strategy) are left out.
  keyword(ajv, 'kubevirtVmiSpec', (data, _s, push) => {
    if (!isObject(data)) return;
    const domain = isObject(data.domain) ? data.domain : {};
    const resources = isObject(domain.resources) ? domain.resources : {};
    const requests = isObject(resources.requests) ? resources.requests : {};
    const limits = isObject(resources.limits) ? resources.limits : {};
    const memory = isObject(domain.memory) ? domain.memory : {};
    const reqMem = quantity(requests.memory);
    const limMem = quantity(limits.memory);
    // validateMemoryRequestsNegativeOrNull, validateMemoryLimitsNegativeOrNull
    if (reqMem && reqMem.sign() < 0) push(['domain', 'resources', 'requests', 'memory'], `${reqMem.toString()}: must be greater than or equal to 0`);
    else if (reqMem && reqMem.sign() > 0 && reqMem.cmp('1M') < 0) push(['domain', 'resources', 'requests', 'memory'], `${reqMem.toString()}: must be greater than or equal to 1M`);
    if (limMem && limMem.sign() < 0) push(['domain', 'resources', 'limits', 'memory'], `${limMem.toString()}: must be greater than or equal to 0`);
    if (reqMem && limMem && limMem.sign() > 0 && reqMem.cmp(limMem) > 0) {
      push(['domain', 'resources', 'requests', 'memory'], `${reqMem.toString()} is greater than domain.resources.limits.memory ${limMem.toString()}`);
    }
    // validateCPURequestNotNegative, validateCPULimitNotNegative, validateCpuRequestDoesNotExceedLimit
    const reqCpu = quantity(requests.cpu);
    const limCpu = quantity(limits.cpu);
    if (reqCpu && reqCpu.sign() < 0) push(['domain', 'resources', 'requests', 'cpu'], `${reqCpu.toString()}: must be greater than or equal to 0`);
    if (limCpu && limCpu.sign() < 0) push(['domain', 'resources', 'limits', 'cpu'], `${limCpu.toString()}: must be greater than or equal to 0`);
    if (reqCpu && limCpu && limCpu.sign() > 0 && reqCpu.cmp(limCpu) > 0) {
      push(['domain', 'resources', 'requests', 'cpu'], `${reqCpu.toString()} is greater than domain.resources.limits.cpu ${limCpu.toString()}`);
    }
    // ValidateVirtualMachineInstanceMandatoryFields
    if ((!reqMem || reqMem.isZero()) && memory.guest === undefined && memory.hugepages === undefined) {
      push(['domain'], "no memory requested, at least one of 'domain.memory.guest', 'domain.memory.hugepages.size' or 'domain.resources.requests.memory' must be set");
    }
    // validateBootOrder: every disk (but an empty CD-ROM) has a volume;
    // validateVirtualMachineInstanceSpecVolumeDisks: every volume (but a memory dump) has a disk or filesystem.
    const devices = isObject(domain.devices) ? domain.devices : {};
    const volumes = asArray(data.volumes);
    const volumeNames = new Set(volumes.flatMap((v) => (isObject(v) && typeof v.name === 'string' ? [v.name] : [])));
    asArray(devices.disks).forEach((d, i) => {
      if (isObject(d) && typeof d.name === 'string' && !volumeNames.has(d.name) && d.cdrom === undefined) {
        push(['domain', 'devices', 'disks', i, 'name'], `disk ${show(d.name)} not found among volumes`);
      }
    });
    const diskNames = new Set(
      [...asArray(devices.disks), ...asArray(devices.filesystems)].flatMap((d) => (isObject(d) && typeof d.name === 'string' ? [d.name] : [])),
    );
    volumes.forEach((v, i) => {
      if (isObject(v) && typeof v.name === 'string' && v.memoryDump === undefined && !diskNames.has(v.name)) {
        push(['volumes', i, 'name'], `volume ${show(v.name)} is not used by any disk or filesystem`);
      }
    });
    // network admitter: every interface names a network.
    const networks = new Set(asArray(data.networks).flatMap((n) => (isObject(n) && typeof n.name === 'string' ? [n.name] : [])));
    asArray(devices.interfaces).forEach((n, i) => {
      if (isObject(n) && typeof n.name === 'string' && !networks.has(n.name)) push(['domain', 'devices', 'interfaces', i, 'name'], `interface ${show(n.name)} not found among networks`);
    });
    // validateProbe: exactly one handler.
    for (const probe of ['readinessProbe', 'livenessProbe'] as const) {
      const p = data[probe];
      if (!isObject(p)) continue;
      const handlers = ['httpGet', 'tcpSocket', 'exec', 'guestAgentPing'].filter((h) => p[h] !== undefined).length;
      if (handlers === 0) push([probe], `either ${probe}.tcpSocket, ${probe}.exec or ${probe}.httpGet must be set if a ${probe} is specified`);
      if (handlers > 1) push([probe], 'must have exactly one probe type set');
    }
  });
}
