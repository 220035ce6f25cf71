import { describe, expect, it } from 'vitest';
import { changedPaths, kubectlFileName, maskSecrets, pruneReason, restartReason, summaryLine, takeoverManagers, withoutManagedFields, type Obj, type ObjectChange } from '../../../src/controller/object-diff.ts';

const deployment = (env: string, replicas = 1): Obj => ({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name: 'd', namespace: 'ns', resourceVersion: '1', generation: 1, managedFields: [{ manager: 'x' }] },
  spec: { replicas, template: { spec: { containers: [{ name: 'c', env: [{ name: 'A', value: env }] }] } } },
});

describe('kubectlFileName', () => {
  it('names files as kubectl diff does', () => {
    expect(kubectlFileName(deployment('1'))).toBe('apps.v1.Deployment.ns.d');
    expect(kubectlFileName({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'x' } })).toBe('v1.Namespace..x');
    expect(kubectlFileName({ apiVersion: 'v1', kind: 'Service', metadata: { name: 's', namespace: 'n' } })).toBe('v1.Service.n.s');
  });
});

describe('changedPaths', () => {
  it('lists leaf paths in kubectl style, ignoring bookkeeping metadata', () => {
    const a = deployment('1');
    const b = { ...deployment('2', 3), metadata: { ...deployment('2').metadata, resourceVersion: '2', generation: 2, labels: { 'app.kubernetes.io/name': 'x' } } };
    expect(changedPaths(a, b)).toEqual(['metadata.labels["app.kubernetes.io/name"]', 'spec.replicas', 'spec.template.spec.containers[0].env[0].value']);
    // Annotations added where there were none: named key by key, as labels.
    const annotated = { ...a, metadata: { ...a.metadata, annotations: { 'composer.crownlabs.polito.it/template-spec': '{}' } } };
    expect(changedPaths(a, annotated)).toEqual(['metadata.annotations["composer.crownlabs.polito.it/template-spec"]']);
    expect(changedPaths(annotated, a)).toEqual(['metadata.annotations["composer.crownlabs.polito.it/template-spec"]']);
    const c = structuredClone(b);
    (c.metadata.labels as Record<string, string>)['app.kubernetes.io/name'] = 'y';
    expect(changedPaths(b, c)).toEqual(['metadata.labels["app.kubernetes.io/name"]']);
  });

  it('does not count a status that moved between the read and the dry-run answer (others write it)', () => {
    const a = { ...deployment('1'), status: { readyReplicas: 0 } };
    const b = { ...deployment('1'), status: { readyReplicas: 1, conditions: [{ type: 'Available' }] } };
    expect(changedPaths(a, b)).toEqual([]);
    expect(changedPaths(a, { ...deployment('1', 3), status: b.status })).toEqual(['spec.replicas']);
  });

  it('reports list entries added or removed, and nothing for equal objects', () => {
    const a = deployment('1');
    const b = structuredClone(a);
    (b.spec as any).template.spec.containers.push({ name: 'd' });
    expect(changedPaths(a, b)).toEqual(['spec.template.spec.containers[1]']);
    expect(changedPaths(a, structuredClone(a))).toEqual([]);
  });
});

describe('restartReason', () => {
  it('flags a Deployment pod template change and a scale down (pods deleted), not a scale up', () => {
    expect(restartReason(deployment('1'), deployment('2'))).toMatch(/^restarts the workload/);
    expect(restartReason(deployment('1'), deployment('1', 2))).toBeUndefined();
    expect(restartReason(deployment('1', 1), deployment('1', 0))).toBe('deletes every pod (replicas 1 → 0): their emptyDir data is lost');
    expect(restartReason(deployment('1', 3), deployment('1', 2))).toBe('deletes 1 of its 3 pods (replicas 3 → 2): their emptyDir data is lost');
    // Left out, replicas are the server's default, 1.
    const unset = deployment('1');
    delete (unset.spec as { replicas?: number }).replicas;
    expect(restartReason(unset, deployment('1', 0))).toMatch(/^deletes every pod \(replicas 1 → 0\)/);
    expect(restartReason(deployment('1', 1), deployment('2', 0))).toBe('deletes every pod (replicas 1 → 0): their emptyDir data is lost; restarts the workload (the pod template changes: its pods are replaced)');
  });

  it('flags a VirtualMachine stopped or whose template changes, and any VirtualMachineInstance spec change', () => {
    const vm = (cpu: number, running: boolean): Obj => ({ apiVersion: 'kubevirt.io/v1', kind: 'VirtualMachine', metadata: { name: 'v' }, spec: { running, template: { spec: { domain: { cpu: { cores: cpu } } } } } });
    expect(restartReason(vm(1, true), vm(2, true))).toMatch(/^restarts the workload/);
    expect(restartReason(vm(1, true), vm(1, false))).toBe('stops the VM (KubeVirt deletes its VirtualMachineInstance)');
    expect(restartReason(vm(1, false), vm(1, true))).toBeUndefined();
    const byStrategy = (runStrategy: string): Obj => ({ apiVersion: 'kubevirt.io/v1', kind: 'VirtualMachine', metadata: { name: 'v' }, spec: { runStrategy, template: { spec: { domain: { cpu: { cores: 1 } } } } } });
    expect(restartReason(byStrategy('Always'), vm(1, false))).toMatch(/^stops the VM/);
    expect(restartReason(byStrategy('Halted'), vm(1, false))).toBeUndefined();
    const vmi = (cpu: number, label: string): Obj => ({ apiVersion: 'kubevirt.io/v1', kind: 'VirtualMachineInstance', metadata: { name: 'v', labels: { l: label } }, spec: { domain: { cpu: { cores: cpu } } } });
    expect(restartReason(vmi(1, 'a'), vmi(2, 'a'))).toMatch(/^restarts the workload/);
    expect(restartReason(vmi(1, 'a'), vmi(1, 'b'))).toBeUndefined();
  });

  it('does not flag other kinds, creates or prunes', () => {
    const svc = (port: number): Obj => ({ apiVersion: 'v1', kind: 'Service', metadata: { name: 's' }, spec: { ports: [{ port }] } });
    expect(restartReason(svc(1), svc(2))).toBeUndefined();
    expect(restartReason(undefined, deployment('1'))).toBeUndefined();
    expect(pruneReason('Deployment')).toBe('deletes the workload');
    expect(pruneReason('VirtualMachineInstance')).toBe('deletes the workload');
    expect(pruneReason('Pod')).toBe('deletes the workload');
    expect(pruneReason('PersistentVolumeClaim')).toBe('deletes its data');
    expect(pruneReason('Service')).toBeUndefined();
  });
});

