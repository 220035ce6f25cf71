/**
 * Upstream's forge cases (operators/pkg/forge/*_test.go at e62be9e, and at 2e8aeb9 where the same
 * case exists there), restated as rows over what we render: inputs → compose → objects. Each row
 * names the upstream Describe/When/Entry it restates, with upstream's inputs (2 cores, 25% reserved,
 * 1250M, 20Gi) and what that case asserts. The model-level cases are in
 * test/unit/model/forge-upstream-cases.test.ts.
 *
 * At e62be9e objects of an environment are found by kind and related to each other (the Service
 * selects the pod labels, the Ingress points at the Service…), never by name nor by exact selector:
 * their names and an environment label are being changed there. Gateway API, public exposure,
 * SharedVolumes and MyDrive/SharedVolume mirror PVCs (virtiofs) are out of scope.
 */
import { describe, expect, it } from 'vitest';
import { cloudInitUserData } from '../../../constructs/instance/cloud-init.ts';
import { renderSubmissionJob } from '../../../src/compose/submission.ts';
import type { ComposerConfig } from '../../../src/config/config.ts';
import type { ApiLevel } from '../../../src/inputs/api-level.ts';
import type { Instance } from '../../../src/inputs/types.ts';
import { COMPOSER } from '../../../src/model/labels.ts';
import { lab, render, testConfig } from '../../support/lab.ts';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Any = any;

const BOTH: readonly ApiLevel[] = ['2e8aeb9', 'e62be9e'];
const UID = '00000000-0000-4000-8000-000000000001';
const RESOURCES = { cpu: 2, reservedCPUPercentage: 25, memory: '1250M', disk: '20Gi' };
const IMAGE = 'internal/registry/image:v1.0';

type LabOptions = Parameters<typeof lab>[0];

/**
 * Renders a lab at `level`; `env` is the one environment of upstream's cases, with its resources
 * and, as Go's zero value there, without MyDrive (the CRD's default is true).
 */
function renderAt(level: ApiLevel, opts: LabOptions, config: Partial<ComposerConfig> = {}) {
  const envs = (Array.isArray(opts.env) ? opts.env : [opts.env]).map((e) => ({ image: IMAGE, resources: RESOURCES, mountMyDriveVolume: false, ...e }));
  const r = render(lab({ ...opts, env: envs }), testConfig({ apiLevel: level, ...config }), { schemas: true });
  const objects = r.objects as Any[];
  const ofInstance = objects.filter((o) => o.metadata.labels?.[COMPOSER.parentKindLabel] === 'Instance');
  /** The one object of `kind` the Instance renders (its environment's, with one environment). */
  const one = (kind: string): Any => {
    const found = ofInstance.filter((o) => o.kind === kind);
    if (found.length !== 1) throw new Error(`${found.length} ${kind} among ${ofInstance.map((o) => `${o.kind}/${o.metadata.name}`).join(', ')}`);
    return found[0];
  };
  const kinds = () => ofInstance.map((o) => o.kind).sort();
  return { objects, ofInstance, one, kinds, named: r.find as (kind: string, name: string, namespace?: string) => Any, problems: r.problems };
}

const podSpec = (r: ReturnType<typeof renderAt>) => r.one('Deployment').spec.template.spec;
const appContainer = (r: ReturnType<typeof renderAt>, name = 'env0') => podSpec(r).containers.find((c: Any) => c.name === name);
/** The VMI spec: a bare VMI's, or a VM's template. */
const vmiSpecOf = (r: ReturnType<typeof renderAt>, persistent: boolean) => (persistent ? r.one('VirtualMachine').spec.template.spec : r.one('VirtualMachineInstance').spec);
const PROBE_BASE = { initialDelaySeconds: 10, periodSeconds: 2, successThreshold: 2, failureThreshold: 5 };

// --- virtualmachines_test ----------------------------------------------------------------------

