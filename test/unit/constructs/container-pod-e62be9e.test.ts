// The Deployment and PVC of Container and Standalone environments at API level e62be9e
// (docs/behaviour.md §16.3, "Container and Standalone pods"): the pod template must be the one
// upstream's e62be9e operators render, field for field, or a lab switching to ours restarts Pods.
// Two environments per Instance: their children are `N-<env>` and their paths `/instance/<uid>/<env>`
// at both levels, as upstream names them. MyDrive is off (upstream mounts it from a mirror PVC,
// which is not rendered here).
import { describe, expect, it } from 'vitest';
import type { ApiLevel } from '../../../src/inputs/api-level.ts';
import type { ComposerConfig } from '../../../src/config/config.ts';
import { lab, render, testConfig } from '../../support/lab.ts';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Any = any;

const UID = '00000000-0000-4000-8000-000000000001';
const DEPLOYMENT = 'inst-one-desk';
const BASE = `/instance/${UID}/desk`;
const RESOURCES = { cpu: 2, reservedCPUPercentage: 25, memory: '1250M' };

function renderAt(text: string, level: ApiLevel = 'e62be9e', config: Partial<ComposerConfig> = {}) {
  // Every rendered object passes the vendored schemas (an extended resource key, a misplaced field).
  const r = render(text, testConfig({ apiLevel: level, ...config }), { schemas: true });
  return { get: (kind: string, name: string) => r.find(kind, name) as Any, objects: r.objects as Any[] };
}

/** The environment under test (`desk`) and a second one, so that names and paths are upstream's. */
function desk(env: Record<string, unknown>, instance: Record<string, unknown> = {}, level: ApiLevel = 'e62be9e', config: Partial<ComposerConfig> = {}) {
  const text = lab({
    env: [
      { name: 'desk', environmentType: 'Container', resources: RESOURCES, mountMyDriveVolume: false, ...env },
      { name: 'side', environmentType: 'Standalone', mountMyDriveVolume: false },
    ],
    instance,
  });
  return renderAt(text, level, config);
}

const podOf = (env: Record<string, unknown>, instance?: Record<string, unknown>) => desk(env, instance).get('Deployment', DEPLOYMENT).spec.template.spec;

const restrictive = { capabilities: { drop: ['ALL'] }, privileged: false, allowPrivilegeEscalation: false };
const probe = (path: string) => ({ httpGet: { port: 'gui', path }, initialDelaySeconds: 10, periodSeconds: 2, successThreshold: 2, failureThreshold: 5 });
const cpuRef = (env: string, resource: string) => ({ resourceFieldRef: { containerName: env, resource, divisor: '0' } });

describe('e62be9e: the whole pod template of an ephemeral Container environment', () => {
  it('is exactly what upstream renders: one application container serving its GUI, no sidecars', () => {
    expect(podOf({})).toEqual({
      containers: [
        {
          name: 'desk',
          image: 'registry.example/img:1',
          env: [
            { name: 'CROWNLABS_CPU_REQUESTS', valueFrom: cpuRef('desk', 'requests.cpu') },
            { name: 'CROWNLABS_CPU_LIMITS', valueFrom: cpuRef('desk', 'limits.cpu') },
            { name: 'CROWNLABS_BASE_PATH', value: BASE },
            { name: 'CROWNLABS_LISTEN_PORT', value: '6080' },
          ],
          ports: [{ name: 'gui', containerPort: 6080, protocol: 'TCP' }],
          readinessProbe: probe(BASE),
          resources: { requests: { cpu: '500m', memory: '1250M' }, limits: { cpu: '2', memory: '1250M' } },
          securityContext: restrictive,
          volumeMounts: [{ name: 'persistent', mountPath: '/media/data' }],
        },
      ],
      volumes: [{ name: 'persistent', emptyDir: {} }],
      securityContext: { runAsUser: 1010, runAsGroup: 1010, fsGroup: 1010, runAsNonRoot: true },
      automountServiceAccountToken: false,
      terminationGracePeriodSeconds: 10,
      enableServiceLinks: false,
    });
  });
});

