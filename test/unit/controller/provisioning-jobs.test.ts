import { describe, expect, it } from 'vitest';
import { provisioningPlan } from '../../../src/controller/provisioning-jobs.ts';
import type { ControllerContext } from '../../../src/controller/context.ts';
import type { KubeObject } from '../../../src/inputs/types.ts';
import { KubeApiError } from '../../../src/kube/client.ts';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Any = any;
const claim: KubeObject = { apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name: 'ada-drive', namespace: 'mydrive' } };
const job = { apiVersion: 'batch/v1', kind: 'Job', metadata: { name: 'ada-drive-provision', namespace: 'mydrive' }, spec: { template: { spec: { volumes: [{ name: 'drive', persistentVolumeClaim: { claimName: 'ada-drive' } }] } } } } as KubeObject;
const other = { apiVersion: 'batch/v1', kind: 'Job', metadata: { name: 'submitter', namespace: 'mydrive' } } as KubeObject;

/** A controller context whose caches hold `cached` and whose server holds `server` (by `Kind/ns/name`). */
function context(cached: Record<string, Any>, server: Record<string, Any> = {}) {
  const requests: string[] = [];
  const id = (o: { kind: string; metadata: { name: string; namespace?: string } }) => `${o.kind}/${o.metadata.namespace}/${o.metadata.name}`;
  const ctx = {
    caches: { liveOf: (o: Any) => cached[id(o)], noteWritten: () => {} },
    client: {
      path: (_v: string, kind: string, ns: string, name: string) => `${kind}/${ns}/${name}`,
      request: async (method: string, path: string, opts?: { body?: unknown }) => {
        requests.push(`${method} ${path}${opts?.body ? ` ${JSON.stringify(opts.body)}` : ''}`);
        if (method === 'GET') {
          if (server[path]) return server[path];
          throw new KubeApiError(404, { message: 'not found' }, method, path);
        }
        return {};
      },
    },
  } as unknown as ControllerContext;
  return { ctx, requests };
}

describe('provisioning Jobs are created once', () => {
  it('a missing Job is in the set; other objects are untouched and only provisioning Jobs are kept from the prune', async () => {
    const { ctx, requests } = context({});
    const plan = await provisioningPlan(ctx, [claim, job, other]);
    expect(plan.set).toEqual([claim, job, other]);
    expect(requests).toEqual(['GET Job/mydrive/ada-drive-provision']);
    expect(plan.keep(job as Any)).toBe(true);
    expect(plan.keep(other as Any)).toBe(false);
  });

  it('one that exists, cached or only on the server (another operator left it), is not applied again', async () => {
    for (const where of ['cache', 'server'] as const) {
      const live = { ...job, status: {} };
      const { ctx } = where === 'cache' ? context({ 'Job/mydrive/ada-drive-provision': live }) : context({}, { 'Job/mydrive/ada-drive-provision': live });
      expect((await provisioningPlan(ctx, [claim, job])).set).toEqual([claim]);
    }
  });

  it('none for a claim labelled provisioned, and nothing asked of the server', async () => {
    const { ctx, requests } = context({ 'PersistentVolumeClaim/mydrive/ada-drive': { ...claim, metadata: { ...claim.metadata, labels: { 'crownlabs.polito.it/volume-provisioning': 'completed' } } } });
    const plan = await provisioningPlan(ctx, [claim, job]);
    expect(plan.set).toEqual([claim]);
    await plan.settle(new Map());
    expect(requests).toEqual([]);
  });

  it('labels the claim once its Job succeeded, not before', async () => {
    const { ctx, requests } = context({});
    const plan = await provisioningPlan(ctx, [claim, job]);
    await plan.settle(new Map([['Job/mydrive/ada-drive-provision', { status: { active: 1 } }]]));
    expect(requests.filter((r) => r.startsWith('PATCH'))).toEqual([]);
    await plan.settle(new Map([['Job/mydrive/ada-drive-provision', { status: { succeeded: 1 } }]]));
    expect(requests.filter((r) => r.startsWith('PATCH'))).toEqual(['PATCH PersistentVolumeClaim/mydrive/ada-drive {"metadata":{"labels":{"crownlabs.polito.it/volume-provisioning":"completed"}}}']);
  });
});