describe('upstream virtualmachines_test: VirtualMachines and VirtualMachineInstances', () => {
  const vm = (level: ApiLevel, env: Record<string, unknown> = {}) => renderAt(level, { env: { environmentType: 'VirtualMachine', guiEnabled: true, ...env } });

  describe('"The forge.VirtualMachineSpec function"', () => {
    it.each(BOTH)('Should set the correct template labels: those the Service selects (%s)', (level) => {
      const r = vm(level, { persistent: true });
      expect(r.one('VirtualMachine').spec.template.metadata.labels).toEqual(r.one('Service').spec.selector);
    });
    it.each(BOTH)('Should set the correct template spec: the VMI spec, with the DataVolume as root disk (%s)', (level) => {
      const withoutRoot = (spec: Any) => ({ ...spec, volumes: spec.volumes.filter((v: Any) => v.name !== 'root') });
      expect(withoutRoot(vmiSpecOf(vm(level, { persistent: true }), true))).toEqual(withoutRoot(vmiSpecOf(vm(level), false)));
    });
  });

  describe('"The forge.DataVolumeSpec function" and "DataVolumeSourceForge"', () => {
    const dv = (level: ApiLevel, environmentType: string, image = IMAGE) => vm(level, { environmentType, image, persistent: true }).one('VirtualMachine').spec.dataVolumeTemplates[0].spec;
    it('Should forge the correct standalone DataVolumeSpec: ReadWriteOnce, Filesystem, the disk size (e62be9e)', () => {
      const spec = dv('e62be9e', 'VirtualMachine');
      expect(spec.pvc).toEqual({ accessModes: ['ReadWriteOnce'], volumeMode: 'Filesystem', resources: { requests: { storage: '20Gi' } } });
      expect(spec.source).toEqual({ registry: { url: `docker://${IMAGE}`, secretRef: 'registry-credentials-cdi' } });
    });
    it('2e8aeb9 writes no volumeMode (the cluster default, Filesystem)', () => {
      expect(dv('2e8aeb9', 'VirtualMachine').pvc).toEqual({ accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '20Gi' } } });
    });
    it.each([
      ['CloudVM', 'https://images.example/debian.qcow2', { http: { url: 'https://images.example/debian.qcow2' } }],
      ['LocalVM', 'golden-images/debian-nginx-raw-block', { pvc: { namespace: 'golden-images', name: 'debian-nginx-raw-block' } }],
    ])('When the environment is a %s: Should use block volume mode, and its source', (type, image, source) => {
      const spec = dv('e62be9e', type, image);
      expect(spec.pvc.volumeMode).toBe('Block');
      expect(spec.source).toEqual(source);
    });
    it('Should fail on malformed LocalVM image names (namespace/pvc-name): an error, no VirtualMachine', () => {
      const r = vm('e62be9e', { environmentType: 'LocalVM', image: 'golden-images/debian/nginx/raw-block', persistent: true });
      expect(r.problems.some((p) => p.severity === 'error' && /<namespace>\/<name>/.test(p.message))).toBe(true);
      expect(r.ofInstance.some((o) => o.kind === 'VirtualMachine')).toBe(false);
    });
  });

  describe('"The forge.VirtualMachineInstanceSpec function"', () => {
    it.each(BOTH)('domain, cloud-init volume, networks, probe and grace period (%s)', (level) => {
      const r = vm(level);
      const spec = vmiSpecOf(r, false);
      // "Should set the correct domain" / "The forge.VirtualMachineDomain function"
      expect(spec.domain.cpu).toEqual({ cores: 2 });
      expect(spec.domain.memory).toEqual({ guest: '1250M' });
      expect(spec.domain.resources).toEqual({ requests: { cpu: '500m', memory: '1750M' }, limits: { cpu: '2500m', memory: '1750M' } });
      expect(spec.domain.devices.disks).toEqual([
        { name: 'root', disk: { bus: 'virtio' } },
        { name: 'cloud-init', disk: { bus: 'virtio' } },
      ]);
      expect(spec.domain.devices.interfaces).toContainEqual({ name: 'default', bridge: {} });
      // "Should set the cloud-init volumes": the Instance's cloud-init Secret
      expect(spec.volumes).toContainEqual({ name: 'cloud-init', cloudInitNoCloud: { secretRef: { name: r.one('Secret').metadata.name } } });
      // "The forge.Volumes function": root and cloud-init (no MyDrive/SharedVolume mounts asked)
      expect(spec.volumes.map((v: Any) => v.name)).toEqual(['root', 'cloud-init']);
      expect(spec.networks).toContainEqual({ name: 'default', pod: {} });
      expect(spec.terminationGracePeriodSeconds).toBe(60);
    });
    it.each(BOTH)('When the environment is not persistent: the container-disk root volume (%s)', (level) => {
      // "The forge.VolumeContainerDisk function": image, pull secret, pull policy
      expect(vmiSpecOf(vm(level), false).volumes[0]).toEqual({ name: 'root', containerDisk: { image: IMAGE, imagePullSecret: 'registry-credentials', imagePullPolicy: 'IfNotPresent' } });
    });
    it.each(BOTH)('When the environment is persistent: the persistent-disk root volume, the VM’s DataVolume (%s)', (level) => {
      const theVm = vm(level, { persistent: true }).one('VirtualMachine');
      expect(theVm.spec.template.spec.volumes[0]).toEqual({ name: 'root', dataVolume: { name: theVm.spec.dataVolumeTemplates[0].metadata.name } });
    });
    it('e62be9e: extended resources reach the VMI’s requests and limits', () => {
      const spec = vmiSpecOf(vm('e62be9e', { resources: { ...RESOURCES, otherResources: { 'nvidia.com/gpu': 1 } } }), false);
      expect(spec.domain.resources.requests['nvidia.com/gpu']).toBe('1');
      expect(spec.domain.resources.limits['nvidia.com/gpu']).toBe('1');
    });
  });

  describe('"The forge.VirtualMachineReadinessProbe function"', () => {
    it.each([
      ['When the environment has the GUI enabled', true, 6080],
      ['When the environment has not the GUI enabled', false, 22],
    ])('%s', (_entry, guiEnabled, port) => {
      for (const level of BOTH) expect(vmiSpecOf(vm(level, { guiEnabled }), false).readinessProbe).toEqual({ tcpSocket: { port }, ...PROBE_BASE });
    });
  });
});

// --- containers_test ---------------------------------------------------------------------------

