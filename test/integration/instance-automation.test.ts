// Instance automation (docs/behaviour.md §8) by the apply-controller against the real test cluster: termination
// by a status-check URL (a local HTTP double on 127.0.0.1), the content submission Job (run by
// kube-controller-manager's Job controller on kwok's fake Nodes; a destination containing
// "kwok-fail" crashes its pod), and Template deleteAfter expiration with an injected clock.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getObject, rest, waitFor, type KubeObject } from './cluster.ts';
import { cleanupLab, create, createIgnoringConflict, patch, runController, SELECTOR, shardName, labConfig, type Lab, type RunningController } from './controller-support.ts';

const shard = shardName('aut');
const ws = `${shard}-ws`;
const alice = `${shard}.alice`;
const tenantNs = `tenant-${shard}-alice`;
const workspaceNs = `workspace-${ws}`;
const config = labConfig(shard);
const otherNs = `${shard}-other`;
const target = { [SELECTOR]: shard };
const l: Lab = {
  shard,
  workspace: ws,
  tenants: [alice],
  tenantNs,
  workspaceNs,
  inputs: {
    cluster: [
      { apiVersion: 'crownlabs.polito.it/v1alpha1', kind: 'Workspace', metadata: { name: ws, labels: target }, spec: { prettyName: 'Exams', quota: { cpu: 16, memory: '32Gi', instances: 8 } } },
      {
        apiVersion: 'crownlabs.polito.it/v1alpha2',
        kind: 'Tenant',
        metadata: { name: alice, labels: target },
        spec: { firstName: 'Alice', lastName: 'Doe', email: 'alice@example.org', lastLogin: new Date().toISOString(), workspaces: [{ name: ws, role: 'user' }] },
      },
    ],
    namespaced: [],
  },
};

const TEMPLATE_REF = 'template.crownlabs.polito.it/TemplateRef';
const TENANT_REF = 'tenant.crownlabs.polito.it/TenantRef';
const L = {
  watch: 'crownlabs.polito.it/watch-for-instance-termination',
  requested: 'crownlabs.polito.it/instance-submission-requested',
  completed: 'crownlabs.polito.it/instance-submission-completed',
};

function template(name: string, persistent: boolean, deleteAfter = 'never'): KubeObject {
  return {
    apiVersion: 'crownlabs.polito.it/v1alpha2',
    kind: 'Template',
    metadata: { name, namespace: workspaceNs },
    spec: {
      prettyName: name,
      description: 'automation',
      deleteAfter,
      'workspace.crownlabs.polito.it/WorkspaceRef': { name: ws },
      environmentList: [
        {
          name: 'desk',
          image: 'registry.example/desk:1',
          environmentType: 'Container',
          persistent,
          mode: 'Exam',
          mountMyDriveVolume: false,
          resources: { cpu: 1, reservedCPUPercentage: 50, memory: '1Gi', ...(persistent ? { disk: '1Gi' } : {}) },
        },
      ],
    },
  };
}

function instance(name: string, tmpl: string, urls: Record<string, string> = {}, labels: Record<string, string> = {}): KubeObject {
  return {
    apiVersion: 'crownlabs.polito.it/v1alpha2',
    kind: 'Instance',
    metadata: { name, namespace: tenantNs, labels },
    spec: { running: true, [TEMPLATE_REF]: { name: tmpl, namespace: workspaceNs }, [TENANT_REF]: { name: alice }, ...(Object.keys(urls).length ? { customizationUrls: urls } : {}) },
  };
}

const instRef = (name: string) => ({ apiVersion: 'crownlabs.polito.it/v1alpha2', kind: 'Instance', metadata: { name, namespace: tenantNs } });
const getInst = (name: string) => getObject<any>(instRef(name));
const jobRef = (name: string) => ({ apiVersion: 'batch/v1', kind: 'Job', metadata: { name, namespace: tenantNs } });

