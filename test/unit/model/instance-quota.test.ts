import { describe, expect, it } from 'vitest';
import type { GenericRef, Template } from '../../../src/inputs/types.ts';
import { decideQuota, templateUsage, tenantLimit, workspaceLimit, workspaceOfTemplate, type QuotaInstance } from '../../../src/model/instance-quota.ts';

const NS = 'tenant-alice';
type Res = { cpu: number; memory: string; disk?: string; otherResources?: Record<string, string> };
const template = (...envs: Res[]): Pick<Template, 'spec'> =>
  ({ spec: { prettyName: 't', description: 't', environmentList: envs.map((r, i) => ({ name: `e${i}`, resources: { reservedCPUPercentage: 50, ...r } })) } }) as unknown as Pick<Template, 'spec'>;
const inst = (name: string, tpl: string, running = true, namespace = 'workspace-test'): QuotaInstance => ({ name, running, templateRef: { name: tpl, namespace } });

/** The `test` workspace of upstream's resource-quota doc. */
const DOC_QUOTA = { cpu: 10, instances: 3, memory: '64Gi', disk: '15Gi', otherResources: { 'nvidia.com/gpu': '1', 'amd.com/gpu': '1' } };

function check(candidate: Res, running: Res[], quota: Parameters<typeof workspaceLimit>[0] = DOC_QUOTA) {
  const templates = new Map<string, Pick<Template, 'spec'>>(running.map((r, i) => [`t${i}`, template(r)]));
  return decideQuota({
    candidate: inst('new', 'candidate'),
    candidateUsage: templateUsage(template(candidate)),
    others: running.map((_, i) => inst(`i${i}`, `t${i}`)),
    templateOf: (ref: GenericRef) => templates.get(ref.name),
    namespace: NS,
    workspaceLimit: workspaceLimit(quota),
  });
}

describe('the per-workspace Instance quota, on the examples of upstream\'s resource-quota doc', () => {
  const small = { cpu: 2, memory: '8Gi', disk: '5Gi' };
  it.each([
    ['a third Instance within every limit', small, [small, small], undefined],
    ['a fourth Instance (3 allowed)', { cpu: 1, memory: '1Gi' }, [small, small, small], 'Instances (4 > 3)'],
    ['CPU above 10 cores', { cpu: 7, memory: '1Gi' }, [{ cpu: 4, memory: '1Gi' }], 'CPU (11 > 10)'],
    ['exactly 10 cores', { cpu: 6, memory: '1Gi' }, [{ cpu: 4, memory: '1Gi' }], undefined],
    ['memory above 64Gi', { cpu: 1, memory: '40Gi' }, [{ cpu: 1, memory: '30Gi' }], 'Memory (70Gi > 64Gi)'],
    ['disk above 15Gi', { cpu: 1, memory: '1Gi', disk: '10Gi' }, [{ cpu: 1, memory: '1Gi', disk: '6Gi' }], 'Disk (16Gi > 15Gi)'],
    ['one NVIDIA GPU', { cpu: 1, memory: '1Gi', otherResources: { 'nvidia.com/gpu': '1' } }, [], undefined],
    ['a second NVIDIA GPU', { cpu: 1, memory: '1Gi', otherResources: { 'nvidia.com/gpu': '1' } }, [{ cpu: 1, memory: '1Gi', otherResources: { 'nvidia.com/gpu': '1' } }], 'nvidia.com/gpu (2 > 1)'],
    ['one NVIDIA and one AMD GPU', { cpu: 1, memory: '1Gi', otherResources: { 'amd.com/gpu': '1' } }, [{ cpu: 1, memory: '1Gi', otherResources: { 'nvidia.com/gpu': '1' } }], undefined],
    ['a resource the quota does not list (limit zero)', { cpu: 1, memory: '1Gi', otherResources: { 'example.com/fpga': '1' } }, [], 'example.com/fpga (1 > 0)'],
  ])('%s', (_what, candidate, running, excess) => {
    const d = check(candidate, running);
    if (excess === undefined) expect(d).toEqual({ allowed: true, warnings: [] });
    else expect(d).toEqual({ allowed: false, message: `quota exceeded in workspace "test": ${excess}`, warnings: [] });
  });

  it('a zero limit is no limit, as upstream reads an unset quota', () => {
    expect(check({ cpu: 64, memory: '512Gi', disk: '1Ti' }, [small, small, small], { cpu: 0, memory: '0', instances: 0 }).allowed).toBe(true);
  });

  it('a user in two workspaces (10 and 8 cores) has 18 cores as a tenant, and each workspace still its own', () => {
    const tenant = { name: 'alice', limit: tenantLimit({ cpu: '18', memory: '128Gi', instances: 6, storage: '30Gi', other: {} }) };
    const templates = new Map([
      ['a', template({ cpu: 8, memory: '1Gi' })],
      ['b', template({ cpu: 6, memory: '1Gi' })],
    ]);
    const base = {
      candidate: inst('new', 'b', true, 'workspace-second'),
      others: [inst('in-first', 'a', true, 'workspace-test')],
      templateOf: (ref: GenericRef) => templates.get(ref.name),
      namespace: NS,
      workspaceLimit: workspaceLimit({ cpu: 8, memory: '64Gi', instances: 3 }),
      tenant,
    };
    expect(decideQuota({ ...base, candidateUsage: templateUsage(templates.get('b')!) }).allowed).toBe(true);
    expect(decideQuota({ ...base, candidateUsage: templateUsage(template({ cpu: 9, memory: '1Gi' })) })).toMatchObject({ allowed: false, message: 'quota exceeded in workspace "second": CPU (9 > 8)' });
    // Within the second workspace's 8 cores, but 8 + 8 + 4 pending is above the tenant's 18.
    const pending = [{ workspace: 'third', usage: templateUsage(template({ cpu: 4, memory: '1Gi' })) }];
    expect(decideQuota({ ...base, candidateUsage: templateUsage(template({ cpu: 8, memory: '1Gi' })), pending })).toMatchObject({ allowed: false, message: 'quota exceeded for tenant "alice": CPU (20 > 18)' });
  });
});

