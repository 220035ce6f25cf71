// The patches the Workspace reconciler writes at e62be9e (docs/behaviour.md §16.4): the Workspace's
// autoenroll label, and its candidates resolved once it takes no approvals.
import { describe, expect, it } from 'vitest';
import type { Tenant, Workspace } from '../../../src/inputs/types.ts';
import { candidateEnrolmentPatch, workspaceAutoEnrollPatch } from '../../../src/controller/parent-patches.ts';

const ws = (autoEnroll?: Workspace['spec']['autoEnroll']) =>
  ({ apiVersion: 'crownlabs.polito.it/v1alpha1', kind: 'Workspace', metadata: { name: 'tea' }, spec: { prettyName: 'Tea', quota: { cpu: 1, memory: '1Gi', instances: 1 }, ...(autoEnroll === undefined ? {} : { autoEnroll }) } }) as Workspace;

describe('§16.4 the autoenroll label of a Workspace', () => {
  const table: [Workspace['spec']['autoEnroll'], string][] = [
    ['immediate', 'immediate'],
    ['withApproval', 'withApproval'],
    ['', 'disabled'],
    [undefined, 'disabled'],
  ];
  for (const [autoEnroll, label] of table) {
    it(`autoEnroll ${JSON.stringify(autoEnroll)} → ${label}; nothing when already so`, () => {
      expect(workspaceAutoEnrollPatch(ws(autoEnroll), { other: 'x' }, 'e62be9e')).toEqual({ metadata: { labels: { 'crownlabs.polito.it/autoenroll': label } } });
      expect(workspaceAutoEnrollPatch(ws(autoEnroll), { 'crownlabs.polito.it/autoenroll': label }, 'e62be9e')).toBeUndefined();
    });
  }
  it('writes no such label at 2e8aeb9', () => {
    expect(workspaceAutoEnrollPatch(ws(), {}, '2e8aeb9')).toBeUndefined();
  });
});

describe('§16.4 candidates of a Workspace that takes no approvals', () => {
  const tenant = (label: string | undefined) =>
    ({
      metadata: { name: 'ada', resourceVersion: '7', labels: label ? { 'crownlabs.polito.it/workspace-tea': label } : {} },
      spec: { workspaces: [{ name: 'coffee', role: 'user' }, { name: 'tea', role: 'candidate' }] },
    }) as unknown as Tenant;
  it('immediate: the candidate becomes a user (last in the list)', () => {
    expect(candidateEnrolmentPatch(tenant('candidate'), ws('immediate'))).toEqual({
      metadata: { resourceVersion: '7' },
      spec: { workspaces: [{ name: 'coffee', role: 'user' }, { name: 'tea', role: 'user' }] },
    });
  });
  it('disabled: the candidate is removed', () => {
    expect(candidateEnrolmentPatch(tenant('candidate'), ws(''))?.spec).toEqual({ workspaces: [{ name: 'coffee', role: 'user' }] });
    expect(candidateEnrolmentPatch(tenant('candidate'), ws())?.spec).toEqual({ workspaces: [{ name: 'coffee', role: 'user' }] });
  });
  it('withApproval keeps candidates; a Tenant not labelled candidate is left alone', () => {
    expect(candidateEnrolmentPatch(tenant('candidate'), ws('withApproval'))).toBeUndefined();
    expect(candidateEnrolmentPatch(tenant('user'), ws('immediate'))).toBeUndefined();
    expect(candidateEnrolmentPatch(tenant(undefined), ws(''))).toBeUndefined();
  });
});