async function eventsOf(name: string): Promise<{ type: string; reason: string; message: string }[]> {
  const list = await rest().request('GET', `/api/v1/namespaces/${tenantNs}/events`, { query: { fieldSelector: `involvedObject.name=${name},involvedObject.kind=Instance` } });
  return list.items.map((e: any) => ({ type: e.type, reason: e.reason, message: e.message }));
}

// The status-check double: one programmable answer per path, and a hit counter per path.
const answers = new Map<string, { code: number; body: string }>();
const hits = new Map<string, number>();
const server = http.createServer((req, res) => {
  const p = req.url ?? '/';
  hits.set(p, (hits.get(p) ?? 0) + 1);
  const a = answers.get(p) ?? { code: 500, body: 'no answer configured' };
  res.writeHead(a.code, { 'Content-Type': 'application/json' }).end(a.body);
});
let base = '';
const DEADLINE = '2030-01-01T10:00:00Z';
const url = (p: string) => `${base}/${p}`;

let ctl: RunningController | undefined;
async function restart(options: Parameters<typeof runController>[1]): Promise<RunningController> {
  await ctl?.handle.stop();
  ctl = await runController(config, options);
  return ctl;
}

beforeAll(async () => {
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  answers.set('/exam-1', { code: 200, body: JSON.stringify({ deadline: DEADLINE, idnumber: 's1' }) });
  answers.set('/garbage-1', { code: 200, body: '<html>not json</html>' });
  answers.set('/steady-1', { code: 200, body: JSON.stringify({ deadline: DEADLINE }) });
  await createIgnoringConflict({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: config.mydrivePvcsNamespace } });
  for (const o of l.inputs.cluster) await create(o);
  await restart({ automation: { termination: true, submission: true, statusCheckIntervalMs: 1500, statusCheckTimeoutMs: 1000 } });
  await waitFor(async () => (await getObject({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: workspaceNs } })) && (await getObject({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: tenantNs } })), {
    timeoutMs: 30_000,
    message: 'tenant and workspace namespaces',
  });
  for (const t of [template('exam', true), template('quiz', false), template('short', false, '10m')]) await create(t);
  await create(instance('exam-1', 'exam', { statusCheck: url('exam-1'), contentDestination: 'https://upload.example/exam-1' }));
  await create(instance('garbage-1', 'quiz', { statusCheck: url('garbage-1') }));
  await create(instance('steady-1', 'quiz', { statusCheck: url('steady-1') }));
  await create(instance('nodest-1', 'quiz', { contentDestination: 'https://upload.example/nodest-1' }, { [L.requested]: 'true' }));
  // Its submitter's DESTINATION_URL carries kwok's failure marker: the upload crashes.
  await create(instance('exam-2', 'exam', { contentDestination: 'https://upload.example/kwok-fail/exam-2' }, { [L.requested]: 'true' }));
  await create(instance('short-1', 'short'));
  await create(instance('short-2', 'short'));
  // Outside the namespace whitelist (docs/behaviour.md §0.6): labelled for termination, but never checked.
  answers.set('/other-1', { code: 404, body: '' });
  await create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: otherNs } });
  await create({ ...instance('other-1', 'quiz', { statusCheck: url('other-1') }, { [L.watch]: 'true' }), metadata: { name: 'other-1', namespace: otherNs, labels: { [L.watch]: 'true' } } });
});

afterAll(async () => {
  await ctl?.handle.stop();
  await cleanupLab(l);
  await rest().request('DELETE', `/api/v1/namespaces/${otherNs}`).catch(() => undefined);
  await new Promise((r) => server.close(r));
});