describe('the per-workspace Instance quota, on upstream\'s validator cases', () => {
  const two = { cpu: 2, memory: '2Gi' };
  it('allows a create under quota', () => expect(check(two, [two], { instances: 2, cpu: 4, memory: '8Gi' })).toEqual({ allowed: true, warnings: [] }));
  it('denies a create over quota', () => expect(check(two, [two], { instances: 1, cpu: 2, memory: '2Gi' })).toMatchObject({ allowed: false, message: 'quota exceeded in workspace "test": Instances (2 > 1)' }));
  it('denies a disk over quota', () => expect(check({ cpu: 4, memory: '8Gi', disk: '12Gi' }, [], { instances: 2, cpu: 4, memory: '8Gi', disk: '10Gi' })).toMatchObject({ allowed: false, message: 'quota exceeded in workspace "test": Disk (12Gi > 10Gi)' }));
  it('denies an extended resource over quota', () =>
    expect(check({ cpu: 4, memory: '8Gi', otherResources: { 'nvidia.com/gpu': '2' } }, [], { instances: 2, cpu: 4, memory: '8Gi', otherResources: { 'nvidia.com/gpu': '1' } })).toMatchObject({
      allowed: false,
      message: 'quota exceeded in workspace "test": nvidia.com/gpu (2 > 1)',
    }));
  it('warns of a running Instance whose Template is gone, and counts it as an Instance only', () => {
    const d = decideQuota({
      candidate: inst('new', 'present'),
      candidateUsage: templateUsage(template(two)),
      others: [inst('orphan', 'gone'), inst('stopped', 'gone', false)],
      templateOf: () => undefined,
      namespace: NS,
      workspaceLimit: workspaceLimit({ instances: 2, cpu: 2, memory: '2Gi' }),
    });
    expect(d).toEqual({ allowed: true, warnings: ['template gone not found in workspace namespace for instance orphan; skipping resource calculation for this instance'] });
  });
});

describe('which workspace an Instance counts against', () => {
  it('is its Template\'s namespace, the tenant\'s own being the personal workspace', () => {
    expect(workspaceOfTemplate({ name: 't', namespace: 'workspace-netlab' }, NS)).toBe('netlab');
    expect(workspaceOfTemplate({ name: 't', namespace: NS }, NS)).toBe('personal');
    expect(workspaceOfTemplate({ name: 't' }, NS)).toBe('personal');
    expect(workspaceOfTemplate({ name: 't', namespace: 'tenant-bob' }, NS)).toBeUndefined();
    expect(workspaceOfTemplate({ name: 't', namespace: 'workspace-' }, NS)).toBeUndefined();
  });
});
