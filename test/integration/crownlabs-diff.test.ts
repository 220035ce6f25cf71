// `crownlabs diff` against the test cluster: no change once the controller applied, changes
// (dangerous ones flagged), creates, prunes (owned objects only), the takeover of objects a Go
// operator created through Update, a dry-run the server rejects, and an unreachable cluster.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { KubeObject as InputKubeObject } from '../../src/inputs/types.ts';
import { COMPOSER, parentId } from '../../src/model/labels.ts';
import { objectsToYaml } from '../../src/sinks/yaml-emitter.ts';
import { BIN } from '../support/cli.ts';
import { freePort } from '../support/free-port.ts';
import { adminKubeConfigPath, deleteObject, getObject, rest, waitFor, type KubeObject } from './cluster.ts';
import { cleanupLab, create, createIgnoringConflict, expectedObjects, lab, labConfig, runController, SELECTOR, shardName, type Lab } from './controller-support.ts';

const tmp = mkdtempSync(join(tmpdir(), 'crownlabs-diff-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

/** A config file for the CLI with the lab's shard settings (labConfig). */
function configFile(l: Lab): string {
  const c = labConfig(l.shard);
  const file = join(tmp, `${l.shard}.config.yaml`);
  writeFileSync(
    file,
    [`targetLabel: ${SELECTOR}=${l.shard}`, `namespaceWhitelist: ${SELECTOR}=${l.shard}`, `mydrivePvcsNamespace: ${c.mydrivePvcsNamespace}`, `websiteBaseUrl: ${c.websiteBaseUrl}`, ''].join('\n'),
  );
  return file;
}

function runDiff(args: string[], env: NodeJS.ProcessEnv = {}) {
  const r = spawnSync(process.execPath, [BIN, 'diff', ...args], { encoding: 'utf8', env: { ...process.env, CI: 'true', ...env }, maxBuffer: 64 << 20 });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** The report lines of one object: its line and the indented lines under it. */
function block(stderr: string, id: string): string {
  const lines = stderr.split('\n');
  const start = lines.findIndex((line) => /^\S+\s+/.test(line) && line.replace(/^\S+\s+/, '').split(' ')[0] === id);
  if (start < 0) return '';
  let end = start + 1;
  while (end < lines.length && lines[end].startsWith('  ')) end++;
  return lines.slice(start, end).join('\n');
}

const summary = (stderr: string) => stderr.trimEnd().split('\n').at(-1);

const instanceLabel = 'crownlabs.polito.it/instance';

describe('crownlabs diff after the controller applied a lab', () => {
  const l = lab(shardName('dif'));
  let cfg: string;
  let inputsDir: string;
  const diff = (...args: string[]) => runDiff(['--kubeconfig', adminKubeConfigPath(), '--config', cfg, '-q', ...args]);

  beforeAll(async () => {
    const config = labConfig(l.shard);
    cfg = configFile(l);
    inputsDir = mkdtempSync(join(tmp, 'inputs-'));
    writeFileSync(join(inputsDir, 'lab.yaml'), objectsToYaml([...l.inputs.cluster, ...l.inputs.namespaced] as InputKubeObject[]));
    await createIgnoringConflict({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: config.mydrivePvcsNamespace } });
    for (const o of l.inputs.cluster) await create(o);
    const ctl = await runController(config);
    try {
      await waitFor(async () => (await getObject({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: l.workspaceNs } })) && (await getObject({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: l.tenantNs } })), {
        timeoutMs: 30_000,
        message: 'tenant and workspace namespaces',
      });
      for (const o of l.inputs.namespaced) await create(o);
      const inst = (name: string) => getObject<any>({ apiVersion: 'crownlabs.polito.it/v1alpha2', kind: 'Instance', metadata: { name, namespace: l.tenantNs } });
      await waitFor(async () => (await Promise.all(['vm-1', 'desk-1', 'app-1'].map(inst))).every((i) => i?.status !== undefined), { timeoutMs: 60_000, message: 'instances reconciled' });
      await ctl.handle.idle();
    } finally {
      await ctl.handle.stop();
    }
  });

  afterAll(async () => {
    await cleanupLab(l);
  });

  it('finds no change, from the cluster and from the input files (exit 0), even after a Template edit', () => {
    // Existing Instances keep the Template spec the controller froze on them: nothing restarts.
    const edited = mkdtempSync(join(tmp, 'edited-'));
    const inputs = structuredClone([...l.inputs.cluster, ...l.inputs.namespaced]) as any[];
    inputs.find((o) => o.kind === 'Template' && o.metadata.name === 'desk').spec.environmentList[0].image = 'registry.example/desk:2';
    writeFileSync(join(edited, 'lab.yaml'), objectsToYaml(inputs));
    for (const r of [diff('--from-cluster'), diff('-f', inputsDir), diff('-f', edited)]) {
      expect(r.stderr).toBe('crownlabs diff: 0 changed, 0 created, 0 pruned; 0 dangerous, 0 taken over, 0 errors\n');
      expect(r.stdout).toBe('');
      expect(r.code).toBe(0);
    }
  });

  it('shows a configuration change as kubectl diff does, flags pod template changes as dangerous, and writes nothing (exit 1)', async () => {
    const r = diff('--from-cluster', '--container-env-sidecars-tag', 'v2', '--website-base-url', 'other.test');
    expect(r.code).toBe(1);
    const file = `apps.v1.Deployment.${l.tenantNs}.desk-1`;
    expect(r.stdout).toMatch(new RegExp(`^diff -u -N \\S*/LIVE-\\w+/${file.replace(/\./g, '\\.')} \\S*/MERGED-\\w+/${file.replace(/\./g, '\\.')}$`, 'm'));
    expect(r.stdout).toMatch(/^-\s+image: crownlabs\/websockify:latest$/m);
    expect(r.stdout).toMatch(/^\+\s+image: crownlabs\/websockify:v2$/m);
    const desk = block(r.stderr, `Deployment/${l.tenantNs}/desk-1`);
    expect(desk).toMatch(/^changed /);
    expect(desk).toContain('DANGER: restarts the workload');
    expect(desk).toContain('spec.template.spec.containers[0].image');
    // A new Ingress host restarts nothing.
    const ingresses = r.stderr.split('\n').filter((line) => line.startsWith('changed Ingress/'));
    expect(ingresses.length).toBeGreaterThan(0);
    for (const line of ingresses) {
      const b = block(r.stderr, line.split(/\s+/)[1]);
      expect(b).not.toContain('DANGER');
      expect(b).toMatch(/fields: .*spec\.rules\[0\]\.host/);
    }
    expect(r.stdout).toMatch(/^\+\s+- host: \S*other\.test$/m);
    expect(summary(r.stderr)).toMatch(/^crownlabs diff: \d+ changed \(.*\d+ Deployment.*\d+ Ingress.*\), 0 created, 0 pruned; [1-9]\d* dangerous, 0 taken over, 0 errors$/);
    const live = await getObject<any>({ apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'desk-1', namespace: l.tenantNs } });
    expect(live.spec.template.spec.containers[0].image).toBe('crownlabs/websockify:latest');
  });

  it('lists a rendered object missing from the cluster as a create', async () => {
    await deleteObject({ apiVersion: 'v1', kind: 'Service', metadata: { name: 'desk-1', namespace: l.tenantNs } });
    const r = diff('--from-cluster', '-n', l.tenantNs);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`create  Service/${l.tenantNs}/desk-1\n`);
    expect(r.stdout).toMatch(new RegExp(`^\\+\\+\\+ \\S*/MERGED-\\w+/v1\\.Service\\.${l.tenantNs}\\.desk-1\\t`, 'm'));
    expect(r.stdout).toMatch(/^\+kind: Service$/m);
    expect(summary(r.stderr)).toBe('crownlabs diff: 0 changed, 1 created (1 Service), 0 pruned; 0 dangerous, 0 taken over, 0 errors');
  });

  it('lists the owned objects no longer rendered as prunes (data loss flagged, Secret values masked), never an object it does not own', async () => {
    const instance = await getObject<any>({ apiVersion: 'crownlabs.polito.it/v1alpha2', kind: 'Instance', metadata: { name: 'desk-1', namespace: l.tenantNs } });
    const parent = { kind: 'Instance' as const, name: 'desk-1', namespace: l.tenantNs };
    const ours = (name: string, owned: boolean, annotations: Record<string, string> = {}) => ({
      name,
      namespace: l.tenantNs,
      labels: { [COMPOSER.managedByKey]: COMPOSER.managedByValue, [COMPOSER.parentIdLabel]: parentId(parent), [COMPOSER.parentKindLabel]: 'Instance' },
      annotations: { [COMPOSER.parentAnnotation]: `Instance/${l.tenantNs}/desk-1`, ...annotations },
      ...(owned ? { ownerReferences: [{ apiVersion: instance.apiVersion, kind: 'Instance', name: 'desk-1', uid: instance.metadata.uid, controller: true }] } : {}),
    });
    // As `kubectl apply` leaves it: the values in clear in an annotation.
    const lastApplied = { 'kubectl.kubernetes.io/last-applied-configuration': '{"stringData":{"token":"s3cr3t-value"}}' };
    const token = Buffer.from('s3cr3t-value').toString('base64');
    await create({ apiVersion: 'v1', kind: 'Secret', metadata: ours('stale-token', true, lastApplied), data: { token } });
    await create({ apiVersion: 'v1', kind: 'Secret', metadata: ours('foreign-token', false, lastApplied), data: { token } });
    await create({ apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: ours('stale-disk', true), spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } } });

    const r = diff('--from-cluster', '-n', l.tenantNs);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`prune   Secret/${l.tenantNs}/stale-token (owned by Instance/${l.tenantNs}/desk-1, no longer rendered)\n`);
    expect(block(r.stderr, `PersistentVolumeClaim/${l.tenantNs}/stale-disk`)).toContain('DANGER: deletes its data');
    expect(r.stderr).not.toContain('foreign-token');
    expect(r.stdout).toMatch(new RegExp(`^--- \\S*/LIVE-\\w+/v1\\.Secret\\.${l.tenantNs}\\.stale-token\\t`, 'm'));
    expect(r.stdout).toMatch(/^-\s+token: "\*\*\*"$/m);
    expect(r.stdout).not.toContain('s3cr3t-value');
    expect(r.stdout).not.toContain(token);
    expect(summary(r.stderr)).toBe('crownlabs diff: 0 changed, 1 created (1 Service), 2 pruned (1 PersistentVolumeClaim, 1 Secret); 1 dangerous, 0 taken over, 0 errors');
    // Dry run: everything is still there.
    expect(await getObject({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 'stale-token', namespace: l.tenantNs } })).toBeDefined();
  });

  it('-n and --selector narrow what is compared', () => {
    expect(diff('--from-cluster', '-n', l.workspaceNs).code).toBe(0);
    expect(diff('--from-cluster', '-l', `${instanceLabel}=vm-1`).code).toBe(0);
    const r = diff('--from-cluster', '-l', `${instanceLabel}=desk-1`);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`create  Service/${l.tenantNs}/desk-1\n`);
    expect(r.stderr).not.toContain('stale-token');
  });
});