describe('upstream containers_test: Containers and Deployment spec', () => {
  const standalone = (level: ApiLevel, env: Record<string, unknown> = {}, instance?: Record<string, unknown>, config?: Partial<ComposerConfig>) =>
    renderAt(level, { env: { name: 'env0', environmentType: 'Standalone', guiEnabled: true, ...env }, ...(instance ? { instance } : {}) }, config);

  describe('"The forge.PVCSpec function"', () => {
    it.each(BOTH)('access mode ReadWriteOnce, the disk size, no storage class (%s)', (level) => {
      expect(standalone(level, { persistent: true }).one('PersistentVolumeClaim').spec).toEqual({ accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '20Gi' } } });
    });
    it.each(BOTH)('A custom storage class is specified: Should set the storage class name (%s)', (level) => {
      expect(standalone(level, { persistent: true, storageClassName: 'foo' }).one('PersistentVolumeClaim').spec.storageClassName).toBe('foo');
    });
  });

  describe('"The forge.ReplicasCount function"', () => {
    /** The replicas at both levels, which agree. */
    const replicas = (persistent: boolean, running: boolean, config?: Partial<ComposerConfig>) => {
      const [a, b] = BOTH.map((level) => standalone(level, { persistent }, { running }, config).one('Deployment').spec.replicas);
      expect(a).toBe(b);
      return a;
    };
    it.each([
      ['the environment is not persistent and instance is running', false, true, 1],
      ['the environment is not persistent and instance is not new and not running', false, false, 1],
      ['the environment is persistent and instance is not running', true, false, 0],
      ['the environment is persistent and instance is running', true, true, 1],
    ])('When %s', (_when, persistent, running, expected) => {
      expect(replicas(persistent, running)).toBe(expected);
    });
    it('When the environment is not persistent and instance is new and not running: 1 here (upstream 0, then 1 once it exists; Decision 9), 0 under release', () => {
      expect(replicas(false, false)).toBe(1);
      expect(replicas(false, false, { stoppedEphemeral: 'release' })).toBe(0);
    });
  });

  describe('"The forge.DeploymentSpec function" / "PodSpec" / "PodSecurityContext"', () => {
    it.each(BOTH)('selector and template labels agree, and are what the Service selects (%s)', (level) => {
      const r = standalone(level);
      const dep = r.one('Deployment');
      expect(dep.spec.template.metadata.labels).toEqual(dep.spec.selector.matchLabels);
      expect(r.one('Service').spec.selector).toEqual(dep.spec.selector.matchLabels);
    });
    it.each(BOTH)('security context 1010/1010/1010 non-root; no service account token; no service links (%s)', (level) => {
      const spec = podSpec(standalone(level));
      expect(spec.securityContext).toEqual({ runAsUser: 1010, runAsGroup: 1010, fsGroup: 1010, runAsNonRoot: true });
      expect(spec.automountServiceAccountToken).toBe(false);
      expect(spec.enableServiceLinks).toBe(false);
      expect(spec.terminationGracePeriodSeconds).toBe(10);
    });
    it.each(BOTH)('the environment type is Standalone: the one standalone container (%s)', (level) => {
      expect(podSpec(standalone(level)).containers.map((c: Any) => c.name)).toEqual(['env0']);
    });
  });

  describe('"The forge.StandaloneContainer function forges a standalone container"', () => {
    it.each(BOTH)('Should set container port gui 6080/TCP (%s)', (level) => {
      expect(appContainer(standalone(level)).ports).toEqual([{ name: 'gui', containerPort: 6080, protocol: 'TCP' }]);
    });
    it.each(BOTH)('RewriteURL is false: the readiness probe reads the GUI path, the Ingress path, which is CROWNLABS_BASE_PATH (%s)', (level) => {
      const r = standalone(level, { rewriteURL: false });
      const c = appContainer(r);
      const path = r.one('Ingress').spec.rules[0].http.paths[0].path;
      expect(c.readinessProbe).toEqual({ httpGet: { port: 'gui', path }, ...PROBE_BASE });
      expect(c.env).toContainEqual({ name: 'CROWNLABS_BASE_PATH', value: path });
    });
    it.each(BOTH)('RewriteURL is true: the readiness probe reads /, and the Ingress path is the base path with the rewrite groups (%s)', (level) => {
      const r = standalone(level, { rewriteURL: true });
      const c = appContainer(r);
      const base = c.env.find((e: Any) => e.name === 'CROWNLABS_BASE_PATH').value;
      expect(c.readinessProbe).toEqual({ httpGet: { port: 'gui', path: '/' }, ...PROBE_BASE });
      expect(r.one('Ingress').spec.rules[0].http.paths[0].path).toBe(`${base}(/|$)(.*)`);
    });
    it.each(BOTH)('Should set the env variables: base path, listen port, CPU requests and limits of itself (%s)', (level) => {
      const env = appContainer(standalone(level)).env;
      const ref = (resource: string) => ({ valueFrom: { resourceFieldRef: { containerName: 'env0', resource, divisor: '0' } } });
      expect(env.map((e: Any) => e.name).sort()).toEqual(['CROWNLABS_BASE_PATH', 'CROWNLABS_CPU_LIMITS', 'CROWNLABS_CPU_REQUESTS', 'CROWNLABS_LISTEN_PORT']);
      expect(env).toContainEqual({ name: 'CROWNLABS_LISTEN_PORT', value: '6080' });
      expect(env).toContainEqual({ name: 'CROWNLABS_CPU_REQUESTS', ...ref('requests.cpu') });
      expect(env).toContainEqual({ name: 'CROWNLABS_CPU_LIMITS', ...ref('limits.cpu') });
      expect(env.find((e: Any) => e.name === 'CROWNLABS_BASE_PATH').value).toMatch(new RegExp(`^/instance/${UID}/`));
    });
  });

  describe('"The forge.AppContainer function forges the main application container"', () => {
    it.each(BOTH)('Should set the correct container name, image and resources (%s)', (level) => {
      const c = appContainer(standalone(level));
      expect([c.name, c.image]).toEqual(['env0', IMAGE]);
      expect(c.resources).toEqual({ requests: { cpu: '500m', memory: '1250M' }, limits: { cpu: '2', memory: '1250M' } });
    });
    it('the environment includes extended resources: Should propagate them to requests and limits (e62be9e)', () => {
      const c = appContainer(standalone('e62be9e', { resources: { ...RESOURCES, otherResources: { 'nvidia.com/gpu': '1' } } }));
      expect(c.resources).toEqual({ requests: { cpu: '500m', memory: '1250M', 'nvidia.com/gpu': '1' }, limits: { cpu: '2', memory: '1250M', 'nvidia.com/gpu': '1' } });
    });
    it('2e8aeb9: a Container’s app container has no ports, no readiness probe and only the CPU env', () => {
      // e62be9e's pod of a Container environment is the standalone container alone (below).
      const c = appContainer(renderAt('2e8aeb9', { env: { environmentType: 'Container', guiEnabled: true } }));
      expect(c.ports).toBeUndefined();
      expect(c.readinessProbe).toBeUndefined();
      expect(c.env.map((e: Any) => e.name)).toEqual(['CROWNLABS_CPU_REQUESTS', 'CROWNLABS_CPU_LIMITS']);
    });
    // MyDrive is mounted from the NFS share at 2e8aeb9, from its mirror claim at e62be9e (upstream's name).
    const myDrive: Record<ApiLevel, string> = { '2e8aeb9': 'mydrive', e62be9e: 'john-doe-drive-mirror' };
    it.each([
      ['The personal volume mount is disabled', false, () => [{ name: 'persistent', mountPath: '/media/data' }]],
      ['The personal volume mount is enabled', true, (level: ApiLevel) => [{ name: 'persistent', mountPath: '/media/data' }, { name: myDrive[level], mountPath: '/media/mydrive' }]],
    ])('%s: Should set the VolumeMounts accordingly', (_when, mountMyDriveVolume, mounts) => {
      for (const level of BOTH) expect(appContainer(standalone(level, { mountMyDriveVolume })).volumeMounts).toEqual(mounts(level));
    });
    it.each([
      ['There is a mounted shared volume', false, [{ name: 'persistent', mountPath: '/media/data' }, { name: 'shvol-instance-mirror', mountPath: '/mnt/path', readOnly: true }]],
      [
        'There is a mounted shared volume and the personal volume mount is enabled',
        true,
        [{ name: 'persistent', mountPath: '/media/data' }, { name: 'john-doe-drive-mirror', mountPath: '/media/mydrive' }, { name: 'shvol-instance-mirror', mountPath: '/mnt/path', readOnly: true }],
      ],
    ])('%s: Should set the VolumeMounts accordingly (e62be9e)', (_when, mountMyDriveVolume, mounts) => {
      const shvol = JSON.stringify({ apiVersion: 'crownlabs.polito.it/v1alpha2', kind: 'SharedVolume', metadata: { name: 'shvol', namespace: 'workspace-tea' }, spec: { prettyName: 'S', size: '1Gi' } });
      const env = { environmentType: 'Standalone', mountMyDriveVolume, sharedVolumeMounts: [{ sharedVolume: { name: 'shvol', namespace: 'workspace-tea' }, mountPath: '/mnt/path', readOnly: true }] };
      const r = renderAt('e62be9e', { env, instanceMeta: { name: 'instance' }, extra: shvol });
      expect(appContainer(r).volumeMounts).toEqual(mounts);
    });
    it.each([
      ['ContainerStartupOptions is nil', undefined, undefined, undefined],
      ['startup argument are not set', { enforceWorkdir: false }, undefined, undefined],
      ['startup argument are set', { startupArgs: ['argument=yes', 'another-argument'], enforceWorkdir: false }, ['argument=yes', 'another-argument'], undefined],
      ['EnforceWorkdir is set: the working directory is the persistent mount path', { enforceWorkdir: true }, undefined, '/media/data'],
      ['EnforceWorkdir with a content path: that path', { enforceWorkdir: true, contentPath: '/path' }, undefined, '/path'],
    ])('custom startup options: When %s', (_when, options, args, workingDir) => {
      for (const level of BOTH) {
        const c = appContainer(standalone(level, options ? { containerStartupOptions: options } : {}));
        expect(c.args).toEqual(args);
        expect(c.workingDir).toEqual(workingDir);
      }
    });
  });

  describe('"The forge.PersistentMountPath function"', () => {
    it.each([
      ['ContainerStartupOpts is nil', undefined, '/media/data'],
      ['no content path is specified', { enforceWorkdir: false }, '/media/data'],
      ['content path is specified', { contentPath: '/path', enforceWorkdir: false }, '/path'],
    ])('When %s', (_when, options, path) => {
      for (const level of BOTH) expect(appContainer(standalone(level, options ? { containerStartupOptions: options } : {})).volumeMounts[0]).toEqual({ name: 'persistent', mountPath: path });
    });
  });

  describe('"The forge.InitContainers function" / "NeedsInitContainer" / "ContentDownloaderInitContainer"', () => {
    // The Instance's own origin: contentUrls.<env>.origin at e62be9e, customizationUrls.contentOrigin at 2e8aeb9.
    const instanceOrigin = (level: ApiLevel, origin: string) => (level === 'e62be9e' ? { contentUrls: { env0: { origin } } } : { customizationUrls: { contentOrigin: origin } });
    const init = (level: ApiLevel, options: Record<string, unknown> | undefined, origin?: string) =>
      podSpec(standalone(level, options ? { containerStartupOptions: options } : {}, origin ? instanceOrigin(level, origin) : undefined)).initContainers;
    it.each([
      ['No origin is provided', undefined, undefined, undefined],
      ['no source archive is specified in the template', { enforceWorkdir: false }, undefined, undefined],
      ['a source archive is specified in the template', { sourceArchiveURL: '/some/path', enforceWorkdir: false }, undefined, '/some/path'],
      ['a source archive is specified in the instance', undefined, '/some/path', '/some/path'],
      ['both template and instance custom options are provided: the instance’s', { sourceArchiveURL: '/some/path', enforceWorkdir: false }, '/some/different/path', '/some/different/path'],
    ])('When %s', (_when, options, origin, expected) => {
      for (const level of BOTH) {
        const containers = init(level, options, origin);
        if (expected === undefined) expect(containers).toBeUndefined();
        else expect(containers.map((c: Any) => c.env.find((e: Any) => e.name === 'SOURCE_ARCHIVE').value)).toEqual([expected]);
      }
    });
    it.each(BOTH)('the content-downloader: resources, mount, env, no ports, no probe (%s)', (level) => {
      const [c] = init(level, { sourceArchiveURL: '/some/path', enforceWorkdir: false });
      expect(c.name).toBe('content-downloader');
      expect(c.resources).toEqual({ requests: { cpu: '500m', memory: '256Mi' }, limits: { cpu: '1', memory: '1Gi' } });
      expect(c.volumeMounts).toEqual([{ name: 'persistent', mountPath: '/media/data' }]);
      expect(c.env).toEqual([
        { name: 'SOURCE_ARCHIVE', value: '/some/path' },
        { name: 'DESTINATION_PATH', value: '/media/data' },
      ]);
      expect(c.ports).toBeUndefined();
      expect(c.readinessProbe).toBeUndefined();
    });
  });

  describe('"The forge.ContainerVolumes function" / "ContainerVolume"', () => {
    it.each([
      ['the environment is not persistent', { persistent: false }, () => ({ name: 'persistent', emptyDir: {} })],
      ['the environment has the source archive url option', { containerStartupOptions: { sourceArchiveURL: '/some/path', enforceWorkdir: false } }, () => ({ name: 'persistent', emptyDir: {} })],
    ])('When %s: an emptyDir', (_when, env, volume) => {
      for (const level of BOTH) expect(podSpec(standalone(level, env)).volumes).toEqual([volume()]);
    });
    it.each(BOTH)('When the environment is persistent: the PVC it renders (%s)', (level) => {
      const r = standalone(level, { persistent: true });
      expect(podSpec(r).volumes).toEqual([{ name: 'persistent', persistentVolumeClaim: { claimName: r.one('PersistentVolumeClaim').metadata.name } }]);
    });
    it('When the environment has the mount personal volume option: one more volume, MyDrive over NFS (2e8aeb9)', () => {
      expect(podSpec(standalone('2e8aeb9', { mountMyDriveVolume: true })).volumes.map((v: Any) => v.name)).toEqual(['persistent', 'mydrive']);
    });
    it('When the environment has the mount personal volume option: one more volume, the mirror claim of MyDrive (e62be9e)', () => {
      expect(podSpec(standalone('e62be9e', { mountMyDriveVolume: true })).volumes).toEqual([
        { name: 'persistent', emptyDir: {} },
        { name: 'john-doe-drive-mirror', persistentVolumeClaim: { claimName: 'john-doe-drive-mirror' } },
      ]);
    });
  });

  describe('"The forge.RestrictiveSecurityContext function" / "GenericContainer" / "ContainerProbe"', () => {
    it.each(BOTH)('every container drops ALL capabilities, adds none, is not privileged and cannot escalate; every probe has the same timings (%s)', (level) => {
      const r = renderAt(level, { env: { environmentType: 'Container', guiEnabled: true, containerStartupOptions: { sourceArchiveURL: '/some/path', enforceWorkdir: false } } });
      const spec = podSpec(r);
      for (const c of [...spec.initContainers, ...spec.containers]) {
        expect(c.securityContext).toEqual({ capabilities: { drop: ['ALL'] }, privileged: false, allowPrivilegeEscalation: false });
        if (c.readinessProbe) expect(c.readinessProbe).toMatchObject(PROBE_BASE);
      }
    });
  });

  describe('"The forge.SubmissionJobSpec function" / "ContentUploaderJobContainer"', () => {
    it('backoff 10, TTL 300 s, OnFailure, the pod security context, no token; the uploader’s resources, mount and env', () => {
      const instance = { metadata: { name: 'kubernetes-0000', namespace: 'tenant-tester' }, spec: { 'template.crownlabs.polito.it/TemplateRef': { name: 't', namespace: 'w' }, 'tenant.crownlabs.polito.it/TenantRef': { name: 'tester' } } } as unknown as Instance;
      const job = renderSubmissionJob({ instance, envName: 'default', level: '2e8aeb9', destinationUrl: '/some/path', config: testConfig() }) as Any;
      expect(job.spec).toMatchObject({ backoffLimit: 10, ttlSecondsAfterFinished: 300 });
      const pod = job.spec.template.spec;
      expect(pod).toMatchObject({ restartPolicy: 'OnFailure', automountServiceAccountToken: false, securityContext: { runAsUser: 1010, runAsGroup: 1010, fsGroup: 1010, runAsNonRoot: true } });
      const [c] = pod.containers;
      expect(c.name).toBe('content-uploader');
      expect(c.resources).toEqual({ requests: { cpu: '500m', memory: '256Mi' }, limits: { cpu: '1', memory: '1Gi' } });
      expect(c.volumeMounts).toEqual([{ name: 'persistent', mountPath: '/media/data' }]);
      expect(c.env.map((e: Any) => e.name)).toEqual(['SOURCE_PATH', 'DESTINATION_URL', 'FILENAME']);
      expect(c.env.slice(0, 2)).toEqual([
        { name: 'SOURCE_PATH', value: '/media/data' },
        { name: 'DESTINATION_URL', value: '/some/path' },
      ]);
      // 2e8aeb9: FILENAME is the Instance's name. e62be9e uploads `<instance>-<env>` with args ["upload"]
      // of its single content-tools image: not done here (per-environment automation).
      expect(c.env[2]).toEqual({ name: 'FILENAME', value: 'kubernetes-0000' });
    });
  });
});

