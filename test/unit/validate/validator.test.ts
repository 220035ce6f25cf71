import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { loadInventory } from '../../../src/inputs/load.ts';
import type { KubeObject } from '../../../src/inputs/types.ts';
import { compose, renderAll } from '../../../src/compose/compose.ts';
import { loadConfig } from '../../../src/config/config.ts';
import { k8sDocument, k8sOpenApiDir, kindSchema, vendoredK8sKinds } from '../../../src/validate/schemas.ts';
import { RenderedObjectValidator, type ObjectIssue } from '../../../src/validate/validator.ts';

const ROOT = join(import.meta.dirname, '..', '..', '..');

// Deliberately broken copies of objects the example lab renders, checked by the validator module.
let objects: KubeObject[];
const validator = new RenderedObjectValidator();

beforeAll(() => {
  const { config } = loadConfig({ file: join(ROOT, 'examples', 'crownlabs.config.yaml'), env: {}, flags: {} });
  const { inventory } = loadInventory([join(ROOT, 'examples', 'lab')]);
  objects = renderAll(compose(inventory, config)).flatMap((s) => s.objects);
});

/** A deep copy of the first rendered object of a kind (optionally by name). */
function base(kind: string, name?: string): Record<string, any> {
  const found = objects.find((o) => o.kind === kind && (name === undefined || o.metadata.name === name));
  if (!found) throw new Error(`the example lab renders no ${kind} ${name ?? ''}`);
  return JSON.parse(JSON.stringify(found));
}

function issues(object: unknown): ObjectIssue[] {
  return validator.validate(object);
}

function fields(object: unknown): string[] {
  return issues(object).map((i) => i.field);
}

/** The single issue of a broken object. */
function only(object: unknown): ObjectIssue {
  const found = issues(object);
  expect(found, JSON.stringify(found, null, 2)).toHaveLength(1);
  return found[0];
}