describe('crownlabs diff: taking over objects a Go operator created', () => {
  const l = lab(shardName('dtk'));
  // Two Container-like environments are enough: desk (Container) and app (Standalone).
  const namespaced = l.inputs.namespaced.filter((o) => /^(desk|app)(-1)?$/.test(o.metadata.name));
  let cfg: string;
  const diff = (...args: string[]) => runDiff(['--kubeconfig', adminKubeConfigPath(), '--config', cfg, '-q', '--from-cluster', ...args]);
  const deskRef = { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'desk-1', namespace: l.tenantNs } };

  /** What the Go instance-operator would have: no composer labels, created through Update. */
  function goOperatorCopy(o: InputKubeObject): KubeObject {
    const copy = structuredClone(o) as unknown as KubeObject & { metadata: { labels: Record<string, string>; annotations?: Record<string, string> } };
    for (const k of [COMPOSER.managedByKey, COMPOSER.parentIdLabel, COMPOSER.parentKindLabel]) delete copy.metadata.labels[k];
    delete copy.metadata.annotations;
    return copy;
  }

  beforeAll(async () => {
    const config = labConfig(l.shard);
    cfg = configFile(l);
    await createIgnoringConflict({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: config.mydrivePvcsNamespace } });
    const c = rest();
    for (const ns of [l.tenantNs, l.workspaceNs]) {
      await c.request('POST', '/api/v1/namespaces', { query: { fieldManager: 'tenant-operator' }, body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns, labels: { [SELECTOR]: l.shard } } } });
    }
    for (const o of l.inputs.cluster) await create(o);
    for (const o of namespaced) await create(o);
    const expected = await expectedObjects(l, config);
    const find = (name: string) => expected.find((o) => o.kind === 'Deployment' && o.metadata.name === name)!;
    // desk-1: the same Deployment but for one env var of the pod template.
    const desk = goOperatorCopy(find('desk-1')) as any;
    const env = desk.spec.template.spec.containers[0].env[0];
    expect(env.valueFrom.fieldRef.fieldPath).toBe('metadata.name');
    env.valueFrom.fieldRef.fieldPath = 'metadata.namespace';
    // app-1: a narrower selector (immutable: the server refuses the apply).
    const app = goOperatorCopy(find('app-1')) as any;
    app.spec.selector.matchLabels = { [instanceLabel]: 'app-1' };
    for (const d of [desk, app]) await c.request('POST', `/apis/apps/v1/namespaces/${l.tenantNs}/deployments`, { query: { fieldManager: 'instance-operator' }, body: d });
  });

  afterAll(async () => {
    await cleanupLab(l);
  });

  it('says which fields of the Update-created object change, flags it dangerous, and writes nothing', async () => {
    const r = diff('-l', `${instanceLabel}=desk-1`);
    expect(r.code).toBe(1);
    const desk = block(r.stderr, `Deployment/${l.tenantNs}/desk-1`);
    expect(desk).toMatch(/^changed /);
    expect(desk).toContain('DANGER: restarts the workload');
    expect(desk).toContain("takeover from field manager 'instance-operator' (Update)");
    expect(desk).toContain('spec.template.spec.containers[0].env[0].valueFrom.fieldRef.fieldPath');
    expect(desk).toContain(`metadata.labels["${COMPOSER.managedByKey}"]`);
    expect(r.stdout).toMatch(/^-\s+fieldPath: metadata\.namespace$/m);
    expect(r.stdout).toMatch(/^\+\s+fieldPath: metadata\.name$/m);
    // The Instance's other objects do not exist yet.
    expect(r.stderr).toContain(`create  Service/${l.tenantNs}/desk-1\n`);
    expect(summary(r.stderr)).toMatch(/^crownlabs diff: 1 changed \(1 Deployment\), \d+ created \(.*\), 0 pruned; 1 dangerous, 1 taken over, 0 errors$/);
    const live = await getObject<any>(deskRef);
    // Nothing written: the spec is still only the Go operator's (kube-controller-manager writes the status).
    expect(live.metadata.managedFields.filter((m: any) => m.subresource !== 'status').map((m: any) => m.manager)).toEqual(['instance-operator']);
    expect(live.spec.template.spec.containers[0].env[0].valueFrom.fieldRef.fieldPath).toBe('metadata.namespace');
  });

  it('reports a dry-run the server rejects as an error (exit 2) and still compares the other objects', () => {
    const r = diff('-l', `${instanceLabel}=app-1`);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(new RegExp(`^error   Deployment/${l.tenantNs}/app-1: 422 .*immutable`, 'm'));
    expect(r.stderr).toContain(`create  Service/${l.tenantNs}/app-1\n`);
    expect(summary(r.stderr)).toMatch(/, 1 error$/);
  });

  it('predicts what the controller does: once it took over, nothing is left to change', async () => {
    const ctl = await runController(labConfig(l.shard));
    try {
      await waitFor(async () => ((await getObject<any>(deskRef))?.metadata.managedFields ?? []).some((m: any) => m.manager === 'crownlabs-composer'), { timeoutMs: 60_000, message: 'desk-1 applied' });
      await ctl.handle.idle();
    } finally {
      await ctl.handle.stop();
    }
    const live = await getObject<any>(deskRef);
    expect(live.spec.template.spec.containers[0].env[0].valueFrom.fieldRef.fieldPath).toBe('metadata.name');
    const r = diff('-l', `${instanceLabel}=desk-1`);
    expect(r.stderr).toBe('crownlabs diff: 0 changed, 0 created, 0 pruned; 0 dangerous, 0 taken over, 0 errors\n');
    expect(r.code).toBe(0);
  });
});