describe('e62be9e: the application container, row by row', () => {
  it('a Container and a Standalone get the same single container', () => {
    const container = podOf({ environmentType: 'Container' }).containers;
    const standalone = podOf({ environmentType: 'Standalone' }).containers;
    expect(container.map((c: Any) => c.name)).toEqual(['desk']);
    expect(standalone).toEqual(container);
  });

  it.each([
    ['without rewriteURL the probe asks for the base path', false, BASE],
    ['with rewriteURL (the Ingress strips the path) the probe asks for /', true, '/'],
  ])('readiness probe: %s', (_, rewriteURL, path) => {
    for (const environmentType of ['Container', 'Standalone']) {
      const app = podOf({ environmentType, rewriteURL }).containers[0];
      expect(app.readinessProbe).toEqual(probe(path));
      // The base path the app serves under does not follow the rewrite.
      expect(app.env.find((e: Any) => e.name === 'CROWNLABS_BASE_PATH').value).toBe(BASE);
    }
  });

  it.each([
    ['2 cores at 25%: 500m requested, 2 limited', { cpu: 2, reservedCPUPercentage: 25, memory: '1250M' }, { cpu: '500m', memory: '1250M' }, { cpu: '2', memory: '1250M' }],
    ['4 cores at 50%: 2 requested, 4 limited; memory as given', { cpu: 4, reservedCPUPercentage: 50, memory: '2Gi' }, { cpu: '2', memory: '2Gi' }, { cpu: '4', memory: '2Gi' }],
    ['1 core at 10%: 100m reserved', { cpu: 1, reservedCPUPercentage: 10, memory: '1G' }, { cpu: '100m', memory: '1G' }, { cpu: '1', memory: '1G' }],
    [
      'otherResources are requested and limited alike',
      { cpu: 2, reservedCPUPercentage: 25, memory: '1G', otherResources: { 'nvidia.com/gpu': 1 } },
      { cpu: '500m', memory: '1G', 'nvidia.com/gpu': '1' },
      { cpu: '2', memory: '1G', 'nvidia.com/gpu': '1' },
    ],
  ])('resources: %s', (_, resources, requests, limits) => {
    expect(podOf({ resources }).containers[0].resources).toEqual({ requests, limits });
  });

  it.each([
    ['no startup options: data at /media/data, no args, no working directory', undefined, '/media/data', undefined, undefined],
    ['contentPath moves the mount', { contentPath: '/config/workspace' }, '/config/workspace', undefined, undefined],
    ['startupArgs are the args', { startupArgs: ['--disable-marketplace', 'x=y'] }, '/media/data', ['--disable-marketplace', 'x=y'], undefined],
    ['enforceWorkdir works in the mount', { contentPath: '/home/crownlabs', enforceWorkdir: true }, '/home/crownlabs', undefined, '/home/crownlabs'],
  ])('startup options: %s', (_, containerStartupOptions, mountPath, args, workingDir) => {
    const app = podOf(containerStartupOptions ? { containerStartupOptions } : {}).containers[0];
    expect(app.volumeMounts).toEqual([{ name: 'persistent', mountPath }]);
    expect(app.args).toEqual(args);
    expect(app.workingDir).toEqual(workingDir);
  });
});

describe('e62be9e: content-downloader init container', () => {
  const downloader = (origin: string) => ({
    name: 'content-downloader',
    image: 'crownlabs/content-downloader:latest',
    resources: { requests: { cpu: '500m', memory: '256Mi' }, limits: { cpu: '1', memory: '1Gi' } },
    volumeMounts: [{ name: 'persistent', mountPath: '/media/data' }],
    env: [
      { name: 'SOURCE_ARCHIVE', value: origin },
      { name: 'DESTINATION_PATH', value: '/media/data' },
    ],
    securityContext: restrictive,
  });

  it('none without content', () => {
    expect(podOf({}).initContainers).toBeUndefined();
    expect(podOf({ containerStartupOptions: {} }).initContainers).toBeUndefined();
  });
  it("the Template's archive, downloaded into the persistent volume whatever the app's contentPath", () => {
    expect(podOf({ containerStartupOptions: { sourceArchiveURL: 'https://t/a.tgz', contentPath: '/x' } }).initContainers).toEqual([downloader('https://t/a.tgz')]);
  });
  it("the Instance's contentUrls origin for this environment wins over the Template's archive", () => {
    const pod = podOf({ containerStartupOptions: { sourceArchiveURL: 'https://t/a.tgz' } }, { contentUrls: { desk: { origin: 'https://i/b.zip' } } });
    expect(pod.initContainers).toEqual([downloader('https://i/b.zip')]);
  });
});

