import { Testing } from 'cdk8s';
import { describe, expect, it } from 'vitest';
import { SnapshotChart } from '../../../constructs/snapshot/snapshot-chart.ts';
import { Inventory } from '../../../src/inputs/inventory.ts';
import type { Environment, Instance, InstanceSnapshot, KubeObject, Template } from '../../../src/inputs/types.ts';
import { compose, renderAll, renderUnit } from '../../../src/compose/compose.ts';
import { defaultConfig } from '../../../src/config/config.ts';
import { gitopsFiles } from '../../../src/sinks/gitops.ts';
import { COMPOSER, parentId } from '../../../src/model/labels.ts';
import { goDuration } from '../../../src/model/duration.ts';
import {
  requestTag,
  snapshotConfigProblem,
  snapshotDestination,
  snapshotImageDir,
  snapshotOutcome,
  snapshotTag,
  UNKNOWN_TIME_TAG,
  validateSnapshotRequest,
  type SnapshotLookup,
} from '../../../src/model/snapshot.ts';
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Any = any;

const NS = 'tenant-john-doe';

function env(over: Partial<Environment> = {}): Environment {
  return {
    name: 'vm',
    image: 'registry.example/vm:1',
    environmentType: 'VirtualMachine',
    guiEnabled: true,
    disableControls: false,
    persistent: true,
    mode: 'Standard',
    rewriteURL: false,
    mountMyDriveVolume: false,
    resources: { cpu: 2, reservedCPUPercentage: 25, memory: '2G', disk: '20Gi' },
    ...over,
  };
}

function template(envs: Environment[] = [env()]): Template {
  return {
    apiVersion: 'crownlabs.polito.it/v1alpha2',
    kind: 'Template',
    metadata: { name: 'green-tea', namespace: 'workspace-tea' },
    spec: { prettyName: 'Green tea', description: 'd', deleteAfter: 'never', environmentList: envs },
  };
}

function instance(running = false): Instance {
  return {
    apiVersion: 'crownlabs.polito.it/v1alpha2',
    kind: 'Instance',
    metadata: { name: 'green.tea.6831', namespace: NS },
    spec: {
      'template.crownlabs.polito.it/TemplateRef': { name: 'green-tea', namespace: 'workspace-tea' },
      'tenant.crownlabs.polito.it/TenantRef': { name: 'John.Doe_2' },
      running,
    },
  };
}

function snapshot(over: Partial<InstanceSnapshot['spec']> = {}): InstanceSnapshot {
  return {
    apiVersion: 'crownlabs.polito.it/v1alpha2',
    kind: 'InstanceSnapshot',
    metadata: { name: 'snap-1', namespace: NS },
    spec: { instanceRef: { name: 'green.tea.6831', namespace: NS }, imageName: 'my-image', ...over },
  };
}

function lookup(inst?: Instance, tmpl?: Template): SnapshotLookup {
  return {
    instance: (ns, name) => (inst && inst.metadata.namespace === ns && inst.metadata.name === name ? inst : undefined),
    template: (ns, name) => (tmpl && tmpl.metadata.namespace === ns && tmpl.metadata.name === name ? tmpl : undefined),
  };
}

