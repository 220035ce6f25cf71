import { describe, expect, it } from 'vitest';
import { HeadlessPods, type WorkloadState } from '../../../src/controller/headless-pods.ts';
import type { PodState } from '../../../src/model/phase.ts';

const pod = (ip: string): PodState & { spec: Record<string, unknown> } => ({
  metadata: { labels: { app: 'a' }, creationTimestamp: '2026-01-01T00:00:00Z' },
  spec: { nodeName: 'n1', containers: [{ name: 'big', image: 'x'.repeat(1000) }] },
  status: { phase: 'Running', podIP: ip },
});
const deployment = (rv: string, replicas?: number): WorkloadState => ({ metadata: { uid: 'u1', resourceVersion: rv }, status: replicas === undefined ? {} : { replicas } });

function counted(result: PodState[]) {
  let calls = 0;
  return { list: async () => (calls++, result), calls: () => calls };
}

describe('the Pods of a headless Service, listed only when their workload moved', () => {
  it('one list per version of the Deployment; the same version reuses it, a new one lists again', async () => {
    const memo = new HeadlessPods();
    const l = counted([pod('10.0.0.1')]);
    expect((await memo.pods('ns/i', 'i-env', deployment('1', 1), l.list))[0]!.status?.podIP).toBe('10.0.0.1');
    await memo.pods('ns/i', 'i-env', deployment('1', 1), l.list);
    expect(l.calls()).toBe(1);
    await memo.pods('ns/i', 'i-env', deployment('2', 1), l.list);
    expect(l.calls()).toBe(2);
    // A Deployment of the same name made again (another uid) lists again.
    await memo.pods('ns/i', 'i-env', { ...deployment('2', 1), metadata: { uid: 'u2', resourceVersion: '2' } }, l.list);
    expect(l.calls()).toBe(3);
  });

  it('no workload, a Deployment with no replicas, a VMI not yet scheduled: none, without a request', async () => {
    const memo = new HeadlessPods();
    const l = counted([pod('10.0.0.1')]);
    for (const w of [undefined, deployment('1'), deployment('1', 0), { metadata: { uid: 'v', resourceVersion: '1' } }, { metadata: { uid: 'v', resourceVersion: '1' }, status: { phase: 'Pending' } }]) {
      expect(await memo.pods('ns/i', 'i-env', w, l.list)).toEqual([]);
    }
    expect(l.calls()).toBe(0);
    expect(await memo.pods('ns/i', 'i-vm', { metadata: { uid: 'v', resourceVersion: '2' }, status: { phase: 'Scheduled' } }, l.list)).toHaveLength(1);
    expect(l.calls()).toBe(1);
  });

  it('a workload gone drops its list: when it comes back under the same version, it is listed again', async () => {
    const memo = new HeadlessPods();
    const l = counted([pod('10.0.0.1')]);
    await memo.pods('ns/i', 'i-env', deployment('1', 1), l.list);
    await memo.pods('ns/i', 'i-env', undefined, l.list);
    expect(memo.size).toBe(0);
    await memo.pods('ns/i', 'i-env', deployment('1', 1), l.list);
    expect(l.calls()).toBe(2);
  });

  it('keeps only what the status reads of each Pod, and forgets a deleted Instance', async () => {
    const memo = new HeadlessPods();
    const [kept] = await memo.pods('ns/i', 'i-env', deployment('1', 1), counted([pod('10.0.0.1')]).list);
    expect(JSON.stringify(kept)).not.toContain('containers');
    expect(kept).toMatchObject({ spec: { nodeName: 'n1' }, status: { phase: 'Running', podIP: '10.0.0.1' }, metadata: { labels: { app: 'a' } } });
    memo.forget('ns/i');
    expect(memo.size).toBe(0);
  });
});