describe('§8.1 termination by status check', () => {
  it('a 200 records lastCheckTime and terminationTime = deadline, keeps the Instance running, and checks again after the interval', async () => {
    const i = await waitFor(async () => {
      const x = await getInst('exam-1');
      return x?.status?.automation?.terminationTime ? x : undefined;
    }, { timeoutMs: 30_000, message: 'exam-1 checked' });
    expect(i.status.automation.terminationTime).toBe(DEADLINE);
    expect(i.status.automation.lastCheckTime).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    expect(i.spec.running).toBe(true);
    expect(i.metadata.labels[L.watch]).toBe('true');
    const first = hits.get('/exam-1') ?? 0;
    await waitFor(async () => (hits.get('/exam-1') ?? 0) > first, { timeoutMs: 10_000, message: 'a second check after the interval' });
  });

  it('a 404 terminates: spec.running=false, watch label false, submission requested (persistent + contentDestination)', async () => {
    const before = Date.now();
    answers.set('/exam-1', { code: 404, body: 'gone' });
    const i = await waitFor(async () => {
      const x = await getInst('exam-1');
      return x?.spec.running === false ? x : undefined;
    }, { timeoutMs: 30_000, message: 'exam-1 terminated' });
    expect(i.metadata.labels).toMatchObject({ [L.watch]: 'false', [L.requested]: 'true' });
    expect(Date.parse(i.status.automation.terminationTime)).toBeGreaterThanOrEqual(Math.floor(before / 1000) * 1000);
    expect(i.status.automation.terminationTime).toBe(i.status.automation.lastCheckTime);
    expect((await eventsOf('exam-1')).map((e) => e.reason)).toContain('Terminated');
  });

  it('a garbage answer is a Warning Event and a log line; the Instance stays as it was and others are unaffected', async () => {
    const events = await waitFor(async () => {
      const e = await eventsOf('garbage-1');
      return e.some((x) => x.reason === 'StatusCheckFailed') ? e : undefined;
    }, { timeoutMs: 30_000, message: 'StatusCheckFailed event' });
    const warning = events.find((e) => e.reason === 'StatusCheckFailed')!;
    expect(warning.type).toBe('Warning');
    expect(warning.message).toContain('invalid body');
    // Retried with back-off, but reported once.
    await waitFor(async () => (hits.get('/garbage-1') ?? 0) >= 3, { timeoutMs: 20_000, message: 'retries' });
    expect((await eventsOf('garbage-1')).filter((e) => e.reason === 'StatusCheckFailed')).toHaveLength(1);
    const g = await getInst('garbage-1');
    expect(g.spec.running).toBe(true);
    expect(g.metadata.labels[L.watch]).toBe('true');
    expect(g.status?.automation?.lastCheckTime).toBeUndefined();
    const s = await getInst('steady-1');
    expect(s.spec.running).toBe(true);
    expect(s.status.automation.terminationTime).toBe(DEADLINE);
  });

  it('an Instance outside the namespace whitelist is never checked', async () => {
    await ctl!.handle.idle();
    expect(hits.get('/other-1')).toBeUndefined();
    const o = await getObject<any>({ ...instRef('other-1'), metadata: { name: 'other-1', namespace: otherNs } });
    expect(o.spec.running).toBe(true);
    expect(o.status?.automation).toBeUndefined();
  });
});

