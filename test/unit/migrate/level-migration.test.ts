import { describe, expect, it } from 'vitest';
import { migrateObject, migrateObjects } from '../../../src/migrate/level-migration.ts';
import type { KubeObject } from '../../../src/inputs/types.ts';

const env = (over: Record<string, unknown> = {}) => ({
  name: 'desktop',
  image: 'img',
  environmentType: 'Container',
  guiEnabled: true,
  disableControls: false,
  persistent: false,
  mode: 'Standard',
  rewriteURL: false,
  mountMyDriveVolume: true,
  resources: { cpu: 1, reservedCPUPercentage: 50, memory: '1Gi' },
  ...over,
});

const template = (spec: Record<string, unknown> = {}, envs = [env()]): KubeObject => ({
  apiVersion: 'crownlabs.polito.it/v1alpha2',
  kind: 'Template',
  metadata: { name: 'tpl', namespace: 'workspace-w' },
  spec: { prettyName: 'T', description: 'd', deleteAfter: 'never', environmentList: envs, ...spec },
});

const instance = (spec: Record<string, unknown> = {}, status?: Record<string, unknown>): KubeObject => ({
  apiVersion: 'crownlabs.polito.it/v1alpha2',
  kind: 'Instance',
  metadata: { name: 'inst', namespace: 'tenant-a' },
  spec: { 'template.crownlabs.polito.it/TemplateRef': { name: 'tpl', namespace: 'workspace-w' }, 'tenant.crownlabs.polito.it/TenantRef': { name: 'a' }, running: true, ...spec },
  ...(status ? { status } : {}),
});

const tenant = (spec: Record<string, unknown> = {}, status?: Record<string, unknown>): KubeObject => ({
  apiVersion: 'crownlabs.polito.it/v1alpha2',
  kind: 'Tenant',
  metadata: { name: 'a' },
  spec: { firstName: 'A', lastName: 'B', email: 'a@b.c', createSandbox: false, ...spec },
  ...(status ? { status } : {}),
});

const workspace = (cpu: string | number): KubeObject => ({
  apiVersion: 'crownlabs.polito.it/v1alpha1',
  kind: 'Workspace',
  metadata: { name: 'w' },
  spec: { prettyName: 'W', quota: { cpu, memory: '8Gi', instances: 2 } },
});

const spec = (o: KubeObject) => o.spec as Record<string, any>;