// --- services_test -----------------------------------------------------------------------------

describe('upstream services_test "The forge.ServiceSpec function"', () => {
  const service = (level: ApiLevel, env: Record<string, unknown>) => renderAt(level, { env }).one('Service');
  const port = (name: string, n: number) => ({ name, port: n, targetPort: n, protocol: 'TCP' });
  it.each(BOTH)('type ClusterIP, selecting the pod labels (%s)', (level) => {
    const r = renderAt(level, { env: { environmentType: 'VirtualMachine' } });
    const svc = r.one('Service');
    expect(svc.spec.type).toBe('ClusterIP');
    // KubeVirt gives the VMI's labels to its pod.
    expect(r.one('VirtualMachineInstance').metadata.labels).toMatchObject(svc.spec.selector);
  });
  it.each([
    ['When the Environment is of type VM, without GUI', 'VirtualMachine', false, [port('ssh', 22)]],
    ['When the Environment is of type VM, with GUI', 'VirtualMachine', true, [port('ssh', 22), port('gui', 6080)]],
    ['When the Environment is of type CloudVM, without GUI', 'CloudVM', false, [port('ssh', 22)]],
    ['When the Environment is of type CloudVM, with GUI', 'CloudVM', true, [port('ssh', 22), port('gui', 6080)]],
    ['When the Environment is of type Container, without GUI', 'Container', false, [port('metrics', 9090)]],
    ['When the Environment is of type Container, with GUI', 'Container', true, [port('gui', 6080)]],
  ])('e62be9e: %s', (_entry, environmentType, guiEnabled, ports) => {
    expect(service('e62be9e', { environmentType, guiEnabled }).spec.ports).toEqual(ports);
  });
  it.each([
    ['When the Environment is of type VM, without GUI', 'VirtualMachine', 'Standard', false, [port('ssh', 22)]],
    ['When the Environment is of type VM, with GUI', 'VirtualMachine', 'Standard', true, [port('ssh', 22), port('gui', 6080)]],
    ['When the Environment is of type CloudVM, with GUI', 'CloudVM', 'Standard', true, [port('ssh', 22), port('gui', 6080)]],
    ['When the Environment is of type Container in standard mode', 'Container', 'Standard', true, [port('gui', 6080), port('mydrive', 8080), port('metrics', 9090)]],
    ['When the Environment is of type Container in exam mode', 'Container', 'Exam', true, [port('gui', 6080), port('metrics', 9090)]],
    ['When the Environment is of type Container in exercise mode', 'Container', 'Exercise', true, [port('gui', 6080), port('metrics', 9090)]],
  ])('2e8aeb9: %s', (_entry, environmentType, mode, guiEnabled, ports) => {
    expect(service('2e8aeb9', { environmentType, mode, guiEnabled }).spec.ports).toEqual(ports);
  });
  it.each(BOTH)('MonitorableServiceLabels: a Container’s Service is labelled metrics-enabled, a VM’s is not (%s)', (level) => {
    expect(service(level, { environmentType: 'Container', guiEnabled: true }).metadata.labels['crownlabs.polito.it/metrics-enabled']).toBe('true');
    expect(service(level, { environmentType: 'VirtualMachine' }).metadata.labels['crownlabs.polito.it/metrics-enabled']).toBeUndefined();
  });
});