describe('crownlabs diff and the controller: stopped ephemeral Instances the Go operators left running', () => {
  const l = lab(shardName('dse'));
  // An ephemeral Container and an ephemeral VM, both stopped; the Go operators kept their workloads.
  const namespaced = structuredClone(l.inputs.namespaced.filter((o) => /^(desk|vm)(-1)?$/.test(o.metadata.name)));
  for (const o of namespaced) if (o.kind === 'Instance') (o.spec as { running: boolean }).running = false;
  let cfg: string;
  const diff = (...args: string[]) => runDiff(['--kubeconfig', adminKubeConfigPath(), '--config', cfg, '-q', '--from-cluster', '-n', l.tenantNs, ...args]);
  const deskRef = { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'desk-1', namespace: l.tenantNs } };
  const vmiRef = { apiVersion: 'kubevirt.io/v1', kind: 'VirtualMachineInstance', metadata: { name: 'vm-1', namespace: l.tenantNs } };
  const instanceRef = (name: string) => ({ apiVersion: 'crownlabs.polito.it/v1alpha2', kind: 'Instance', metadata: { name, namespace: l.tenantNs } });
  let goVmi: KubeObject;
  /** The pods kwok runs for desk-1 (uid and phase). */
  const deskPods = async () =>
    (await rest().request<{ items: any[] }>('GET', `/api/v1/namespaces/${l.tenantNs}/pods`, { query: { labelSelector: `${instanceLabel}=desk-1` } })).items
      .filter((p) => !p.metadata.deletionTimestamp)
      .map((p) => ({ uid: p.metadata.uid as string, phase: p.status?.phase as string }));
  let runningPod: string;

  /** As the Go instance-operator made it: no composer labels or annotation, created through Update. */
  function goOperatorCopy(o: InputKubeObject): KubeObject {
    const copy = structuredClone(o) as unknown as KubeObject & { metadata: { labels: Record<string, string>; annotations?: Record<string, string> } };
    for (const k of [COMPOSER.managedByKey, COMPOSER.parentIdLabel, COMPOSER.parentKindLabel]) delete copy.metadata.labels[k];
    delete copy.metadata.annotations;
    return copy;
  }

  beforeAll(async () => {
    const config = labConfig(l.shard);
    cfg = configFile(l);
    await createIgnoringConflict({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: config.mydrivePvcsNamespace } });
    const c = rest();
    for (const ns of [l.tenantNs, l.workspaceNs]) {
      await c.request('POST', '/api/v1/namespaces', { query: { fieldManager: 'tenant-operator' }, body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns, labels: { [SELECTOR]: l.shard } } } });
    }
    for (const o of l.inputs.cluster) await create(o);
    // Written by someone named (as kubectl is), so that every other manager of the Instances is the controller.
    for (const o of namespaced) await c.request('POST', `/apis/crownlabs.polito.it/v1alpha2/namespaces/${o.metadata.namespace}/${o.kind.toLowerCase()}s`, { query: { fieldManager: 'kubectl-create' }, body: o });
    // Rendered as running (upstream's Deployment keeps 1 replica once it exists; its VMI is left running).
    const running = await expectedObjects(l, labConfig(l.shard, { stoppedEphemeral: 'keep-running' }));
    const desk = goOperatorCopy(running.find((o) => o.kind === 'Deployment' && o.metadata.name === 'desk-1')!);
    expect((desk.spec as { replicas: number }).replicas).toBe(1);
    goVmi = goOperatorCopy(running.find((o) => o.kind === 'VirtualMachineInstance' && o.metadata.name === 'vm-1')!);
    await c.request('POST', `/apis/apps/v1/namespaces/${l.tenantNs}/deployments`, { query: { fieldManager: 'instance-operator' }, body: desk });
    await c.request('POST', `/apis/kubevirt.io/v1/namespaces/${l.tenantNs}/virtualmachineinstances`, { query: { fieldManager: 'instance-operator' }, body: goVmi });
    // kube-controller-manager makes the pod, the scheduler places it on a kwok node, kwok runs it.
    runningPod = (await waitFor(async () => (await deskPods()).find((p) => p.phase === 'Running'), { timeoutMs: 60_000, message: 'desk-1 pod running' })).uid;
  });

  afterAll(async () => {
    await cleanupLab(l);
  });

  it('keep-running (default): predicts no scale down and no DANGER, and lists the frozen-template write on each Instance and the finalizer and label writes on Tenants and Workspaces', async () => {
    const r = diff();
    expect(r.code).toBe(1);
    const desk = block(r.stderr, `Deployment/${l.tenantNs}/desk-1`);
    expect(desk).toContain("takeover from field manager 'instance-operator' (Update)");
    expect(desk).not.toContain('spec.replicas');
    expect(block(r.stderr, `VirtualMachineInstance/${l.tenantNs}/vm-1`)).toMatch(/^changed /);
    for (const name of ['desk-1', 'vm-1']) {
      const inst = block(r.stderr, `Instance/${l.tenantNs}/${name}`);
      expect(inst).toMatch(/^changed\s+Instance\/\S+ \(written by the controller itself: a merge patch, field manager crownlabs-composer\)/);
      expect(inst).toContain(`metadata.annotations["composer.crownlabs.polito.it/template-spec"]`);
    }
    expect(r.stdout).toMatch(/^\+\s+composer\.crownlabs\.polito\.it\/template-spec: /m);
    expect(r.stderr).not.toContain('DANGER');
    expect(summary(r.stderr)).toMatch(/^crownlabs diff: \d+ changed \(.*2 Instance.*\), \d+ created \(.*\), 0 pruned; 0 dangerous, 2 taken over, 0 errors$/);
    // A dry run: the Instance is as it was.
    expect((await getObject<any>(instanceRef('desk-1'))).metadata.annotations?.['composer.crownlabs.polito.it/template-spec']).toBeUndefined();
    // The Tenants' and the Workspace's own writes: the finalizer, the Tenant's labels.
    const all = runDiff(['--kubeconfig', adminKubeConfigPath(), '--config', cfg, '-q', '--from-cluster']);
    const alice = block(all.stderr, `Tenant/${l.tenants[0]}`);
    expect(alice).toMatch(/^changed\s+Tenant\/\S+ \(written by the controller itself: a merge patch, field manager crownlabs-composer\)/);
    expect(alice).toMatch(/fields: .*metadata\.finalizers/);
    expect(alice).toContain(`metadata.labels["crownlabs.polito.it/workspace-${l.workspace}"]`);
    expect(block(all.stderr, `Workspace/${l.workspace}`)).toMatch(/fields: metadata\.finalizers$/m);
    expect((await getObject<any>({ apiVersion: 'crownlabs.polito.it/v1alpha2', kind: 'Tenant', metadata: { name: l.tenants[0] } })).metadata.finalizers).toBeUndefined();
  });

  it('release: the scale to 0 and the deletion of the VMI it did not create are DANGER', async () => {
    const r = diff('--stopped-ephemeral', 'release');
    expect(r.code).toBe(1);
    const desk = block(r.stderr, `Deployment/${l.tenantNs}/desk-1`);
    expect(desk).toContain('DANGER: deletes every pod (replicas 1 → 0): their emptyDir data is lost');
    expect(desk).toContain('spec.replicas');
    const vmi = block(r.stderr, `VirtualMachineInstance/${l.tenantNs}/vm-1`);
    expect(vmi).toMatch(/^prune\s+VirtualMachineInstance\/\S+ \(controlled by Instance\/\S+\/vm-1, which is stopped: released \(stoppedEphemeral: release\), though the controller did not create it\)/);
    expect(vmi).toContain('DANGER: deletes the workload');
    expect(summary(r.stderr)).toMatch(/, 1 pruned \(1 VirtualMachineInstance\); 2 dangerous, /);
    expect((await getObject<any>(deskRef)).spec.replicas).toBe(1);
    expect(await getObject(vmiRef)).toBeDefined();
  });

  it('keep-running: the controller does what diff said: the pod and the VMI run on, every write carries its field manager, nothing is left to change', async () => {
    const vmiUid = (await getObject<any>(vmiRef)).metadata.uid;
    const ctl = await runController(labConfig(l.shard));
    try {
      await waitFor(async () => (await getObject<any>(instanceRef('desk-1')))?.status?.phase === 'Off' && (await getObject<any>(instanceRef('vm-1')))?.status?.phase === 'Off', { timeoutMs: 60_000, message: 'instances Off' });
      await ctl.handle.idle();
    } finally {
      await ctl.handle.stop();
    }
    expect((await getObject<any>(deskRef)).spec.replicas).toBe(1);
    expect(await deskPods()).toEqual([{ uid: runningPod, phase: 'Running' }]);
    expect((await getObject<any>(vmiRef)).metadata.uid).toBe(vmiUid);
    for (const name of ['desk-1', 'vm-1']) {
      const inst = await getObject<any>(instanceRef(name));
      const managers = inst.metadata.managedFields.map((m: any) => `${m.manager}/${m.operation}/${m.subresource ?? ''}`);
      expect(managers).not.toContainEqual(expect.stringMatching(/^unknown\//));
      const writer = inst.metadata.managedFields.find((m: any) => m.fieldsV1?.['f:metadata']?.['f:annotations']?.['f:composer.crownlabs.polito.it/template-spec']);
      expect(writer).toMatchObject({ manager: 'crownlabs-composer', operation: 'Update' });
      expect(managers).toContain('crownlabs-composer/Update/status');
    }
    const r = diff();
    expect(r.stderr).toBe('crownlabs diff: 0 changed, 0 created, 0 pruned; 0 dangerous, 0 taken over, 0 errors\n');
    expect(r.code).toBe(0);
  });

  it('release: the controller scales the Deployment to 0 and deletes the VMI the Go operators left running, as diff said', async () => {
    // The VMI as the Go operators left it again (the previous run took it over).
    await deleteObject(vmiRef);
    await waitFor(async () => !(await getObject(vmiRef)), { message: 'VMI gone' });
    const instance = await getObject<any>(instanceRef('vm-1'));
    const vmi = { ...goVmi, metadata: { ...goVmi.metadata, ownerReferences: [{ apiVersion: instance.apiVersion, kind: 'Instance', name: 'vm-1', uid: instance.metadata.uid, controller: true, blockOwnerDeletion: true }] } };
    await rest().request('POST', `/apis/kubevirt.io/v1/namespaces/${l.tenantNs}/virtualmachineinstances`, { query: { fieldManager: 'instance-operator' }, body: vmi });
    const release = labConfig(l.shard, { stoppedEphemeral: 'release' });
    const ctl = await runController(release);
    try {
      await waitFor(async () => !(await getObject(vmiRef)) && (await getObject<any>(deskRef))?.spec.replicas === 0, { timeoutMs: 60_000, message: 'VMI released, desk-1 scaled to 0' });
      await ctl.handle.idle();
    } finally {
      await ctl.handle.stop();
    }
    await waitFor(async () => (await deskPods()).length === 0, { timeoutMs: 60_000, message: 'desk-1 pod deleted' });
    const r = diff('--stopped-ephemeral', 'release');
    expect(r.stderr).toBe('crownlabs diff: 0 changed, 0 created, 0 pruned; 0 dangerous, 0 taken over, 0 errors\n');
    expect(r.code).toBe(0);
  });
});

describe('crownlabs diff: an unreachable cluster', () => {
  it('says so in one line and exits 2', async () => {
    const port = await freePort();
    const kubeconfig = join(tmp, 'unreachable.kubeconfig');
    writeFileSync(
      kubeconfig,
      `apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster:\n    server: https://127.0.0.1:${port}\n    insecure-skip-tls-verify: true\nusers:\n- name: u\n  user:\n    token: t\ncontexts:\n- name: x\n  context: {cluster: c, user: u}\ncurrent-context: x\n`,
    );
    const r = runDiff(['--from-cluster', '--kubeconfig', kubeconfig]);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(new RegExp(`^crownlabs diff: cannot read the cluster at https://127\\.0\\.0\\.1:${port}: .*ECONNREFUSED[^\\n]*\\n$`));
  });
});
