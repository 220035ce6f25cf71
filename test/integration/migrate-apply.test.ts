// `crownlabs migrate -f COPY --apply` across a CRD upgrade, on a private test cluster of its own
// (the shared one's CRDs must stay at 2e8aeb9): objects made at 2e8aeb9 are copied, the e62be9e
// CRDs installed (the API server then hides the old fields on read), and the copy migrated back
// by update with its resourceVersion; a second run finds them changed and writes nothing.
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BIN } from '../support/cli.ts';
import { loadKubeConfig, rest, TEST_CLUSTER_SCRIPT, waitFor, type KubeObject, type RestClient } from './cluster.ts';
import { crownlabsCrdsDir, type ApiLevel } from '../../src/inputs/api-level.ts';

const dir = mkdtempSync(join(tmpdir(), 'tc-migrate-apply-'));
const env = { ...process.env, TEST_CLUSTER_DIR: dir };
let kubeconfig: string;
let c: RestClient;

async function installCrds(level: ApiLevel): Promise<void> {
  const folder = crownlabsCrdsDir(level);
  const crds = readdirSync(folder)
    .filter((f) => f.startsWith('crownlabs.polito.it_'))
    .flatMap((f) => parseAllDocuments(readFileSync(join(folder, f), 'utf8')).map((d) => d.toJS() as KubeObject));
  for (const crd of crds) {
    await c.request('PATCH', `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${crd.metadata.name}`, {
      body: crd,
      contentType: 'application/apply-patch+yaml',
      query: { fieldManager: 'migrate-test', force: true },
    });
  }
  for (const crd of crds) {
    await waitFor(async () => ((await c.request<any>('GET', `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${crd.metadata.name}`)).status?.conditions ?? []).some((x: any) => x.type === 'Established' && x.status === 'True'), {
      timeoutMs: 60_000,
      message: `${crd.metadata.name} Established`,
    });
  }
}

const ns = 'workspace-coffee';
const path = {
  template: `/apis/crownlabs.polito.it/v1alpha2/namespaces/${ns}/templates/espresso`,
  instance: `/apis/crownlabs.polito.it/v1alpha2/namespaces/${ns}/instances/espresso-1`,
  workspace: '/apis/crownlabs.polito.it/v1alpha1/workspaces/coffee',
  tenant: '/apis/crownlabs.polito.it/v1alpha2/tenants/mario',
};
const get = (p: string) => c.request<any>('GET', p);