// --- ingresses_test ----------------------------------------------------------------------------

describe('upstream ingresses_test', () => {
  const TIMEOUTS = { 'nginx.ingress.kubernetes.io/proxy-read-timeout': '3600', 'nginx.ingress.kubernetes.io/proxy-send-timeout': '3600' };
  /** The Ingress annotations of CrownLabs (ours, the parent annotation, left out). */
  const nginx = (ingress: Any) => Object.fromEntries(Object.entries(ingress.metadata.annotations as Record<string, string>).filter(([k]) => k.startsWith('nginx.')));
  const ingress = (level: ApiLevel, env: Record<string, unknown>, config: Partial<ComposerConfig> = {}) => renderAt(level, { env: { guiEnabled: true, ...env } }, config);

  it.each(BOTH)('"The forge.IngressSpec function": TLS, one rule with the host, one path to the Service’s gui port (%s)', (level) => {
    const r = ingress(level, { environmentType: 'Standalone' });
    const spec = r.one('Ingress').spec;
    expect(spec.tls).toEqual([{ hosts: ['crownlabs.polito.it'], secretName: 'crownlabs-ingress-secret' }]);
    expect(spec.rules).toHaveLength(1);
    expect(spec.rules[0].host).toBe('crownlabs.polito.it');
    expect(spec.rules[0].http.paths).toHaveLength(1);
    expect(spec.rules[0].http.paths[0]).toMatchObject({ pathType: 'Prefix', backend: { service: { name: r.one('Service').metadata.name, port: { name: 'gui' } } } });
  });

  describe('"The forge.IngressGUIAnnotations function" (auth off: no instancesAuthUrl)', () => {
    it.each([
      ['EnvironmentType is ClassStandalone, RewriteURL false', { environmentType: 'Standalone', rewriteURL: false }, TIMEOUTS],
      ['EnvironmentType is ClassStandalone, RewriteURL true', { environmentType: 'Standalone', rewriteURL: true }, { ...TIMEOUTS, 'nginx.ingress.kubernetes.io/rewrite-target': '/$2' }],
      ['EnvironmentType is ClassContainer', { environmentType: 'Container' }, TIMEOUTS],
    ])('%s', (_entry, env, expected) => {
      for (const level of BOTH) expect(nginx(ingress(level, env).one('Ingress'))).toEqual(expected);
    });
    it.each(['VirtualMachine', 'CloudVM'])('%s: the timeouts, and at e62be9e rewrite-target /$1 (2e8aeb9: none)', (environmentType) => {
      expect(nginx(ingress('e62be9e', { environmentType }).one('Ingress'))).toEqual({ ...TIMEOUTS, 'nginx.ingress.kubernetes.io/rewrite-target': '/$1' });
      expect(nginx(ingress('2e8aeb9', { environmentType }).one('Ingress'))).toEqual(TIMEOUTS);
    });
  });

  it.each(BOTH)('"The forge.IngressAuthenticationAnnotations function": auth-url and auth-signin from the auth URL (%s)', (level) => {
    const r = ingress(level, { environmentType: 'Standalone' }, { authMode: 'shared', instancesAuthUrl: 'https://crownlabs.example.com/auth' });
    expect(nginx(r.one('Ingress'))).toEqual({
      ...TIMEOUTS,
      'nginx.ingress.kubernetes.io/auth-url': 'https://crownlabs.example.com/auth/auth',
      'nginx.ingress.kubernetes.io/auth-signin': 'https://crownlabs.example.com/auth/start?rd=$escaped_request_uri',
    });
  });

  it.each([
    ['when the mode is Default', 'Standard', 'crownlabs.polito.it'],
    ['when the mode is Exam', 'Exam', 'exam.crownlabs.polito.it'],
    ['when the mode is Exercise', 'Exercise', 'exercise.crownlabs.polito.it'],
  ])('2e8aeb9 "The forge.HostName function": %s', (_entry, mode, host) => {
    expect(ingress('2e8aeb9', { environmentType: 'Standalone', mode }).one('Ingress').spec.rules[0].host).toBe(host);
  });
});

