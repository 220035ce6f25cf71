// The resource health checks `crownlabs manifests --argocd-cm` ships, run by Argo CD itself
// (`argocd admin settings resource-overrides health`: the controller's Lua engine and override
// lookup) on the statuses KubeVirt, CDI, Argo CD and the controller write. The live sync test
// (argocd-sync.test.ts) shows the controller loads them; this one covers every mapping.
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { crownlabs } from '../support/cli.ts';
import { argocdBinary } from './argocd-support.ts';

const execFileAsync = promisify(execFile);
const work = mkdtempSync(path.join(os.tmpdir(), 'argocd-health-'));
let bin = '';

beforeAll(async () => {
  bin = await argocdBinary();
  const cm = crownlabs(['manifests', '--argocd-cm']);
  expect(cm.code).toBe(0);
  writeFileSync(path.join(work, 'argocd-cm.yaml'), cm.stdout.replace(/^---\n/, ''));
}, 1_800_000);
afterAll(() => rmSync(work, { recursive: true, force: true }));

let n = 0;
/** Argo CD's verdict on `obj` with the shipped argocd-cm. */
async function health(obj: object): Promise<{ status: string; message: string }> {
  const file = path.join(work, `obj-${n++}.yaml`);
  // JSON, not YAML: Argo CD reads YAML 1.1, where a bare `Off` (an Instance phase) is a boolean.
  writeFileSync(file, JSON.stringify(obj));
  const { stdout } = await execFileAsync(bin, ['admin', 'settings', 'resource-overrides', 'health', file, '--argocd-cm-path', path.join(work, 'argocd-cm.yaml')], {
    env: { ...process.env, ARGOCD_BINARY_NAME: 'argocd', HOME: work },
  });
  const status = /^STATUS: (.*)$/m.exec(stdout)?.[1];
  if (!status) throw new Error(`no health in: ${stdout}`);
  return { status, message: /^MESSAGE: (.*)$/m.exec(stdout)?.[1] ?? '' };
}

type Case = [name: string, obj: object, status: string, message?: string | RegExp];

async function check(cases: Case[]): Promise<void> {
  const got = await Promise.all(cases.map(([, obj]) => health(obj)));
  cases.forEach(([name, , status, message], i) => {
    expect(got[i].status, name).toBe(status);
    if (message !== undefined) expect(got[i].message, name).toMatch(message);
  });
}

const meta = { name: 'x', namespace: 'tenant-x' };
const instance = (running: boolean, status?: object) => ({ apiVersion: 'crownlabs.polito.it/v1alpha2', kind: 'Instance', metadata: meta, spec: { running }, ...(status ? { status } : {}) });
const vm = (spec: object, status?: object) => ({ apiVersion: 'kubevirt.io/v1', kind: 'VirtualMachine', metadata: meta, spec, ...(status ? { status } : {}) });
const vmi = (status?: object, metadata: object = {}) => ({ apiVersion: 'kubevirt.io/v1', kind: 'VirtualMachineInstance', metadata: { ...meta, ...metadata }, spec: {}, ...(status ? { status } : {}) });
const dv = (status?: object) => ({ apiVersion: 'cdi.kubevirt.io/v1beta1', kind: 'DataVolume', metadata: meta, spec: {}, ...(status ? { status } : {}) });
const app = (status?: object) => ({ apiVersion: 'argoproj.io/v1alpha1', kind: 'Application', metadata: { name: 'a', namespace: 'argocd' }, spec: {}, ...(status ? { status } : {}) });
const cond = (type: string, status: string, extra: object = {}) => ({ type, status, lastProbeTime: null, lastTransitionTime: '2026-01-01T00:00:00Z', ...extra });