describe('validating rendered objects against the vendored schemas', () => {
  it('accepts the objects it is given as bases', () => {
    for (const [kind, name] of [
      ['Deployment', 'espresso-1'],
      ['Service', 'espresso-1'],
      ['Ingress', undefined],
      ['VirtualMachineInstance', 'green-tea-6831'],
      ['Namespace', undefined],
      ['ClusterRole', undefined],
      ['ClusterRoleBinding', undefined],
      ['RoleBinding', undefined],
      ['NetworkPolicy', undefined],
      ['PersistentVolumeClaim', undefined],
      ['ResourceQuota', undefined],
      ['LimitRange', undefined],
      ['Secret', undefined],
    ] as const) {
      expect(issues(base(kind, name)), `${kind} ${name ?? ''}`).toEqual([]);
    }
  });

  it('a Deployment with replicas "one": a type error at spec.replicas', () => {
    const d = base('Deployment', 'espresso-1');
    d.spec.replicas = 'one';
    expect(only(d)).toEqual({ pointer: '/spec/replicas', field: 'spec.replicas', message: 'must be of type integer, not string "one"' });
  });

  it('a container with an unknown field: rejected like kubectl --validate=strict', () => {
    const d = base('Deployment', 'espresso-1');
    d.spec.template.spec.containers[1].imagePullPolcy = 'Always';
    expect(only(d)).toMatchObject({ field: 'spec.template.spec.containers[1].imagePullPolcy', message: 'unknown field (not in the schema)' });
  });

  it('a quantity "2X": rejected at the exact resource', () => {
    const d = base('Deployment', 'espresso-1');
    d.spec.template.spec.containers[0].resources.limits.cpu = '2X';
    const issue = only(d);
    expect(issue.field).toBe('spec.template.spec.containers[0].resources.limits.cpu');
    expect(issue.message).toMatch(/"2X" is not a valid quantity/);
  });

  it('requests above limits, and a negative quantity', () => {
    const d = base('Deployment', 'espresso-1');
    d.spec.template.spec.containers[0].resources.requests.memory = '1Gi';
    d.spec.template.spec.containers[1].resources.requests.cpu = '-1';
    const found = issues(d);
    expect(found.map((i) => i.field)).toEqual(['spec.template.spec.containers[0].resources.requests.memory', 'spec.template.spec.containers[1].resources.requests.cpu']);
    expect(found[0].message).toBe('"1Gi": must be less than or equal to memory limit of 100Mi');
    expect(found[1].message).toMatch(/must be greater than or equal to 0/);
  });

  it('required fields, enums and names inside a pod template', () => {
    const d = base('Deployment', 'espresso-1');
    const c = d.spec.template.spec.containers[0];
    delete c.image;
    c.imagePullPolicy = 'Sometimes';
    c.name = 'Web_Sockify';
    c.ports[0].containerPort = 0;
    c.volumeMounts = [{ name: 'nowhere', mountPath: '/x' }];
    expect(fields(d).sort()).toEqual(
      [
        'spec.template.spec.containers[0].image',
        'spec.template.spec.containers[0].imagePullPolicy',
        'spec.template.spec.containers[0].name',
        'spec.template.spec.containers[0].ports[0].containerPort',
        'spec.template.spec.containers[0].volumeMounts[0].name',
      ].sort(),
    );
    expect(issues(d).find((i) => i.field.endsWith('imagePullPolicy'))?.message).toBe('unsupported value "Sometimes": must be one of "Always", "IfNotPresent", "Never"');
  });

  it('a Deployment selector that does not match its template', () => {
    const d = base('Deployment', 'espresso-1');
    d.spec.selector.matchLabels['crownlabs.polito.it/instance'] = 'someone-else';
    expect(only(d)).toMatchObject({ field: 'spec.template.metadata.labels', message: '`selector` does not match template `labels`' });
    const e = base('Deployment', 'espresso-1');
    delete e.spec.selector;
    expect(only(e)).toMatchObject({ field: 'spec.selector', message: 'required value is missing' });
  });

  it('a Service port out of range, a bad targetPort and protocol', () => {
    const s = base('Service', 'espresso-1');
    s.spec.ports[0].port = 70000;
    s.spec.ports[1].targetPort = 'not_a_port_name';
    s.spec.ports[2].protocol = 'HTTP';
    const found = issues(s);
    expect(found.map((i) => i.field)).toEqual(['spec.ports[0].port', 'spec.ports[1].targetPort', 'spec.ports[2].protocol']);
    expect(found[0].message).toBe('70000: must be between 1 and 65535, inclusive');
    expect(found[2].message).toBe('unsupported value "HTTP": must be one of "SCTP", "TCP", "UDP"');
    const t = base('Service', 'espresso-1');
    delete t.spec.ports[1].name;
    expect(only(t)).toMatchObject({ field: 'spec.ports[1].name', message: expect.stringMatching(/every port of a multi-port service needs a name/) });
  });

  it('an Ingress with pathType "Sometimes"', () => {
    const i = base('Ingress');
    i.spec.rules[0].http.paths[0].pathType = 'Sometimes';
    expect(only(i)).toEqual({
      pointer: '/spec/rules/0/http/paths/0/pathType',
      field: 'spec.rules[0].http.paths[0].pathType',
      message: 'unsupported value "Sometimes": must be one of "Exact", "ImplementationSpecific", "Prefix"',
    });
  });

  it('an Ingress with a bad host, a relative Prefix path and a backend port both named and numbered', () => {
    const i = base('Ingress');
    i.spec.rules[0].host = 'Not A Host';
    i.spec.rules[0].http.paths[0].pathType = 'Prefix';
    i.spec.rules[0].http.paths[0].path = 'relative';
    i.spec.rules[0].http.paths[0].backend.service.port = { name: 'gui', number: 6080 };
    expect(fields(i).sort()).toEqual(['spec.rules[0].host', 'spec.rules[0].http.paths[0].backend.service.port', 'spec.rules[0].http.paths[0].path'].sort());
  });

  it('a VMI with domain.cpu.cores "two"', () => {
    const v = base('VirtualMachineInstance', 'green-tea-6831');
    v.spec.domain.cpu.cores = 'two';
    expect(only(v)).toEqual({ pointer: '/spec/domain/cpu/cores', field: 'spec.domain.cpu.cores', message: 'must be of type integer, not string "two"' });
  });

  it('a VMI without memory, with a disk lacking a volume and an unknown field (KubeVirt admission rules)', () => {
    const v = base('VirtualMachineInstance', 'green-tea-6831');
    delete v.spec.domain.memory;
    delete v.spec.domain.resources.requests.memory;
    v.spec.domain.devices.disks.push({ name: 'data', disk: { bus: 'virtio' } });
    v.spec.domain.devices.bogus = true;
    expect(fields(v).sort()).toEqual(['spec.domain', 'spec.domain.devices.bogus', 'spec.domain.devices.disks[2].name'].sort());
    expect(issues(v).find((i) => i.field === 'spec.domain')?.message).toMatch(/^no memory requested/);
  });

  it('a VMI quantity that does not match the CRD pattern', () => {
    const v = base('VirtualMachineInstance', 'green-tea-6831');
    v.spec.domain.resources.limits.memory = '2X';
    expect(only(v)).toMatchObject({ field: 'spec.domain.resources.limits.memory', message: expect.stringMatching(/"2X" is not a valid quantity/) });
  });

  it('metadata: name, namespace, labels and annotations', () => {
    const d = base('Deployment', 'espresso-1');
    d.metadata.name = 'Espresso_1';
    d.metadata.labels['crownlabs.polito.it/tenant'] = 'not a label value';
    d.metadata.annotations['bad key!'] = 'x';
    delete d.metadata.namespace;
    expect(fields(d).sort()).toEqual(
      ['metadata.name', 'metadata.namespace', 'metadata.labels["crownlabs.polito.it/tenant"]', 'metadata.annotations["bad key!"]'].sort(),
    );
    const c = base('ClusterRole');
    c.metadata.namespace = 'default';
    expect(only(c)).toEqual({ pointer: '/metadata/namespace', field: 'metadata.namespace', message: 'ClusterRole is cluster-scoped and takes no namespace' });
    // A Service name is a DNS label: no dots.
    const s = base('Service', 'espresso-1');
    s.metadata.name = 'espresso.1';
    expect(only(s).field).toBe('metadata.name');
    // Custom resources get ObjectMeta checked too.
    const v = base('VirtualMachineInstance', 'green-tea-6831');
    v.metadata.labels = { ok: 'yes', 'bad/key/twice': 'x' };
    v.metadata.bogus = 1;
    expect(fields(v).sort()).toEqual(['metadata.bogus', 'metadata.labels["bad/key/twice"]']);
  });

  it('RBAC: rules without verbs, a ClusterRoleBinding to a Role, a ServiceAccount without namespace', () => {
    const r = base('ClusterRole');
    r.rules[0].verbs = [];
    expect(only(r)).toMatchObject({ field: 'rules[0].verbs' });
    const b = base('ClusterRoleBinding');
    b.roleRef.kind = 'Role';
    b.subjects = [{ kind: 'ServiceAccount', name: 'robot' }];
    expect(fields(b)).toEqual(['roleRef.kind', 'subjects[0].namespace']);
  });

  it('a Secret with data that is not base64 and a bad key', () => {
    const s = base('Secret');
    s.data = { 'ok-key': 'aGVsbG8=', 'bad key': 'aGVsbG8=', value: 'not base64!' };
    const found = issues(s);
    expect(found.map((i) => i.field).sort()).toEqual(['data["bad key"]', 'data.value'].sort());
    expect(found.find((i) => i.field === 'data["bad key"]')?.message).toMatch(/^invalid key "bad key": a valid config key/);
    expect(found.find((i) => i.field === 'data.value')?.message).toBe('invalid value "not base64!": must be base64-encoded');
  });

  it('a PVC without storage and with a bad access mode', () => {
    const p = base('PersistentVolumeClaim');
    p.spec.accessModes = ['ReadWriteSometimes'];
    delete p.spec.resources.requests.storage;
    expect(fields(p)).toEqual(['spec.accessModes[0]', 'spec.resources.requests.storage']);
  });

  it('a LimitRange whose default request exceeds its default limit', () => {
    const l = base('LimitRange');
    l.spec.limits[0].defaultRequest.cpu = '1';
    expect(only(l)).toEqual({
      pointer: '/spec/limits/0/defaultRequest/cpu',
      field: 'spec.limits[0].defaultRequest.cpu',
      message: 'default request value 1 is greater than default limit value 100m',
    });
  });

  it('an unknown apiVersion/kind: no schema is vendored for it', () => {
    expect(only({ apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'w' } })).toEqual({
      pointer: '/kind',
      field: 'kind',
      message: expect.stringMatching(/^no schema is vendored for apiVersion "example\.com\/v1" kind "Widget"/),
    });
    expect(only({ apiVersion: 'apps/v2', kind: 'Deployment', metadata: { name: 'd' } }).message).toMatch(/no schema is vendored/);
    expect(fields({ kind: 'Deployment' })).toEqual(['apiVersion']);
  });

  it('validates the JSON form a sink writes: undefined fields are absent', () => {
    const d = base('Deployment', 'espresso-1');
    d.spec.paused = undefined;
    expect(issues(d)).toEqual([]);
  });

  it('compiles lazily, once per kind', () => {
    const v = new RenderedObjectValidator();
    expect(v.timings).toEqual([]);
    v.validate(base('Service', 'espresso-1'));
    v.validate(base('Service', 'espresso-1'));
    v.validate(base('Namespace'));
    expect(v.timings.map((t) => `${t.apiVersion} ${t.kind}`)).toEqual(['v1 Service', 'v1 Namespace']);
  });
});