// --- cloudinit_test ----------------------------------------------------------------------------

describe('upstream cloudinit_test "The CloudInitUserData function"', () => {
  const head = `#cloud-config
users:
    - name: crownlabs
      lock_passwd: false
      passwd: $6$rounds=4096$tBS1sNBpnw6feehB$lS9b7VKH6WMAFOB0SrHCgjD2BKs9CegDe51EiMRWbxQeCVnoGL4u0jNaRsYhvVoBFaRlXZkNsxfFhXvCBaNeQ.
      sudo: ALL=(ALL) NOPASSWD:ALL
      ssh_authorized_keys:
        - tenant-key-1
        - tenant-key-2
      shell: /bin/bash
network:
    version: 2
    id0:
        dhcp4: true
`;
  const tail = `ssh_authorized_keys:
    - tenant-key-1
    - tenant-key-2
`;
  it('2e8aeb9: Should match the expected output, MyDrive as an NFS mount', () => {
    const mounts = `mounts:
    - - rook-ceph-nfs-my-nfs-a.rook-ceph.svc.cluster.local:/path
      - /media/mydrive
      - nfs
      - rw,tcp,hard,intr,rsize=8192,wsize=8192,timeo=14
      - "0"
      - "0"
`;
    expect(cloudInitUserData(['tenant-key-1', 'tenant-key-2'], { server: 'rook-ceph-nfs-my-nfs-a.rook-ceph.svc.cluster.local', path: '/path' })).toBe(head + mounts + tail);
  });
  it('e62be9e without mounts: the same document with `mounts: []` (its virtiofs mirror mounts are out of scope)', () => {
    expect(cloudInitUserData(['tenant-key-1', 'tenant-key-2'])).toBe(`${head}mounts: []\n${tail}`);
  });
  it.each(BOTH)('the Secret holds it as `userdata` (%s)', (level) => {
    const secret = renderAt(level, { env: { environmentType: 'VirtualMachine' } }).one('Secret');
    expect(secret.type).toBe('Opaque');
    // Upstream e62be9e also writes a key `x-shellscript` (a script preparing /media/mydrive for the virtiofs mount).
    expect(Object.keys(secret.data)).toEqual(['userdata']);
  });
});

