import { describe, expect, it } from 'vitest';
import { environmentMounts, heldBy, mountersMessage, sharedVolumeMirrorName, sharedVolumeMounters, sharedVolumeState, shrinks, templateMounts, type MirrorClaim, type SharedVolumeObservation } from '../../../src/model/shared-volume.ts';
import type { Template } from '../../../src/inputs/types.ts';

const sv = (size: string) => ({ spec: { prettyName: 'v', size } });
const bound: SharedVolumeObservation = { claimSize: '1Gi', claimPhase: 'Bound', volumeName: 'pv-1', provisioned: false };

describe('SharedVolume phase', () => {
  it('is Pending while the claim is missing or not Bound', () => {
    expect(sharedVolumeState(sv('1Gi'), { provisioned: false }).phase).toBe('Pending');
    expect(sharedVolumeState(sv('1Gi'), { claimSize: '1Gi', claimPhase: 'Pending', provisioned: false }).phase).toBe('Pending');
    // A Job that already succeeded does not make an unbound claim usable.
    expect(sharedVolumeState(sv('1Gi'), { claimSize: '1Gi', claimPhase: 'Pending', provisioned: false, job: { succeeded: true, failed: false } }).phase).toBe('Pending');
  });

  it('is Provisioning once Bound, with the PV named, until the Job succeeded', () => {
    expect(sharedVolumeState(sv('1Gi'), bound)).toEqual({ phase: 'Provisioning', pvName: 'pv-1', protect: false, markProvisioned: false });
    expect(sharedVolumeState(sv('1Gi'), { ...bound, job: { succeeded: false, failed: false } }).phase).toBe('Provisioning');
  });

  it('is Ready and protected when the Job succeeded, which labels the claim once', () => {
    expect(sharedVolumeState(sv('1Gi'), { ...bound, job: { succeeded: true, failed: false } })).toEqual({ phase: 'Ready', pvName: 'pv-1', protect: true, markProvisioned: true });
    // A claim already labelled (by us, or by upstream's operator before the switch) needs no Job.
    expect(sharedVolumeState(sv('1Gi'), { ...bound, provisioned: true })).toEqual({ phase: 'Ready', pvName: 'pv-1', protect: true, markProvisioned: false });
  });

  it('is Error when the Job failed', () => {
    const s = sharedVolumeState(sv('1Gi'), { ...bound, job: { succeeded: false, failed: true } });
    expect(s).toMatchObject({ phase: 'Error', protect: false, problem: { reason: 'ProvisioningFailed' } });
  });

  it('is Error when the size is below the claim, in any unit; equal or larger sizes are fine', () => {
    expect(shrinks(sv('512Mi').spec, '1Gi')).toBe(true);
    expect(shrinks(sv('1024Mi').spec, '1Gi')).toBe(false);
    expect(shrinks(sv('2G').spec, '1Gi')).toBe(false);
    expect(shrinks(sv('1G').spec, '1Gi')).toBe(true);
    expect(shrinks(sv('1Gi').spec, undefined)).toBe(false);
    const s = sharedVolumeState(sv('512Mi'), { ...bound, provisioned: true });
    expect(s).toMatchObject({ phase: 'Error', protect: false, problem: { reason: 'InvalidSize', message: "size 512Mi is smaller than the volume's 1Gi: a SharedVolume only grows" } });
  });
});

const tmpl = (ns: string, name: string, mounts: { name: string; namespace?: string }[][]): Pick<Template, 'metadata' | 'spec'> =>
  ({
    metadata: { name, namespace: ns },
    spec: { environmentList: mounts.map((m, i) => ({ name: `e${i}`, sharedVolumeMounts: m.map((ref) => ({ sharedVolume: ref, mountPath: '/m', readOnly: true })) })) },
  }) as unknown as Pick<Template, 'metadata' | 'spec'>;
const mirror = (ns: string, instance: string, origin: { namespace?: string; name?: string; kind?: string }): MirrorClaim => ({
  metadata: { namespace: ns, ownerReferences: [{ kind: 'Instance', name: instance }] },
  spec: { dataSourceRef: { kind: 'PersistentVolumeClaim', ...origin } },
});