describe('the vendored schemas', () => {
  it('holds the group-versions we render, with an index and a SOURCE.md', () => {
    const files = readdirSync(k8sOpenApiDir());
    for (const f of [
      'api__v1_openapi.json',
      'apis__apps__v1_openapi.json',
      'apis__networking.k8s.io__v1_openapi.json',
      'apis__rbac.authorization.k8s.io__v1_openapi.json',
      'apis__batch__v1_openapi.json',
      'apis__policy__v1_openapi.json',
      'apis__coordination.k8s.io__v1_openapi.json',
      'apis__admissionregistration.k8s.io__v1_openapi.json',
      'index.json',
      'SOURCE.md',
    ]) {
      expect(files).toContain(f);
    }
    expect(vendoredK8sKinds()).toEqual(expect.arrayContaining(['v1/Namespace', 'apps/v1/Deployment', 'batch/v1/Job', 'coordination.k8s.io/v1/Lease', 'policy/v1/PodDisruptionBudget']));
    expect(kindSchema('v1', 'Namespace')?.namespaced).toBe(false);
    expect(kindSchema('v1', 'Service')?.namespaced).toBe(true);
    expect(kindSchema('kubevirt.io/v1', 'VirtualMachine')).toMatchObject({ origin: 'crd', namespaced: true });
    expect(kindSchema('argoproj.io/v1alpha1', 'AppProject')).toMatchObject({ origin: 'crd', namespaced: true });
    expect(kindSchema('crownlabs.polito.it/v1alpha2', 'Tenant')).toMatchObject({ origin: 'crd', namespaced: false });
  });

  it('every rule names a property that exists in its schema', () => {
    // k8sDocument throws on a rule for a missing property (a renamed upstream field, a typo).
    for (const f of readdirSync(k8sOpenApiDir()).filter((n) => n.endsWith('_openapi.json'))) expect(() => k8sDocument(f)).not.toThrow();
    expect(() => kindSchema('kubevirt.io/v1', 'VirtualMachine')).not.toThrow();
  });

  it('checks other rendered kinds too: a Job, a Lease, a PodDisruptionBudget', () => {
    const job = {
      apiVersion: 'batch/v1',
      kind: 'Job',
      metadata: { name: 'snapshot', namespace: 'tenant-a' },
      spec: { template: { spec: { restartPolicy: 'Always', containers: [{ name: 'c', image: 'busybox' }] } } },
    };
    expect(only(job)).toMatchObject({ field: 'spec.template.spec.restartPolicy' });
    job.spec.template.spec.restartPolicy = 'Never';
    expect(issues(job)).toEqual([]);
    expect(issues({ apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { name: 'l', namespace: 'n' }, spec: { holderIdentity: 'me', leaseDurationSeconds: 15 } })).toEqual([]);
    expect(fields({ apiVersion: 'policy/v1', kind: 'PodDisruptionBudget', metadata: { name: 'p', namespace: 'n' }, spec: { minAvailable: 1.5 } })).toEqual(['spec.minAvailable']);
  });
});