describe('§8.2 content submission', () => {
  it('the submitter Job is created in the shape of docs/behaviour.md §8.2, owned by the Instance', async () => {
    const job = await waitFor(() => getObject<any>(jobRef('exam-1-submitter')), { timeoutMs: 30_000, message: 'submitter Job' });
    const i = await getInst('exam-1');
    expect(job.metadata.labels).toMatchObject({
      'crownlabs.polito.it/component': 'submitter',
      'crownlabs.polito.it/managed-by': 'instance',
      'crownlabs.polito.it/instance': 'exam-1',
      'crownlabs.polito.it/template': 'exam',
      'crownlabs.polito.it/tenant': alice,
    });
    expect(job.metadata.ownerReferences).toEqual([{ apiVersion: 'crownlabs.polito.it/v1alpha2', kind: 'Instance', name: 'exam-1', uid: i.metadata.uid, controller: true, blockOwnerDeletion: true }]);
    expect(job.spec.backoffLimit).toBe(10);
    expect(job.spec.ttlSecondsAfterFinished).toBe(300);
    const pod = job.spec.template.spec;
    expect(pod.securityContext).toEqual({ runAsUser: 1010, runAsGroup: 1010, fsGroup: 1010, runAsNonRoot: true });
    expect(pod.automountServiceAccountToken).toBe(false);
    expect(pod.volumes).toEqual([{ name: 'persistent', persistentVolumeClaim: { claimName: 'exam-1' } }]);
    expect(pod.containers[0].image).toBe(`${config.containerEnvContentUploaderImg}:${config.containerEnvSidecarsTag}`);
    expect(pod.containers[0].env).toEqual([
      { name: 'SOURCE_PATH', value: '/media/data' },
      { name: 'DESTINATION_URL', value: 'https://upload.example/exam-1' },
      { name: 'FILENAME', value: 'exam-1' },
    ]);
    // Not finished when the Instance was read: nothing recorded.
    if (!(await getObject<any>(jobRef('exam-1-submitter'))).status?.completionTime) {
      expect(i.status.automation.submissionTime).toBeUndefined();
      expect(i.metadata.labels[L.completed]).toBeUndefined();
    }
  });

  it('when the Job succeeds (kwok completes its pod): submissionTime = its completionTime, labels requested=false, completed=true; the Job is kept for its TTL', async () => {
    const i = await waitFor(async () => {
      const x = await getInst('exam-1');
      return x?.metadata.labels[L.completed] === 'true' ? x : undefined;
    }, { timeoutMs: 30_000, message: 'submission completed' });
    const job = await getObject<any>(jobRef('exam-1-submitter'));
    expect(job.status.conditions).toContainEqual(expect.objectContaining({ type: 'Complete', status: 'True' }));
    expect(i.status.automation.submissionTime).toBe(job.status.completionTime);
    expect(i.metadata.labels[L.requested]).toBe('false');
    expect(i.status.automation.terminationTime).toBeDefined();
    await ctl!.handle.idle();
    expect(await getObject(jobRef('exam-1-submitter'))).toBeDefined();
  });

  it('a failed Job is a Warning Event; the submission stays requested (as upstream, nothing is retried behind the user\'s back)', async () => {
    await waitFor(() => getObject<any>(jobRef('exam-2-submitter')), { timeoutMs: 30_000, message: 'exam-2 submitter Job' });
    // The uploader crash-loops; the Job controller fails the Job at its backoffLimit (10 restarts).
    const events = await waitFor(async () => {
      const e = await eventsOf('exam-2');
      return e.some((x) => x.reason === 'SubmissionFailed') ? e : undefined;
    }, { timeoutMs: 60_000, message: 'SubmissionFailed event' });
    expect(events.find((e) => e.reason === 'SubmissionFailed')).toMatchObject({ type: 'Warning', message: expect.stringContaining('Job exam-2-submitter failed: BackoffLimitExceeded') });
    const i = await getInst('exam-2');
    expect(i.metadata.labels[L.requested]).toBe('true');
    expect(i.metadata.labels[L.completed]).toBeUndefined();
    expect(i.status?.automation?.submissionTime).toBeUndefined();
    // A restarted controller reports it once more; the restart test below wants nothing due.
    await rest().request('DELETE', `/apis/crownlabs.polito.it/v1alpha2/namespaces/${tenantNs}/instances/exam-2`);
    await waitFor(async () => !(await getInst('exam-2')), { timeoutMs: 30_000, message: 'exam-2 gone' });
  });

  it('a requested submission that is impossible (ephemeral environment) is withdrawn: requested=false, completed=false, no Job', async () => {
    const i = await waitFor(async () => {
      const x = await getInst('nodest-1');
      return x?.metadata.labels[L.requested] === 'false' ? x : undefined;
    }, { timeoutMs: 30_000, message: 'nodest-1 withdrawn' });
    expect(i.metadata.labels[L.completed]).toBe('false');
    expect(await getObject(jobRef('nodest-1-submitter'))).toBeUndefined();
  });

  it('a restarted controller checks nothing before the interval (lastCheckTime is kept) and a resync sends zero writes', async () => {
    answers.set('/garbage-1', { code: 200, body: JSON.stringify({ deadline: DEADLINE }) });
    await waitFor(async () => (await getInst('garbage-1'))?.status?.automation?.lastCheckTime, { timeoutMs: 30_000, message: 'garbage-1 recovered' });
    await ctl!.handle.stop();
    const hitsBefore = new Map(hits);
    const c = await restart({ automation: { termination: true, submission: true, statusCheckIntervalMs: 600_000 } });
    await c.handle.idle();
    expect(hits).toEqual(hitsBefore);
    const writesAfterStart = c.writes().length;
    expect(c.handle.queue.hasDelayed(`InstanceTermination/${tenantNs}/steady-1`)).toBe(true);
    c.handle.resyncAll();
    await c.handle.idle();
    expect(c.writes().slice(writesAfterStart)).toEqual([]);
    expect(c.writes()).toEqual([]);
    expect(hits).toEqual(hitsBefore);
    expect(c.reconciled.filter((k) => k === `InstanceTermination/${tenantNs}/steady-1`).length).toBeGreaterThanOrEqual(2);
  });
});