// --- tenant: resourcequota_test, limitrange_test, namespace_test, tenant_test, rbac_test, rolebinding_test, storage_test

const TARGET = { 'crownlabs.polito.it/operator-selector': 'production' };
const COMMON = { ...TARGET, 'crownlabs.polito.it/managed-by': 'tenant' };

function renderTenant(level: ApiLevel, tenantSpec: Record<string, unknown>, config: Partial<ComposerConfig> = {}) {
  const ws = { apiVersion: 'crownlabs.polito.it/v1alpha1', kind: 'Workspace', metadata: { name: 'test-workspace', labels: TARGET }, spec: { prettyName: 'Test Workspace', quota: { cpu: level === 'e62be9e' ? 8 : '8', memory: '16G', instances: 4 } } };
  const tenant = { apiVersion: 'crownlabs.polito.it/v1alpha2', kind: 'Tenant', metadata: { name: 'test-tenant', labels: TARGET }, spec: { firstName: 'Test', lastName: 'Tenant', email: 't@example.com', workspaces: [{ name: 'test-workspace', role: 'user' }], ...tenantSpec } };
  const r = render([ws, tenant].map((d) => JSON.stringify(d)).join('\n---\n'), testConfig({ apiLevel: level, ...config }));
  return (kind: string, name: string, namespace?: string): Any => r.get(kind, name, namespace);
}
const RBAC = 'rbac.authorization.k8s.io';

describe('upstream resourcequota_test "The forge.TenantResourceQuotaSpec function" (e62be9e)', () => {
  it('CPU requests and limits, memory requests and limits, instances and the extended resource of the quota', () => {
    // The workspace adds 8 cores, 16G and 4 instances to the personal workspace's 15, 20G, 3, 1 GPU.
    const get = renderTenant('e62be9e', { personalWorkspace: { cpu: 15, memory: '20G', otherResources: { 'nvidia.com/gpu': 1 }, instances: 3 } }, { capCpu: '0', capMemory: '0', capInstances: 0 });
    expect(get('ResourceQuota', 'crownlabs-resource-quota', 'tenant-test-tenant').spec.hard).toEqual({
      'limits.cpu': '23',
      'requests.cpu': '23',
      'limits.memory': '36G',
      'requests.memory': '36G',
      'count/instances.crownlabs.polito.it': '7',
      'requests.storage': '0',
      'nvidia.com/gpu': '1',
    });
  });
  it('"ConfigureTenantResourceQuota": labelled with the target label and managed-by tenant', () => {
    expect(renderTenant('e62be9e', {})('ResourceQuota', 'crownlabs-resource-quota', 'tenant-test-tenant').metadata.labels).toMatchObject(COMMON);
  });
});

describe('upstream resourcequota_test "SandboxResourceQuotaSpec" and limitrange_test "SandboxLimitRangeSpec"', () => {
  it.each(BOTH)('sandbox quota: CPU limits 4 and requests 2, memory 8G both ways; default container limits (%s)', (level) => {
    const get = renderTenant(level, { createSandbox: true });
    // Ours also counts objects in the sandbox (docs/behaviour.md §5.5).
    expect(get('ResourceQuota', 'sandbox-resource-quota', 'sandbox-test-tenant').spec.hard).toMatchObject({ 'limits.cpu': '4', 'requests.cpu': '2', 'limits.memory': '8G', 'requests.memory': '8G' });
    expect(get('LimitRange', 'sandbox-limit-range', 'sandbox-test-tenant').spec).toEqual({
      limits: [{ type: 'Container', defaultRequest: { cpu: '10m', memory: '50M' }, default: { cpu: '100m', memory: '250M' } }],
    });
  });
  it.each(BOTH)('labels_test "SandboxObjectLabels": managed-by tenant, type sandbox, the tenant (%s)', (level) => {
    const labels = renderTenant(level, { createSandbox: true })('LimitRange', 'sandbox-limit-range', 'sandbox-test-tenant').metadata.labels;
    expect(labels).toMatchObject({ 'crownlabs.polito.it/managed-by': 'tenant', 'crownlabs.polito.it/type': 'sandbox', 'crownlabs.polito.it/tenant': 'test-tenant' });
  });
});