function migrate(args: string[]) {
  const r = spawnSync(process.execPath, [BIN, 'migrate', '--kubeconfig', kubeconfig, ...args], { encoding: 'utf8', env: { ...process.env, CI: 'true' } });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

describe('crownlabs migrate --apply across the CRD upgrade (private cluster)', () => {
  let copy: string;
  beforeAll(async () => {
    kubeconfig = execFileSync(TEST_CLUSTER_SCRIPT, ['start'], { env, encoding: 'utf8', timeout: 240_000 }).trim().split('\n').at(-1)!;
    c = rest(loadKubeConfig(kubeconfig));
    await installCrds('2e8aeb9');
    await c.request('POST', '/api/v1/namespaces', { body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } } });
    await c.request('POST', '/apis/crownlabs.polito.it/v1alpha1/workspaces', { body: { apiVersion: 'crownlabs.polito.it/v1alpha1', kind: 'Workspace', metadata: { name: 'coffee' }, spec: { prettyName: 'C', quota: { cpu: '2500m', memory: '8Gi', instances: 3 } } } });
    await c.request('POST', '/apis/crownlabs.polito.it/v1alpha2/tenants', {
      body: { apiVersion: 'crownlabs.polito.it/v1alpha2', kind: 'Tenant', metadata: { name: 'mario' }, spec: { firstName: 'M', lastName: 'R', email: 'm@example.com', quota: { cpu: 4, memory: '8Gi', instances: 2 } } },
    });
    await c.request('POST', `/apis/crownlabs.polito.it/v1alpha2/namespaces/${ns}/templates`, {
      body: {
        apiVersion: 'crownlabs.polito.it/v1alpha2',
        kind: 'Template',
        metadata: { name: 'espresso', namespace: ns },
        spec: { prettyName: 'E', description: 'd', deleteAfter: '7d', environmentList: [{ name: 'desktop', image: 'img', environmentType: 'Container', resources: { cpu: 1, reservedCPUPercentage: 50, memory: '2Gi' } }] },
      },
    });
    const inst = await c.request<any>('POST', `/apis/crownlabs.polito.it/v1alpha2/namespaces/${ns}/instances`, {
      body: {
        apiVersion: 'crownlabs.polito.it/v1alpha2',
        kind: 'Instance',
        metadata: { name: 'espresso-1', namespace: ns },
        spec: { 'template.crownlabs.polito.it/TemplateRef': { name: 'espresso', namespace: ns }, 'tenant.crownlabs.polito.it/TenantRef': { name: 'mario' }, customizationUrls: { statusCheck: 'https://check.example/', contentOrigin: 'https://content.example/a.tar' } },
      },
    });
    await c.request('PUT', `${path.instance}/status`, { body: { ...inst, status: { phase: 'Off', ip: '10.1.2.3', automation: { submissionTime: '2026-12-01T10:00:00Z' } } } });
    // The copy, as `kubectl get -o yaml` would give it (managedFields left in: migrate drops them).
    copy = join(dir, 'copy.yaml');
    writeFileSync(copy, (await Promise.all(Object.values(path).map(get))).map((o) => JSON.stringify(o)).join('\n---\n'));
    await installCrds('e62be9e');
  }, 300_000);

  afterAll(() => {
    execFileSync(TEST_CLUSTER_SCRIPT, ['stop'], { env, timeout: 60_000 });
    rmSync(dir, { recursive: true, force: true });
  });

  it('once the e62be9e CRDs are in, the API server returns the objects pruned of the 2e8aeb9 fields (why the copy comes first)', async () => {
    await waitFor(async () => (await get(path.template)).spec.cleanup !== undefined, { timeoutMs: 30_000, message: 'Template read through the e62be9e schema' });
    const t = await get(path.template);
    expect(t.spec.deleteAfter).toBeUndefined();
    expect(t.spec.cleanup.deleteAfterCreation).toBe('never');
    expect((await get(path.instance)).status.ip).toBeUndefined();
    const r = migrate(['--from-cluster']);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/serves the CrownLabs CRDs of e62be9e: the API server no longer returns the fields/);
  });

  it('--apply writes the migrated copy back: spec moved, Instance status carried to its environment; exit 3 for the values not carried', async () => {
    const r = migrate(['-f', copy, '--apply']);
    expect(r.stderr).toMatch(/Workspace coffee\): warning: spec\.quota\.cpu: "2500m"/);
    expect(r.code).toBe(3);
    expect(r.stdout).toContain('updated   Instance workspace-coffee/espresso-1 status\n');
    expect((await get(path.template)).spec.cleanup).toEqual({ deleteAfterCreation: '7d', stopAfterInactivity: 'never', deleteAfterInactivity: 'never' });
    const inst = await get(path.instance);
    expect(inst.spec.statusCheckUrl).toBe('https://check.example/');
    expect(inst.spec.contentUrls).toEqual({ desktop: { origin: 'https://content.example/a.tar' } });
    expect(inst.status.environments).toEqual([expect.objectContaining({ name: 'desktop', phase: 'Off', ip: '10.1.2.3', automation: { submissionTime: '2026-12-01T10:00:00Z' } })]);
    expect((await get(path.tenant)).spec.personalWorkspace).toEqual({ cpu: 4, memory: '8Gi', instances: 2 });
    expect((await get(path.workspace)).spec.quota.cpu).toBe(2);
    const tpl = await get(path.template);
    expect(tpl.metadata.managedFields.some((f: any) => f.manager === 'crownlabs-composer' && f.operation === 'Update')).toBe(true);
  });

  it('the same copy again: every object changed since it was taken, so the dry run refuses and nothing is written', async () => {
    const before = await Promise.all(Object.values(path).map(get));
    const r = migrate(['-f', copy, '--apply', '-q']);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/Template workspace-coffee\/espresso: changed in the cluster since the copy was taken/);
    expect(r.stderr).toMatch(/updates refused by the server's dry run: nothing written/);
    const after = await Promise.all(Object.values(path).map(get));
    expect(after.map((o) => o.metadata.resourceVersion)).toEqual(before.map((o) => o.metadata.resourceVersion));
  });
});