describe('what holds a SharedVolume', () => {
  const volume = { metadata: { name: 'lemon', namespace: 'workspace-tea' } };

  it('a mount without a namespace names a volume of the Template\'s namespace; each volume once', () => {
    expect(templateMounts(tmpl('workspace-tea', 't', [[{ name: 'lemon' }], [{ name: 'lemon', namespace: 'workspace-tea' }, { name: 'lime', namespace: 'workspace-x' }]]))).toEqual(['workspace-tea/lemon', 'workspace-x/lime']);
  });

  it('a stored Template missing its lists mounts nothing', () => {
    expect(templateMounts({ metadata: { name: 't', namespace: 'ns' }, spec: {} } as unknown as Template)).toEqual([]);
    expect(templateMounts({ metadata: { name: 't', namespace: 'ns' }, spec: { environmentList: [{ sharedVolumeMounts: [{}] }] } } as unknown as Template)).toEqual([]);
  });

  it('the Templates mounting it, in any environment, and the Instances with a mirror claim of it; not a volume of the same name elsewhere', () => {
    const templates = [
      tmpl('workspace-tea', 'reader', [[], [{ name: 'lemon' }]]),
      tmpl('workspace-coffee', 'elsewhere', [[{ name: 'lemon' }]]),
      tmpl('workspace-coffee', 'across', [[{ name: 'lemon', namespace: 'workspace-tea' }]]),
      tmpl('workspace-tea', 'plain', [[]]),
    ];
    const claims = [
      mirror('tenant-a', 'i1', { namespace: 'workspace-tea', name: 'shvol-lemon' }),
      mirror('tenant-a', 'i1', { namespace: 'workspace-tea', name: 'shvol-lemon' }),
      mirror('tenant-c', 'i3', { namespace: 'workspace-tea', name: 'shvol-lemon' }),
      mirror('tenant-b', 'i2', { namespace: 'workspace-coffee', name: 'shvol-lemon' }),
      mirror('tenant-d', 'i4', { namespace: 'workspace-tea', name: 'lemon' }),
      mirror('tenant-e', 'i5', { name: 'shvol-lemon' }),
    ];
    const m = sharedVolumeMounters(volume, templates, claims);
    expect(m).toEqual({ templates: ['workspace-coffee/across', 'workspace-tea/reader'], instances: ['tenant-a/i1', 'tenant-c/i3'] });
    expect(heldBy(m)).toBe(true);
    expect(mountersMessage(m)).toBe('deletion held: mounted by Templates workspace-coffee/across, workspace-tea/reader; Instances tenant-a/i1, tenant-c/i3');
    // An Instance alone holds it: its frozen Template spec still mounts it.
    const alone = sharedVolumeMounters(volume, [templates[3]], claims.slice(2, 3));
    expect(alone).toEqual({ templates: [], instances: ['tenant-c/i3'] });
    expect(mountersMessage(alone)).toBe('deletion held: mounted by Instance tenant-c/i3');
    expect(heldBy(sharedVolumeMounters(volume, [templates[1], templates[3]], claims.slice(3)))).toBe(false);
  });
});

describe('how an environment mounts SharedVolumes', () => {
  const mounts = [
    { sharedVolume: { name: 'lemon' }, mountPath: '/mnt/lemon', readOnly: true },
    { sharedVolume: { name: 'lime', namespace: 'workspace-x' }, mountPath: '/mnt/lime', readOnly: false },
  ];
  const exists = (ns: string, n: string) => `${ns}/${n}` !== 'workspace-x/gone';

  it('through a mirror of each volume\'s claim, read-only as the Template says for a student', () => {
    expect(environmentMounts(mounts, 'workspace-tea', 'desk-1', false, exists)).toEqual({
      mounts: [
        { claimName: 'lemon-desk-1-mirror', origin: { namespace: 'workspace-tea', claimName: 'shvol-lemon' }, mountPath: '/mnt/lemon', readOnly: true },
        { claimName: 'lime-desk-1-mirror', origin: { namespace: 'workspace-x', claimName: 'shvol-lime' }, mountPath: '/mnt/lime', readOnly: false },
      ],
      missing: [],
    });
  });

  it("read-write for the workspace's managers", () => {
    expect(environmentMounts(mounts, 'workspace-tea', 'desk-1', true, exists).mounts.map((m) => m.readOnly)).toEqual([false, false]);
  });

  it('names a volume that does not exist', () => {
    expect(environmentMounts([{ sharedVolume: { name: 'gone', namespace: 'workspace-x' }, mountPath: '/m', readOnly: true }], 'workspace-tea', 'i', false, exists)).toEqual({ mounts: [], missing: ['workspace-x/gone'] });
  });

  it("keeps upstream's mirror names: the last 27 characters of each, within a volume name's 63", () => {
    const long = 'v'.repeat(40) + 'x';
    const name = sharedVolumeMirrorName(long, 'i'.repeat(30) + 'y');
    expect(name).toBe(`${'v'.repeat(26)}x-${'i'.repeat(26)}y-mirror`);
    expect(name.length).toBe(62);
  });
});