describe('upstream namespace_test', () => {
  it.each(BOTH)('"ConfigureTenantNamespace": target label, type tenant, name, instance-resources-replication; no tenant label (%s)', (level) => {
    const labels = renderTenant(level, {})('Namespace', 'tenant-test-tenant').metadata.labels;
    expect(labels).toMatchObject({ ...COMMON, 'crownlabs.polito.it/type': 'tenant', 'crownlabs.polito.it/name': 'test-tenant', 'crownlabs.polito.it/instance-resources-replication': 'true' });
    expect(labels).not.toHaveProperty('crownlabs.polito.it/tenant');
    // Upstream e62be9e takes these from --tenant-namespace-common-labels (its test adds `gw-access`): §15.2, not done here.
  });
  it.each(BOTH)('"ConfigureWorkspaceNamespace": the common labels and type workspace (%s)', (level) => {
    expect(renderTenant(level, {})('Namespace', 'workspace-test-workspace').metadata.labels).toMatchObject({
      ...TARGET,
      'crownlabs.polito.it/managed-by': 'workspace',
      'crownlabs.polito.it/type': 'workspace',
    });
  });
});

describe('upstream tenant_test "ConfigureTenantDenyNetworkPolicy" / "ConfigureTenantAllowNetworkPolicy"', () => {
  it.each(BOTH)('deny: every pod accepts only its namespace; allow: and namespaces labelled allow-instance-access (%s)', (level) => {
    const get = renderTenant(level, {});
    const deny = get('NetworkPolicy', 'crownlabs-deny-ingress-traffic', 'tenant-test-tenant');
    const allow = get('NetworkPolicy', 'crownlabs-allow-trusted-ingress-traffic', 'tenant-test-tenant');
    expect(deny.spec).toEqual({ podSelector: {}, ingress: [{ from: [{ podSelector: {} }] }] });
    expect(allow.spec).toEqual({ podSelector: {}, ingress: [{ from: [{ namespaceSelector: { matchLabels: { 'crownlabs.polito.it/allow-instance-access': 'true' } } }] }] });
    expect(deny.metadata.labels).toMatchObject(COMMON);
  });
});

describe('upstream rbac_test / rolebinding_test', () => {
  const clusterRole = (name: string) => ({ kind: 'ClusterRole', name, apiGroup: RBAC });
  const group = (name: string) => [{ kind: 'Group', name, apiGroup: RBAC }];
  const user = [{ kind: 'User', name: 'test-tenant', apiGroup: RBAC }];

  it.each([
    ['"ConfigureWorkspaceInstancesManagerBinding"', 'ClusterRoleBinding', 'crownlabs-manage-instances-test-workspace', undefined, 'crownlabs-manage-instances', 'manager'],
    ['"ConfigureWorkspaceTenantsManagerBinding"', 'ClusterRoleBinding', 'crownlabs-manage-tenants-test-workspace', undefined, 'crownlabs-manage-tenants', 'manager'],
    ['"ConfigureWorkspaceUserViewTemplatesBinding"', 'RoleBinding', 'crownlabs-view-templates', 'workspace-test-workspace', 'crownlabs-view-templates', 'user'],
    ['"ConfigureWorkspaceManagerManageTemplatesBinding"', 'RoleBinding', 'crownlabs-manage-templates', 'workspace-test-workspace', 'crownlabs-manage-templates', 'manager'],
  ])('%s: the role for the workspace’s group', (_describe, kind, name, namespace, role, who) => {
    for (const level of BOTH) {
      const binding = renderTenant(level, {})(kind, name, namespace);
      expect(binding.roleRef).toEqual(clusterRole(role));
      expect(binding.subjects).toEqual(group(`kubernetes:workspace-test-workspace:${who}`));
    }
  });

  it.each(BOTH)('"ConfigureTenantClusterRole" / "…ClusterRoleBinding": the tenant may read and edit its own Tenant (%s)', (level) => {
    const get = renderTenant(level, {});
    const role = get('ClusterRole', 'crownlabs-manage-tenant-test-tenant');
    expect(role.rules).toEqual([{ apiGroups: ['crownlabs.polito.it'], resources: ['tenants'], resourceNames: ['test-tenant'], verbs: ['get', 'list', 'watch', 'patch', 'update'] }]);
    expect(role.metadata.labels).toMatchObject(COMMON);
    const binding = get('ClusterRoleBinding', 'crownlabs-manage-tenant-test-tenant');
    expect(binding.roleRef).toEqual(clusterRole('crownlabs-manage-tenant-test-tenant'));
    expect(binding.subjects).toEqual(user);
  });

  it.each(BOTH)('"ConfigureTenantInstancesRoleBinding": the tenant manages Instances in its namespace (%s)', (level) => {
    const binding = renderTenant(level, {})('RoleBinding', 'crownlabs-manage-instances', 'tenant-test-tenant');
    expect(binding.roleRef).toEqual(clusterRole('crownlabs-manage-instances'));
    expect(binding.subjects).toEqual(user);
    expect(binding.metadata.labels).toMatchObject(COMMON);
  });

  it('"ConfigurePersonalWorkspaceManageTemplatesBinding" (e62be9e): the tenant manages Templates in tenant-<name>', () => {
    const binding = renderTenant('e62be9e', { personalWorkspace: { cpu: 1, memory: '1Gi', instances: 1 } })('RoleBinding', 'crownlabs-manage-templates', 'tenant-test-tenant');
    expect(binding.roleRef).toEqual(clusterRole('crownlabs-manage-templates'));
    expect(binding.subjects).toEqual(user);
  });
});

describe('upstream storage_test "MyDrivePVCSpec"', () => {
  it.each(BOTH)('ReadWriteMany, the storage class and size configured (%s)', (level) => {
    const pvc = renderTenant(level, {}, { mydrivePvcsStorageClassName: 'example-storage-class', mydrivePvcsSize: '10Gi' })('PersistentVolumeClaim', 'test-tenant-drive', 'mydrive-pvcs');
    expect(pvc.spec).toMatchObject({ accessModes: ['ReadWriteMany'], storageClassName: 'example-storage-class', resources: { requests: { storage: '10Gi' } } });
  });
});