describe('health checks shipped in argocd-cm, run by Argo CD', () => {
  it('Instance: the phase the controller writes', () =>
    check([
      ['Ready', instance(true, { phase: 'Ready', url: 'https://crownlabs.example/instance/u/' }), 'Healthy', 'Ready at https://crownlabs.example/instance/u/'],
      ['stopped on purpose', instance(false, { phase: 'Off' }), 'Healthy', 'Off (spec.running is false)'],
      ['Off while it should run', instance(true, { phase: 'Off' }), 'Progressing'],
      ['no status yet', instance(true), 'Progressing', 'Waiting for the controller'],
      ['Starting', instance(true, { phase: 'Starting' }), 'Progressing', 'Starting'],
      ['Importing', instance(true, { phase: 'Importing' }), 'Progressing', 'Importing'],
      ['Running (not ready)', instance(true, { phase: 'Running' }), 'Progressing', 'Running'],
      ['Stopping', instance(false, { phase: 'Stopping' }), 'Progressing'],
      ['quota', instance(true, { phase: 'ResourceQuotaExceeded' }), 'Degraded', 'ResourceQuotaExceeded'],
      ['Failed', instance(true, { phase: 'Failed' }), 'Degraded', 'Failed'],
      ['CreationLoopBackoff', instance(true, { phase: 'CreationLoopBackoff' }), 'Degraded', 'CreationLoopBackoff'],
    ]));

  it('VirtualMachine: printableStatus and ready, a VM stopped on purpose is Healthy', () =>
    check([
      ['no KubeVirt status', vm({ running: false }), 'Progressing', 'Waiting for KubeVirt'],
      ['stopped as asked', vm({ running: false }, { printableStatus: 'Stopped', conditions: [cond('Ready', 'False', { reason: 'VMINotExists', message: 'VMI does not exist' })] }), 'Healthy', /^Stopped/],
      ['runStrategy Halted', vm({ runStrategy: 'Halted' }, { printableStatus: 'Stopped' }), 'Healthy'],
      ['stopped, asked to run', vm({ running: true }, { printableStatus: 'Stopped' }), 'Progressing'],
      ['Provisioning', vm({ running: true }, { printableStatus: 'Provisioning' }), 'Progressing', 'Provisioning'],
      ['Starting', vm({ running: true }, { printableStatus: 'Starting' }), 'Progressing', 'Starting'],
      ['running, not ready', vm({ running: true }, { printableStatus: 'Running', created: true }), 'Progressing'],
      ['ready', vm({ running: true }, { printableStatus: 'Running', created: true, ready: true, conditions: [cond('Ready', 'True')] }), 'Healthy', 'Running'],
      ['unschedulable', vm({ running: true }, { printableStatus: 'ErrorUnschedulable' }), 'Degraded', 'ErrorUnschedulable'],
      ['image pull', vm({ running: true }, { printableStatus: 'ErrImagePull' }), 'Degraded'],
      ['DataVolume error', vm({ running: true }, { printableStatus: 'DataVolumeError' }), 'Degraded'],
      ['failure condition', vm({ running: true }, { printableStatus: 'Starting', conditions: [cond('Failure', 'True', { reason: 'FailedCreate', message: 'exceeded quota: crownlabs-resource-quota' })] }), 'Degraded', /exceeded quota/],
      ['paused', vm({ running: true }, { printableStatus: 'Paused', conditions: [cond('Paused', 'True')] }), 'Suspended'],
    ]));

  it('VirtualMachineInstance: booting is Progressing, ended or refused is Degraded', () =>
    check([
      ['no status', vmi(), 'Progressing', 'Waiting for KubeVirt'],
      ['Scheduling', vmi({ phase: 'Scheduling' }), 'Progressing', 'Scheduling'],
      ['Scheduled', vmi({ phase: 'Scheduled', nodeName: 'n1' }), 'Progressing', 'Scheduled'],
      // Argo CD's built-in check says Degraded while the readiness probe has not passed yet.
      ['booting (probe not passed)', vmi({ phase: 'Running', conditions: [cond('Ready', 'False', { reason: 'GuestNotReady' })] }), 'Progressing', 'Running, not ready yet'],
      ['ready', vmi({ phase: 'Running', conditions: [cond('Ready', 'True')], interfaces: [{ ipAddress: '10.0.0.5' }] }), 'Healthy', 'Running'],
      ['quota refused the launcher pod', vmi({ phase: 'Pending', conditions: [cond('Synchronized', 'False', { reason: 'FailedCreate', message: 'pods "virt-launcher-x" is forbidden: exceeded quota: crownlabs-resource-quota' })] }), 'Degraded', /^FailedCreate: .*exceeded quota/],
      ['Failed', vmi({ phase: 'Failed' }), 'Degraded'],
      ['Succeeded (shut down)', vmi({ phase: 'Succeeded' }), 'Degraded'],
      // Argo CD itself answers for an object being deleted, before any script.
      ['being deleted', vmi({ phase: 'Running' }, { deletionTimestamp: '2026-01-01T00:00:00Z', finalizers: ['kubevirt.io/foregroundDeleteVirtualMachine'] }), 'Progressing'],
      ['paused', vmi({ phase: 'Running', conditions: [cond('Paused', 'True')] }), 'Suspended'],
    ]));

  it('DataVolume: the import of a persistent VM disk', () =>
    check([
      ['no status', dv(), 'Progressing'],
      ['importing', dv({ phase: 'ImportInProgress', progress: '42.0%' }), 'Progressing', 'ImportInProgress'],
      ['done', dv({ phase: 'Succeeded', progress: '100.0%' }), 'Healthy'],
      ['waits for its VM', dv({ phase: 'WaitForFirstConsumer' }), 'Healthy'],
      ['failed', dv({ phase: 'Failed' }), 'Degraded'],
      ['import error', dv({ phase: 'ImportInProgress', conditions: [cond('Running', 'False', { reason: 'Error', message: 'Unable to connect to http data source' })] }), 'Degraded', /Unable to connect/],
    ]));

  it('HTTPRoute: Healthy only once every parent Gateway accepted it and resolved its backends, for its current generation', () => {
    const route = (generation: number, parents?: object[]) => ({ apiVersion: 'gateway.networking.k8s.io/v1', kind: 'HTTPRoute', metadata: { ...meta, generation }, spec: {}, ...(parents ? { status: { parents } } : {}) });
    const parent = (...conditions: object[]) => ({ parentRef: { name: 'gw', namespace: 'gateways' }, controllerName: 'example.org/gateway', conditions });
    const at = (type: string, status: string, generation: number, extra: object = {}) => ({ type, status, reason: type, observedGeneration: generation, lastTransitionTime: '2026-01-01T00:00:00Z', ...extra });
    return check([
      ['no status', route(1), 'Progressing', /accept/],
      ['no parents yet', route(1, []), 'Progressing'],
      ['accepted and resolved', route(2, [parent(at('Accepted', 'True', 2), at('ResolvedRefs', 'True', 2))]), 'Healthy'],
      ['accepted, backends not resolved yet', route(2, [parent(at('Accepted', 'True', 2))]), 'Progressing', /ResolvedRefs/],
      ['refused', route(2, [parent(at('Accepted', 'False', 2, { reason: 'NotAllowedByListeners', message: 'no listener matches' }), at('ResolvedRefs', 'True', 2))]), 'Degraded', /no listener matches/],
      ['a backend missing', route(2, [parent(at('Accepted', 'True', 2), at('ResolvedRefs', 'False', 2, { reason: 'BackendNotFound', message: 'Service x not found' }))]), 'Degraded', /Service x not found/],
      ['accepted for an older spec', route(3, [parent(at('Accepted', 'True', 2), at('ResolvedRefs', 'True', 2))]), 'Progressing'],
      ['one of two Gateways not yet', route(1, [parent(at('Accepted', 'True', 1), at('ResolvedRefs', 'True', 1)), { parentRef: { name: 'other' }, conditions: [] }]), 'Progressing', /other/],
    ]);
  });

  it('Application: Healthy once Synced (the root waits for that), Degraded when its sync failed', () =>
    check([
      ['new', app(), 'Progressing'],
      ['synced, workloads starting', app({ sync: { status: 'Synced' }, health: { status: 'Progressing' } }), 'Healthy', 'Synced'],
      ['syncing', app({ sync: { status: 'OutOfSync' }, operationState: { phase: 'Running', message: 'waiting for healthy state of /Namespace/x' } }), 'Progressing', /waiting/],
      ['sync failed', app({ sync: { status: 'OutOfSync' }, operationState: { phase: 'Failed', message: 'one or more objects failed to apply' } }), 'Degraded', /failed to apply/],
      ['manifests fail', app({ sync: { status: 'Unknown' }, conditions: [{ type: 'ComparisonError', message: 'kustomize build failed' }] }), 'Degraded', /kustomize/],
    ]));
});
