// The controller's /metrics as the install runs it (--metrics-secure) against the real API server:
// HTTPS, a TokenReview of the bearer token and a SubjectAccessReview of `get /metrics`. Tokens are
// real ServiceAccount tokens (TokenRequest); the reader role is the one `crownlabs manifests`
// renders; the reviews succeed with only the rules the controller's derived ClusterRole holds.
import https from 'node:https';
import { App, Chart } from 'cdk8s';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MetricsReaderRole } from '../../constructs/platform/metrics-reader-role.ts';
import { MetricsAccessReview } from '../../src/controller/metrics-auth.ts';
import { KubeClient } from '../../src/kube/client.ts';
import { deriveControllerRbac } from '../../src/platform/derive-rbac.ts';
import { createNamespace, createObject, deleteAll, deleteNamespace, kubeConfigFor, rest, statusOf, waitFor, type KubeObject } from './cluster.ts';
import { labConfig, runController, shardName, type RunningController } from './controller-support.ts';

/** GET /metrics over HTTPS (the certificate is the controller's own, self-signed). */
function scrape(address: string, token?: string): Promise<{ status: number; text: string }> {
  const [host, port] = [address.slice(0, address.lastIndexOf(':')), Number(address.slice(address.lastIndexOf(':') + 1))];
  return new Promise((resolve, reject) => {
    const r = https.get({ host, port, path: '/metrics', rejectUnauthorized: false, agent: false, headers: token ? { Authorization: `Bearer ${token}` } : {} }, (res) => {
      let text = '';
      res.on('data', (c: Buffer) => (text += c.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
    });
    r.on('error', reject);
  });
}

async function serviceAccountToken(ns: string, name: string): Promise<string> {
  await createObject({ apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name, namespace: ns } });
  const tr = await rest().request('POST', `/api/v1/namespaces/${ns}/serviceaccounts/${name}/token`, {
    body: { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec: { expirationSeconds: 600 } },
  });
  return tr.status.token as string;
}

describe('controller /metrics behind authentication and authorisation (--metrics-secure)', () => {
  const shard = shardName('cma');
  const config = labConfig(shard);
  let ns = '';
  let ctl: RunningController | undefined;
  const clusterObjects: KubeObject[] = [];
  let readerToken = '';
  let nobodyToken = '';

  beforeAll(async () => {
    ns = await createNamespace('metrics-auth');
    readerToken = await serviceAccountToken(ns, 'prometheus');
    nobodyToken = await serviceAccountToken(ns, 'nobody');
    // The reader ClusterRole as the install renders it, under this run's name.
    const chart = new Chart(new App(), 'm');
    new MetricsReaderRole(chart, 'r', { name: ns, labels: {} });
    const [role] = chart.toJson() as KubeObject[];
    clusterObjects.push(role!, {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRoleBinding',
      metadata: { name: `${ns}-metrics-reader` },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: role!.metadata.name },
      subjects: [{ kind: 'ServiceAccount', name: 'prometheus', namespace: ns }],
    } as KubeObject);
    for (const o of clusterObjects) await createObject(o);
    ctl = await runController(config, { metricsSecure: {} });
  });
  afterAll(async () => {
    await ctl?.handle.stop();
    await deleteAll(clusterObjects);
    if (ns) await deleteNamespace(ns);
  });

  it('no token: 401; a ServiceAccount without the metrics-reader role: 403; with it: 200 and the metrics', async () => {
    const address = ctl!.handle.metricsAddress!;
    expect((await scrape(address)).status).toBe(401);
    expect((await scrape(address, 'not-a-token')).status).toBe(401);
    expect((await scrape(address, nobodyToken)).status).toBe(403);
    // A fresh binding reaches the API server's authorizer within moments; a 403 is cached 10 s.
    await waitFor(async () => (await scrape(address, readerToken)).status === 200, { timeoutMs: 30_000, message: 'the reader to be allowed' });
    const ok = await scrape(address, readerToken);
    expect(ok.text).toContain('crownlabs_controller_reconcile_duration_seconds');
  });

  it("the controller's derived ClusterRole holds what the reviews need, and nothing less would do", async () => {
    const user = `${ns}-controller`;
    const kc = await kubeConfigFor(user);
    const review = new MetricsAccessReview(new KubeClient(kc));
    // Without any role the API server refuses the TokenReview itself.
    await expect(review.decide(readerToken)).rejects.toThrow(/403/);
    const reviewRules = deriveControllerRbac(config, ['lease']).clusterRules.filter((r) => r.apiGroups.some((g) => g === 'authentication.k8s.io' || g === 'authorization.k8s.io'));
    expect(reviewRules).toEqual([
      { apiGroups: ['authentication.k8s.io'], resources: ['tokenreviews'], verbs: ['create'] },
      { apiGroups: ['authorization.k8s.io'], resources: ['subjectaccessreviews'], verbs: ['create'] },
    ]);
    const bound: KubeObject[] = [
      { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', metadata: { name: `${ns}-reviews` }, rules: reviewRules } as KubeObject,
      {
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'ClusterRoleBinding',
        metadata: { name: `${ns}-reviews` },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: `${ns}-reviews` },
        subjects: [{ kind: 'User', apiGroup: 'rbac.authorization.k8s.io', name: user }],
      } as KubeObject,
    ];
    clusterObjects.push(...bound);
    for (const o of bound) await createObject(o);
    await waitFor(async () => (await statusOf(review.decide(nobodyToken))) === 200, { timeoutMs: 30_000, message: 'the review rules to take effect' });
    expect(await new MetricsAccessReview(new KubeClient(kc)).decide(nobodyToken)).toMatchObject({ status: 403 });
    expect(await new MetricsAccessReview(new KubeClient(kc)).decide(readerToken)).toEqual({ status: 200, user: `system:serviceaccount:${ns}:prometheus` });
  });
});