describe('e62be9e: the Deployment around the pod', () => {
  it('Recreate strategy; the pod labels are the selector', () => {
    const d = desk({}).get('Deployment', DEPLOYMENT);
    expect(d.spec.strategy).toEqual({ type: 'Recreate' });
    expect(d.spec.template.metadata.labels).toEqual(d.spec.selector.matchLabels);
  });

  it.each([
    ['ephemeral, running', false, true, 1],
    ['ephemeral, stopped (kept running, as upstream does once created)', false, false, 1],
    ['persistent, running', true, true, 1],
    ['persistent, stopped', true, false, 0],
  ])('replicas: %s', (_, persistent, running, replicas) => {
    const r = desk({ persistent, resources: { ...RESOURCES, disk: '4G' } }, { running });
    expect(r.get('Deployment', DEPLOYMENT).spec.replicas).toBe(replicas);
  });

  it('node labels of the Template reach the pod; none without', () => {
    const withSelector = lab({ env: [{ name: 'desk', environmentType: 'Container', mountMyDriveVolume: false }, { name: 'side', environmentType: 'Standalone', mountMyDriveVolume: false }] }).replace('"environmentList"', '"nodeSelector":{"zone":"a"},"environmentList"');
    expect(renderAt(withSelector).get('Deployment', DEPLOYMENT).spec.template.spec.nodeSelector).toEqual({ zone: 'a' });
    expect(podOf({}).nodeSelector).toBeUndefined();
  });
});

describe('e62be9e: a persistent environment', () => {
  const persistent = (extra: Record<string, unknown> = {}) => desk({ persistent: true, resources: { ...RESOURCES, disk: '20Gi' }, ...extra });

  it('mounts the PVC of its own name, instead of an emptyDir', () => {
    const r = persistent();
    expect(r.get('Deployment', DEPLOYMENT).spec.template.spec.volumes).toEqual([{ name: 'persistent', persistentVolumeClaim: { claimName: DEPLOYMENT } }]);
    expect(r.get('PersistentVolumeClaim', DEPLOYMENT)).toBeDefined();
  });
  it('the PVC: ReadWriteOnce, the disk requested, no storage class unless the environment names one', () => {
    expect(persistent().get('PersistentVolumeClaim', DEPLOYMENT).spec).toEqual({ accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '20Gi' } } });
    expect(persistent({ storageClassName: 'fast' }).get('PersistentVolumeClaim', DEPLOYMENT).spec.storageClassName).toBe('fast');
  });
  it('an ephemeral environment has no PVC', () => {
    expect(desk({}).get('PersistentVolumeClaim', DEPLOYMENT)).toBeUndefined();
  });
});

describe('the pod layout is per level (src/model/pod-layout.ts)', () => {
  it('at 2e8aeb9 a Container keeps websockify and Xvnc beside an app that serves no GUI, under <base>/app', () => {
    const pod = desk({}, {}, '2e8aeb9').get('Deployment', DEPLOYMENT).spec.template.spec;
    expect(pod.containers.map((c: Any) => c.name)).toEqual(['websockify', 'xvnc', 'desk']);
    expect(pod.containers[0].args).toContain(`--base-path=${BASE}/app`);
    expect(pod.containers[2].ports).toBeUndefined();
    expect(pod.containers[2].env.map((e: Any) => e.name)).toEqual(['CROWNLABS_CPU_REQUESTS', 'CROWNLABS_CPU_LIMITS']);
  });
  it('at 2e8aeb9 a Standalone serves under <base>/app', () => {
    const app = desk({ environmentType: 'Standalone' }, {}, '2e8aeb9').get('Deployment', DEPLOYMENT).spec.template.spec.containers[0];
    expect(app.env.find((e: Any) => e.name === 'CROWNLABS_BASE_PATH').value).toBe(`${BASE}/app`);
    expect(app.readinessProbe.httpGet.path).toBe(`${BASE}/app`);
  });
});