describe('§8.3 deleteAfter expiration (requeue at the expiry time, no cron)', () => {
  it('dry run: expired Instances get a server-side dry-run delete, a log line and an Event, and stay', async () => {
    const c = await restart({ automation: { expiration: true, expirationDryRun: true }, now: () => Date.now() + 15 * 60_000 });
    for (const name of ['short-1', 'short-2']) {
      const events = await waitFor(async () => {
        const e = await eventsOf(name);
        return e.some((x) => x.reason === 'ExpirationDryRun') ? e : undefined;
      }, { timeoutMs: 30_000, message: `${name} dry-run event` });
      expect(events.find((e) => e.reason === 'ExpirationDryRun')!.message).toContain('deleteAfter 10m');
    }
    await c.handle.idle();
    expect(c.requests.filter((r) => r.method === 'DELETE' && r.path.includes('/instances/'))).toHaveLength(2);
    expect(await getInst('short-1')).toBeDefined();
    expect(await getInst('short-2')).toBeDefined();
    // deleteAfter never: nothing planned.
    expect(c.handle.queue.hasDelayed(`InstanceExpiration/${tenantNs}/steady-1`)).toBe(false);
    // A resync does not repeat the report.
    const n = c.writes().length;
    c.handle.resyncAll();
    await c.handle.idle();
    expect(c.writes().length).toBe(n);
  });

  it('an Instance is requeued at its expiry time and deleted once it is due; a Template change re-plans its Instances', async () => {
    let offset = 0;
    const c = await restart({ automation: { expiration: true }, now: () => Date.now() + offset });
    await c.handle.idle();
    expect(c.handle.queue.hasDelayed(`InstanceExpiration/${tenantNs}/short-1`)).toBe(true);
    expect(c.writes()).toEqual([]);
    expect(await getInst('short-1')).toBeDefined();
    offset = 15 * 60_000;
    // An Instance change replaces its timer: the reconcile now finds it due.
    await patch(instRef('short-1'), { metadata: { annotations: { 'example.org/touched': 'yes' } } });
    await waitFor(async () => {
      const x = await getInst('short-1');
      return !x || x.metadata.deletionTimestamp;
    }, { timeoutMs: 30_000, message: 'short-1 deleted' });
    expect(await getInst('short-2')).toBeDefined();
    // A Template edit fans out to its Instances.
    await patch({ apiVersion: 'crownlabs.polito.it/v1alpha2', kind: 'Template', metadata: { name: 'short', namespace: workspaceNs } }, { spec: { deleteAfter: '11m' } });
    await waitFor(async () => {
      const x = await getInst('short-2');
      return !x || x.metadata.deletionTimestamp;
    }, { timeoutMs: 30_000, message: 'short-2 deleted' });
    expect(await getInst('steady-1')).toBeDefined();
  });
});