describe('§9.2 step 2: validation of a snapshot request', () => {
  it('accepts a stopped persistent VirtualMachine and returns the environment used', () => {
    const v = validateSnapshotRequest(snapshot(), lookup(instance(), template()));
    expect(v.ok).toBe(true);
    if (v.ok) expect(v.environment.name).toBe('vm');
  });
  it('accepts a stopped persistent CloudVM', () => {
    expect(validateSnapshotRequest(snapshot(), lookup(instance(), template([env({ environmentType: 'CloudVM' })]))).ok).toBe(true);
  });
  it('takes the environment named by environmentRef, else environmentList[0]', () => {
    const t = template([env({ name: 'first', persistent: false }), env({ name: 'second' })]);
    expect(validateSnapshotRequest(snapshot(), lookup(instance(), t))).toMatchObject({ ok: false, permanent: true, message: expect.stringContaining('first is not persistent') });
    expect(validateSnapshotRequest(snapshot({ environmentRef: { name: 'second' } }), lookup(instance(), t))).toMatchObject({ ok: true });
  });
  it('defaults an empty instanceRef.namespace to the snapshot namespace', () => {
    expect(validateSnapshotRequest(snapshot({ instanceRef: { name: 'green.tea.6831' } }), lookup(instance(), template())).ok).toBe(true);
  });
  it.each([
    ['the Instance does not exist', snapshot({ instanceRef: { name: 'nope', namespace: NS } }), instance(), template(), /Instance tenant-john-doe\/nope not found/],
    ['its Template does not exist', snapshot(), instance(), undefined, /Template workspace-tea\/green-tea of Instance .* not found/],
    ['the named environment does not exist', snapshot({ environmentRef: { name: 'other' } }), instance(), template(), /environment other not found/],
    ['the environment is a Container', snapshot(), instance(), template([env({ environmentType: 'Container' })]), /type Container: only VirtualMachine and CloudVM/],
    ['the environment is Standalone', snapshot(), instance(), template([env({ environmentType: 'Standalone' })]), /type Standalone/],
    ['the environment is not persistent (docs/behaviour.md §13: green-tea)', snapshot(), instance(), template([env({ persistent: false })]), /not persistent/],
    ['the Instance is running', snapshot(), instance(true), template(), /is running: stop it/],
  ])('fails permanently when %s', (_what, snap, inst, tmpl, message) => {
    const v = validateSnapshotRequest(snap, lookup(inst, tmpl));
    expect(v).toMatchObject({ ok: false, permanent: true });
    if (!v.ok) expect(v.message).toMatch(message);
  });
  it('a lookup error (not a NotFound) is transient: retried, not Failed', () => {
    const failing: SnapshotLookup = {
      instance: () => {
        throw new Error('connection refused');
      },
      template: () => undefined,
    };
    expect(validateSnapshotRequest(snapshot(), failing)).toEqual({ ok: false, permanent: false, message: 'lookup failed: connection refused' });
  });
});

describe('§9.3 image destination and tag', () => {
  it.each([
    ['john.doe', 'johndoe'],
    ['John.Doe_2', 'johndoe2'],
    ['mary-ann', 'maryann'],
  ])('imagedir of tenant %s is %s', (tenant, dir) => {
    expect(snapshotImageDir(tenant)).toBe(dir);
  });
  it('the tag is YYYYMMDD t HHMMSS of the given time, local by default', () => {
    expect(snapshotTag(new Date(2023, 6, 14, 15, 30, 12))).toBe('20230714t153012');
    expect(snapshotTag(new Date(Date.UTC(2024, 0, 2, 3, 4, 5)), true)).toBe('20240102t030405');
  });
  it('destination is <vmRegistry>/<imagedir>/<imageName>:<tag>', () => {
    expect(snapshotDestination('registry.example:5000', instance(), 'my-image', '20230714t153012')).toBe('registry.example:5000/johndoe2/my-image:20230714t153012');
  });
});

