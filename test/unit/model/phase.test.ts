import { describe, expect, it } from 'vitest';
import { aggregatePhase, deploymentPhase, virtualMachineInstancePhase, virtualMachinePhase } from '../../../src/model/phase.ts';

const quotaVmi = { status: { phase: 'Pending', conditions: [{ type: 'Synchronized', status: 'False', reason: 'FailedCreate', message: 'pods "x" is forbidden: exceeded quota: q' }] } };

describe('§7.4 persistent VM phase from printableStatus', () => {
  it.each([
    ['Starting', undefined, 'Starting'],
    ['Starting', quotaVmi, 'ResourceQuotaExceeded'],
    ['Provisioning', undefined, 'Importing'],
    ['Stopping', undefined, 'Stopping'],
    ['Terminating', undefined, 'Stopping'],
    ['Stopped', undefined, 'Off'],
    ['WaitingForVolumeBinding', undefined, ''],
  ])('%s → %s', (printableStatus, vmi, phase) => {
    expect(virtualMachinePhase({ status: { printableStatus } }, vmi)).toBe(phase);
  });
  it('Running is Ready only when the VM is ready', () => {
    expect(virtualMachinePhase({ status: { printableStatus: 'Running', ready: true } }, undefined)).toBe('Ready');
    expect(virtualMachinePhase({ status: { printableStatus: 'Running', ready: false } }, undefined)).toBe('Running');
  });
});

describe('§7.4 ephemeral VM phase from the VMI', () => {
  it.each([
    ['Pending', 'Starting'],
    ['Scheduling', 'Starting'],
    ['Scheduled', 'Starting'],
    ['Unknown', 'Failed'],
    ['Failed', 'Failed'],
    ['Succeeded', 'Failed'],
    ['Whatever', ''],
  ])('%s → %s', (phase, expected) => {
    expect(virtualMachineInstancePhase({ status: { phase } }, true)).toBe(expected);
  });
  it('quota, deletion, readiness and stopped cases', () => {
    expect(virtualMachineInstancePhase(quotaVmi, true)).toBe('ResourceQuotaExceeded');
    expect(virtualMachineInstancePhase({ metadata: { deletionTimestamp: 'now' }, status: { phase: 'Running' } }, true)).toBe('Stopping');
    expect(virtualMachineInstancePhase({ status: { phase: 'Running', conditions: [{ type: 'Ready', status: 'True' }] } }, true)).toBe('Ready');
    expect(virtualMachineInstancePhase({ status: { phase: 'Running' } }, true)).toBe('Running');
    expect(virtualMachineInstancePhase(undefined, false)).toBe('Off');
  });
});

describe('§7.5 container phase from the Deployment', () => {
  it('maps replicas and conditions', () => {
    expect(deploymentPhase({ spec: { replicas: 0 } }, false, true)).toBe('Off');
    expect(deploymentPhase({ spec: { replicas: 1 }, status: { readyReplicas: 1 } }, true, false)).toBe('Ready');
    expect(deploymentPhase({ spec: { replicas: 1 }, status: { readyReplicas: 0 } }, true, false)).toBe('Starting');
    expect(
      deploymentPhase({ spec: { replicas: 1 }, status: { conditions: [{ type: 'ReplicaFailure', status: 'True', reason: 'FailedCreate', message: 'exceeded quota: q' }] } }, true, false),
    ).toBe('ResourceQuotaExceeded');
    expect(deploymentPhase({ metadata: { deletionTimestamp: 'now' }, spec: { replicas: 1 } }, true, false)).toBe('Stopping');
    expect(deploymentPhase({ spec: { replicas: 1 }, status: { readyReplicas: 1 } }, false, false)).toBe('Off');
  });
});

describe('Decision 4: one phase for several environments', () => {
  it('is the least advanced one', () => {
    expect(aggregatePhase(['Ready', 'Starting'])).toBe('Starting');
    expect(aggregatePhase(['Ready', 'Ready'])).toBe('Ready');
    expect(aggregatePhase(['Off', 'Off'])).toBe('Off');
    expect(aggregatePhase(['Failed', 'Ready'])).toBe('Failed');
    expect(aggregatePhase(['Ready'])).toBe('Ready');
  });
});