describe('takeoverManagers', () => {
  const withManagers = (entries: object[]): Obj => ({ ...deployment('1'), metadata: { name: 'd', managedFields: entries } });
  it('names the managers that wrote the object through Update when crownlabs-composer never applied it', () => {
    expect(takeoverManagers(withManagers([{ manager: 'instance-operator', operation: 'Update' }, { manager: 'kube-controller-manager', operation: 'Update', subresource: 'status' }]))).toEqual(['instance-operator']);
  });
  it('is empty once crownlabs-composer applied it, or when only Apply managers are there', () => {
    expect(takeoverManagers(withManagers([{ manager: 'crownlabs-composer', operation: 'Apply' }, { manager: 'kube-controller-manager', operation: 'Update' }]))).toEqual([]);
    expect(takeoverManagers(withManagers([{ manager: 'kubectl', operation: 'Apply' }]))).toEqual([]);
    expect(takeoverManagers(undefined)).toEqual([]);
  });
});

describe('maskSecrets', () => {
  const secret = (data: Record<string, string>, lastApplied?: string): Obj => ({
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: 's', ...(lastApplied ? { annotations: { 'kubectl.kubernetes.io/last-applied-configuration': lastApplied, other: 'kept' } } : {}) },
    data,
  });
  it('hides every value and marks the changed ones, as kubectl diff does', () => {
    const [a, b] = maskSecrets(secret({ same: 'eA==', changed: 'b2xk', gone: 'Zw==' }), secret({ same: 'eA==', changed: 'bmV3', added: 'YQ==' }));
    expect(a!.data).toEqual({ same: '***', changed: '*** (before)', gone: '***' });
    expect(b!.data).toEqual({ same: '***', changed: '*** (after)', added: '***' });
  });
  it('masks the last-applied annotation (it holds the values in clear) and leaves the inputs alone', () => {
    const live = secret({ k: 'c2VjcmV0' }, '{"stringData":{"k":"secret"}}');
    const [a, b] = maskSecrets(live, undefined);
    expect(JSON.stringify(a)).not.toContain('secret"');
    expect(a!.metadata.annotations).toEqual({ 'kubectl.kubernetes.io/last-applied-configuration': '***', other: 'kept' });
    expect(b).toBeUndefined();
    expect(live.data).toEqual({ k: 'c2VjcmV0' });
  });
  it('does not take prototype keys for data keys', () => {
    const [a, b] = maskSecrets(secret({ constructor: 'eA==' }), secret({ toString: 'eQ==' }));
    expect(a!.data).toEqual({ constructor: '***' });
    expect(b!.data).toEqual({ toString: '***' });
  });
  it('leaves other kinds as they are', () => {
    const d = deployment('1');
    expect(maskSecrets(d, d)[0]).toBe(d);
  });
});

describe('withoutManagedFields and summaryLine', () => {
  it('drops managedFields from a copy', () => {
    const d = deployment('1');
    expect(withoutManagedFields(d).metadata.managedFields).toBeUndefined();
    expect(d.metadata.managedFields).toBeDefined();
  });
  it('counts objects changed, created and pruned by kind', () => {
    const c = (action: ObjectChange['action'], kind: string, extra: Partial<ObjectChange> = {}): ObjectChange => ({ id: `${kind}/x`, kind, action, paths: [], takeover: [], ...extra });
    const line = summaryLine([c('change', 'Service'), c('change', 'Deployment', { danger: 'x', takeover: ['op'] }), c('change', 'Deployment'), c('create', 'Secret'), c('prune', 'PersistentVolumeClaim', { danger: 'y' })], 1);
    expect(line).toBe('3 changed (2 Deployment, 1 Service), 1 created (1 Secret), 1 pruned (1 PersistentVolumeClaim); 2 dangerous, 1 taken over, 1 error');
    expect(summaryLine([], 0)).toBe('0 changed, 0 created, 0 pruned; 0 dangerous, 0 taken over, 0 errors');
  });
});