describe('§9.3 snapshot Job shape', () => {
  const config = { vmRegistry: 'registry.example', vmRegistrySecret: 'registry-push', containerExportImg: 'crownlabs/img-exporter', containerKanikoImg: 'gcr.io/kaniko-project/executor' };
  const render = (owner?: Any) => {
    const chart = new SnapshotChart(Testing.app(), 'snap', { snapshot: snapshot(), instance: instance(), claimName: 'green-tea-6831', config, tag: '20230714t153012', owner });
    const objects = chart.toJson() as Any[];
    expect(objects).toHaveLength(1);
    return objects[0];
  };
  const job = render();
  const pod = job.spec.template.spec;

  it('is batch/v1 Job <isnap.name> in the snapshot namespace, backoffLimit 2, restartPolicy OnFailure, no TTL, no securityContext', () => {
    expect(job.apiVersion).toBe('batch/v1');
    expect(job.kind).toBe('Job');
    expect(job.metadata).toEqual({ name: 'snap-1', namespace: NS });
    expect(job.spec.backoffLimit).toBe(2);
    expect(job.spec.ttlSecondsAfterFinished).toBeUndefined();
    expect(pod.restartPolicy).toBe('OnFailure');
    expect(pod.securityContext).toBeUndefined();
  });
  it('has volumes canon(instance) PVC, tmp-vol emptyDir and kaniko-secret with .dockerconfigjson → config.json', () => {
    expect(pod.volumes).toEqual([
      { name: 'green-tea-6831', persistentVolumeClaim: { claimName: 'green-tea-6831' } },
      { name: 'tmp-vol', emptyDir: {} },
      { name: 'kaniko-secret', secret: { secretName: 'registry-push', items: [{ key: '.dockerconfigjson', path: 'config.json' }] } },
    ]);
  });
  it('init container img-generator: export image verbatim, /data and /img-tmp, 1/128Mi requests, 1/256Mi limits', () => {
    expect(pod.initContainers).toEqual([
      {
        name: 'img-generator',
        image: 'crownlabs/img-exporter',
        volumeMounts: [
          { name: 'green-tea-6831', mountPath: '/data' },
          { name: 'tmp-vol', mountPath: '/img-tmp' },
        ],
        resources: { requests: { cpu: '1', memory: '128Mi' }, limits: { cpu: '1', memory: '256Mi' } },
      },
    ]);
  });
  it('container docker-pusher: kaniko verbatim, Dockerfile and destination args, /workspace and /kaniko/.docker/, 1/8Gi requests, 1/32Gi limits', () => {
    expect(pod.containers).toEqual([
      {
        name: 'docker-pusher',
        image: 'gcr.io/kaniko-project/executor',
        args: ['--dockerfile=/workspace/Dockerfile', '--destination=registry.example/johndoe2/my-image:20230714t153012'],
        volumeMounts: [
          { name: 'tmp-vol', mountPath: '/workspace' },
          { name: 'kaniko-secret', mountPath: '/kaniko/.docker/' },
        ],
        resources: { requests: { cpu: '1', memory: '8Gi' }, limits: { cpu: '1', memory: '32Gi' } },
      },
    ]);
  });
  it('is owned by the InstanceSnapshot (controller, blockOwnerDeletion) when an owner is given', () => {
    const owned = render({ apiVersion: 'crownlabs.polito.it/v1alpha2', kind: 'InstanceSnapshot', name: 'snap-1', uid: 'u-1' });
    expect(owned.metadata.ownerReferences).toEqual([
      { apiVersion: 'crownlabs.polito.it/v1alpha2', kind: 'InstanceSnapshot', name: 'snap-1', uid: 'u-1', controller: true, blockOwnerDeletion: true },
    ]);
  });
});

describe('§9.2 Job exists: phase from the Job', () => {
  it.each([
    [{ conditions: [{ type: 'Complete', status: 'True' }], startTime: '2023-07-14T15:30:12Z', completionTime: '2023-07-14T15:31:42Z' }, 'Completed', 'Normal', 'Created', 'Image my-image created and uploaded in 1m30s'],
    [{ conditions: [{ type: 'Complete', status: 'True' }] }, 'Completed', 'Normal', 'Created', 'Image my-image created and uploaded'],
    [{ conditions: [{ type: 'Failed', status: 'True' }] }, 'Failed', 'Warning', 'CreationFailed', 'The creation job failed'],
  ])('%j → %s', (status, phase, type, reason, message) => {
    expect(snapshotOutcome({ status }, 'my-image')).toEqual({ phase, event: { type, reason, message } });
  });
  it('a Job still running (or with a False condition) changes nothing', () => {
    expect(snapshotOutcome({ status: { conditions: [{ type: 'Complete', status: 'False' }] } }, 'x')).toBeUndefined();
    expect(snapshotOutcome({}, 'x')).toBeUndefined();
  });
  it.each([
    [0, '0s'],
    [250, '250ms'],
    [45_000, '45s'],
    [90_000, '1m30s'],
    [3_600_000, '1h0m0s'],
    [3_723_000, '1h2m3s'],
  ])('durations print as Go does: %d ms → %s', (ms, s) => {
    expect(goDuration(ms)).toBe(s);
  });
});