describe('level migration 2e8aeb9 → e62be9e', () => {
  it('Template spec.deleteAfter becomes spec.cleanup.deleteAfterCreation, the other cleanup durations never', () => {
    const m = migrateObject(template({ deleteAfter: '7d' }));
    expect(spec(m.after).deleteAfter).toBeUndefined();
    expect(spec(m.after).cleanup).toEqual({ deleteAfterCreation: '7d', stopAfterInactivity: 'never', deleteAfterInactivity: 'never' });
    expect(m.moves).toContainEqual({ from: 'spec.deleteAfter', to: 'spec.cleanup.deleteAfterCreation' });
    expect(m.problems).toEqual([]);
  });

  it('the input object is left as it was', () => {
    const before = template({ deleteAfter: '7d' });
    const copy = structuredClone(before);
    migrateObject(before);
    expect(before).toEqual(copy);
  });

  it('environment mode Standard is removed without a problem; Exam and Exercise are removed and each reported at its field', () => {
    const m = migrateObject(template({}, [env({ name: 'first', mode: 'Standard' }), env({ name: 'second', mode: 'Exam' }), env({ name: 'third', mode: 'Exercise' })]));
    for (const e of spec(m.after).environmentList) expect(e).not.toHaveProperty('mode');
    expect(m.problems.map((p) => [p.severity, p.field, p.kind, p.name])).toEqual([
      ['warning', 'spec.environmentList[1].mode', 'Template', 'workspace-w/tpl'],
      ['warning', 'spec.environmentList[2].mode', 'Template', 'workspace-w/tpl'],
    ]);
    expect(m.problems[0].message).toMatch(/"Exam" cannot be carried/);
    expect(m.problems[1].message).toMatch(/"Exercise" cannot be carried/);
  });

  it("an environment name that breaks e62be9e's pattern is an error at its field", () => {
    const m = migrateObject(template({}, [env({ name: 'ok-name' }), env({ name: 'a-name-far-too-long' }), env({ name: 'ab' }), env({ name: 'Upper' })]));
    expect(m.problems.filter((p) => p.severity === 'error').map((p) => p.field)).toEqual(['spec.environmentList[1].name', 'spec.environmentList[2].name', 'spec.environmentList[3].name']);
  });

  it('more than 10 environments is an error at spec.environmentList; 10 is fine', () => {
    const many = (n: number) => Array.from({ length: n }, (_, i) => env({ name: `env${i}x` }));
    expect(migrateObject(template({}, many(10))).problems).toEqual([]);
    const m = migrateObject(template({}, many(11)));
    expect(m.problems).toEqual([expect.objectContaining({ severity: 'error', field: 'spec.environmentList', message: expect.stringMatching(/^11 environments/) })]);
  });

  it('every Instance is annotated to keep the children it has (2e8aeb9 names, selectors, Services); one already annotated keeps its value', () => {
    const KEY = 'composer.crownlabs.polito.it/children-level';
    const m = migrateObject(instance());
    expect(m.after.metadata.annotations).toEqual({ [KEY]: '2e8aeb9' });
    expect(m.moves).toContainEqual({ to: `metadata.annotations.${KEY}`, note: '2e8aeb9: its children keep their names' });
    expect(m.problems).toEqual([]);
    const annotated = instance();
    annotated.metadata.annotations = { [KEY]: 'e62be9e', other: 'x' };
    const again = migrateObject(annotated);
    expect(again.after.metadata.annotations).toEqual({ [KEY]: 'e62be9e', other: 'x' });
    expect(again.moves.some((mv) => mv.to?.startsWith('metadata.annotations'))).toBe(false);
  });

  it('Instance customizationUrls.statusCheck becomes spec.statusCheckUrl', () => {
    const m = migrateObject(instance({ customizationUrls: { statusCheck: 'https://check' } }));
    expect(spec(m.after).customizationUrls).toBeUndefined();
    expect(spec(m.after).statusCheckUrl).toBe('https://check');
    expect(m.moves).toContainEqual({ from: 'spec.customizationUrls.statusCheck', to: 'spec.statusCheckUrl' });
  });

  it("Instance contentOrigin/contentDestination go to spec.contentUrls under the Template's first environment name", () => {
    const tpl = template({}, [env({ name: 'first' }), env({ name: 'second' })]);
    const inst = instance({ customizationUrls: { contentOrigin: 'https://o', contentDestination: '/data' } });
    const [, m] = migrateObjects([tpl, inst]);
    expect(spec(m.after).contentUrls).toEqual({ first: { origin: 'https://o', destination: '/data' } });
    expect(m.moves).toContainEqual({ from: 'spec.customizationUrls.contentOrigin', to: 'spec.contentUrls.first.origin' });
    expect(m.problems).toEqual([]);
  });

  it('content URLs whose Template is not in the input are reported, each at its field, and not carried', () => {
    const m = migrateObjects([instance({ customizationUrls: { contentOrigin: 'https://o', contentDestination: '/data' } })])[0];
    expect(spec(m.after).contentUrls).toBeUndefined();
    expect(m.problems.map((p) => [p.severity, p.field])).toEqual([
      ['warning', 'spec.customizationUrls.contentOrigin'],
      ['warning', 'spec.customizationUrls.contentDestination'],
    ]);
    expect(m.problems[0].message).toContain('workspace-w/tpl');
  });

  it('the Template is looked up in the Instance namespace when its reference has none', () => {
    const tpl = { ...template({}, [env({ name: 'here' })]), metadata: { name: 'tpl', namespace: 'tenant-a' } };
    const inst = instance({ 'template.crownlabs.polito.it/TemplateRef': { name: 'tpl' }, customizationUrls: { contentOrigin: 'https://o' } });
    expect(spec(migrateObjects([tpl, inst])[1].after).contentUrls).toEqual({ here: { origin: 'https://o' } });
  });

  it('Instance status ip, initialReadyTime and automation move to status.environments[0], with the phase', () => {
    const automation = { lastCheckTime: '2026-01-01T00:00:00Z', submissionTime: '2026-01-02T00:00:00Z' };
    const inst = instance({}, { phase: 'Ready', url: 'https://u', ip: '10.0.0.1', initialReadyTime: '42s', automation });
    const m = migrateObjects([template(), inst])[1];
    expect(m.after.status).toEqual({ phase: 'Ready', url: 'https://u', environments: [{ name: 'desktop', phase: 'Ready', ip: '10.0.0.1', initialReadyTime: '42s', automation }] });
    expect(m.moves).toContainEqual({ from: 'status.automation', to: 'status.environments[0].automation' });
  });

  it('Instance status without its Template: the per-environment fields are reported and dropped', () => {
    const m = migrateObject(instance({}, { phase: 'Ready', ip: '10.0.0.1' }));
    expect(m.after.status).toEqual({ phase: 'Ready' });
    expect(m.problems.map((p) => p.field)).toEqual(['status.ip']);
  });

  it('Tenant spec.quota becomes spec.personalWorkspace, always with a warning that the meaning differs', () => {
    const m = migrateObject(tenant({ quota: { cpu: '4', memory: '8Gi', instances: 3 } }));
    expect(spec(m.after).quota).toBeUndefined();
    expect(spec(m.after).personalWorkspace).toEqual({ cpu: 4, memory: '8Gi', instances: 3 });
    expect(m.problems).toEqual([expect.objectContaining({ severity: 'warning', field: 'spec.quota', kind: 'Tenant', name: 'a', message: expect.stringMatching(/replaced the sum.*added to that sum/) })]);
  });

  it('a Tenant without spec.quota gets no personal workspace', () => {
    const m = migrateObject(tenant());
    expect(spec(m.after)).not.toHaveProperty('personalWorkspace');
    expect(m.problems).toEqual([]);
  });

  it('a Tenant quota of 0 instances cannot be carried: an error', () => {
    const m = migrateObject(tenant({ quota: { cpu: 1, memory: '1Gi', instances: 0 } }));
    expect(m.problems.filter((p) => p.severity === 'error').map((p) => p.field)).toEqual(['spec.quota.instances']);
  });

  it('Tenant status is dropped (status.quota included): the e62be9e controller writes it', () => {
    const m = migrateObject(tenant({}, { ready: true, quota: { cpu: '1', memory: '1Gi', instances: 1 }, personalNamespace: { created: true } }));
    expect(m.after).not.toHaveProperty('status');
    expect(m.moves).toContainEqual({ from: 'status', note: 'written by the controller' });
  });

  it('Workspace quota cpu: a quantity becomes whole cores, a lost fraction is reported', () => {
    const exact = migrateObject(workspace('3'));
    expect(spec(exact.after).quota.cpu).toBe(3);
    expect(exact.problems).toEqual([]);
    const frac = migrateObject(workspace('2500m'));
    expect(spec(frac.after).quota.cpu).toBe(2);
    expect(frac.problems).toEqual([expect.objectContaining({ severity: 'warning', field: 'spec.quota.cpu', message: expect.stringContaining('floored to 2') })]);
    expect(spec(migrateObject(workspace('1.5')).after).quota.cpu).toBe(1);
    expect(spec(migrateObject(workspace(1000)).after).quota.cpu).toBe(1000);
  });

  it('Workspace quota cpu under one core is carried as 1, with a warning', () => {
    const m = migrateObject(workspace('500m'));
    expect(spec(m.after).quota.cpu).toBe(1);
    expect(m.problems[0].message).toMatch(/less than one core/);
  });

  it('an InstanceSnapshot phase outside e62be9e enum drops the status with a warning; a known phase stays', () => {
    const snap = (phase: string): KubeObject => ({ apiVersion: 'crownlabs.polito.it/v1alpha2', kind: 'InstanceSnapshot', metadata: { name: 's', namespace: 'n' }, spec: { instanceRef: { name: 'i' }, imageName: 'x' }, status: { phase } });
    expect(migrateObject(snap('Completed')).after.status).toEqual({ phase: 'Completed' });
    const m = migrateObject(snap('Weird'));
    expect(m.after).not.toHaveProperty('status');
    expect(m.problems.map((p) => p.field)).toEqual(['status.phase']);
  });

  it("memory under e62be9e's 1Gi minimum (a CEL rule of its CRDs) is an error at its field: environment, Workspace quota, Tenant quota", () => {
    expect(migrateObject(template({}, [env({ resources: { cpu: 1, reservedCPUPercentage: 50, memory: '1000M' } })])).problems.map((p) => [p.severity, p.field])).toEqual([
      ['error', 'spec.environmentList[0].resources.memory'],
    ]);
    expect(migrateObject(template()).problems).toEqual([]);
    const ws = workspace(2);
    (ws.spec as any).quota.memory = '512Mi';
    expect(migrateObject(ws).problems.map((p) => [p.severity, p.field])).toEqual([['error', 'spec.quota.memory']]);
    const t = migrateObject(tenant({ quota: { cpu: 1, memory: '1073741823', instances: 1 } }));
    expect(t.problems.filter((p) => p.severity === 'error').map((p) => p.field)).toEqual(['spec.quota.memory']);
    expect(migrateObject(tenant({ quota: { cpu: 1, memory: '1Gi', instances: 1 } })).problems.filter((p) => p.severity === 'error')).toEqual([]);
  });

  it('kinds that did not change come back equal, with no moves', () => {
    const list: KubeObject = { apiVersion: 'crownlabs.polito.it/v1alpha1', kind: 'ImageList', metadata: { name: 'l' }, spec: { registryName: 'r', images: [] } };
    const m = migrateObject(list);
    expect(m.after).toEqual(list);
    expect(m.moves).toEqual([]);
  });
});

describe('the check of a migrated object at e62be9e', () => {
  it('refuses what the e62be9e schema refuses, with the file, document and field, and does not write defaults into the object', async () => {
    const { e62be9eProblems } = await import('../../../src/migrate/check.ts');
    const after = migrateObject(template({ deleteAfter: '7d' })).after;
    const copy = structuredClone(after);
    expect(e62be9eProblems(after, { file: 'lab.yaml', document: 2, strict: true })).toEqual([]);
    expect(after).toEqual(copy);
    // What the mapping would leave behind if it forgot a field: a 2e8aeb9-only one.
    (after.spec as any).deleteAfter = '7d';
    expect(e62be9eProblems(after, { file: 'lab.yaml', document: 2, strict: true })).toEqual([
      expect.objectContaining({ severity: 'error', file: 'lab.yaml', document: 2, kind: 'Template', field: 'spec.deleteAfter', message: 'after migration, at e62be9e: unknown field' }),
    ]);
  });
});