describe('§9 compose: one snapshot set per valid request', () => {
  const config = { ...defaultConfig(), vmRegistry: 'registry.example', vmRegistrySecret: 'registry-push' };
  const inventoryOf = (...objects: KubeObject[]) => Inventory.fromObjects(objects.map((object) => ({ object: object as never, source: { file: 'lab.yaml', document: 1 } }))).inventory;
  const onlySnapshots = { only: (p: { kind: string }) => p.kind === 'InstanceSnapshot' };

  it('renders the SnapshotChart Job, labelled with its parent and tagged by the given clock', () => {
    const c = compose(inventoryOf(template(), instance(), snapshot()), config, { ...onlySnapshots, snapshotTag: () => '20230714t153012' });
    expect(c.units.map((u) => u.id)).toEqual([`snapshots/${NS}/snap-1`]);
    const [job] = renderUnit(c.units[0]) as Any[];
    const direct = new SnapshotChart(Testing.app(), 's', { snapshot: snapshot(), instance: instance(), claimName: 'green-tea-6831', config, tag: '20230714t153012' }).toJson()[0] as Any;
    expect(job.spec).toEqual(direct.spec);
    expect(job.metadata.labels[COMPOSER.parentIdLabel]).toBe(parentId({ kind: 'InstanceSnapshot', namespace: NS, name: 'snap-1' }));
    expect(job.metadata.annotations[COMPOSER.parentAnnotation]).toBe(`InstanceSnapshot/${NS}/snap-1`);
  });
  it("mounts the PVC of the snapshotted environment's VM, named as the plan names its children", () => {
    const claimAt = (level: '2e8aeb9' | 'e62be9e', tpl: Template, inst: Instance, snap: InstanceSnapshot) => {
      const inventory = Inventory.fromObjects([tpl, inst, snap].map((object) => ({ object: object as never, source: { file: 'lab.yaml', document: 1 } })), undefined, level).inventory;
      const [job] = renderUnit(compose(inventory, { ...config, apiLevel: level }, onlySnapshots).units[0]) as Any[];
      return job.spec.template.spec.volumes[0].persistentVolumeClaim.claimName;
    };
    expect(claimAt('2e8aeb9', template(), instance(), snapshot())).toBe('green-tea-6831');
    const two = template([env({ name: 'first' }), env({ name: 'second' })]);
    expect(claimAt('2e8aeb9', two, instance(), snapshot({ environmentRef: { name: 'second' } }))).toBe('green-tea-6831-second');
    expect(claimAt('e62be9e', template(), instance(), snapshot())).toBe('green-tea-6831-vm');
    const kept = { ...instance(), metadata: { ...instance().metadata, annotations: { 'composer.crownlabs.polito.it/children-level': '2e8aeb9' } } };
    expect(claimAt('e62be9e', template(), kept, snapshot())).toBe('green-tea-6831');
  });
  it('without a clock the tag is the request time (creationTimestamp), or 00000000t000000 when unknown', () => {
    const created = { ...snapshot(), metadata: { ...snapshot().metadata, creationTimestamp: '2023-07-14T15:30:12Z' } };
    expect(requestTag(created)).toBe(snapshotTag(new Date('2023-07-14T15:30:12Z')));
    expect(requestTag(snapshot())).toBe(UNKNOWN_TIME_TAG);
    const [job] = renderUnit(compose(inventoryOf(template(), instance(), snapshot()), config, onlySnapshots).units[0]) as Any[];
    expect(job.spec.template.spec.containers[0].args[1]).toBe(`--destination=registry.example/johndoe2/my-image:${UNKNOWN_TIME_TAG}`);
  });
  it('a request that fails validation renders nothing and is reported as a warning', () => {
    const c = compose(inventoryOf(template(), instance(true), snapshot()), config, onlySnapshots);
    expect(c.units).toEqual([]);
    expect(c.problems).toEqual([expect.objectContaining({ severity: 'warning', kind: 'InstanceSnapshot', message: expect.stringMatching(/skipped: Instance .* is running/) })]);
  });
  it('without a registry to push to (vmRegistry, vmRegistrySecret) a request renders nothing and says which keys to set', () => {
    const c = compose(inventoryOf(template(), instance(), snapshot()), { ...config, vmRegistrySecret: '' }, onlySnapshots);
    expect(c.units).toEqual([]);
    expect(c.problems).toEqual([expect.objectContaining({ severity: 'warning', kind: 'InstanceSnapshot', message: 'skipped: snapshots are not configured: set vmRegistrySecret (--vm-registry-secret)' })]);
    expect(snapshotConfigProblem({ vmRegistry: '', vmRegistrySecret: '' })).toBe('snapshots are not configured: set vmRegistry (--vm-registry) and vmRegistrySecret (--vm-registry-secret)');
    expect(snapshotConfigProblem(config)).toBeUndefined();
  });
  it('the gitops tree leaves snapshot sets out', () => {
    const sets = renderAll(compose(inventoryOf(template(), instance(), snapshot()), config, onlySnapshots));
    expect(sets).toHaveLength(1);
    expect([...gitopsFiles(sets, config).keys()].filter((f) => /Job|snap/.test(f))).toEqual([]);
  });
  it('a snapshot in a namespace without the whitelist labels is skipped', () => {
    const ns: KubeObject = { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } };
    const c = compose(inventoryOf(ns, template(), instance(), snapshot()), config, onlySnapshots);
    expect(c.units).toEqual([]);
    expect(c.problems[0].message).toMatch(/lacks the whitelist labels/);
  });
});
