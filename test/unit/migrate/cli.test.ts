import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseInputText, readInputs } from '../../../src/inputs/parse.ts';
import { crownlabs } from '../../support/cli.ts';

const LAB = `apiVersion: crownlabs.polito.it/v1alpha1
kind: Workspace
metadata: {name: coffee}
spec: {prettyName: Coffee, quota: {cpu: 2500m, memory: 8Gi, instances: 3}}
---
apiVersion: crownlabs.polito.it/v1alpha2
kind: Template
metadata: {name: espresso, namespace: workspace-coffee}
spec:
  prettyName: Espresso
  description: d
  deleteAfter: 7d
  workspace.crownlabs.polito.it/WorkspaceRef: {name: coffee}
  environmentList:
  - name: desktop
    image: registry.example/desktop:1
    environmentType: Container
    mode: Exam
    resources: {cpu: 1, reservedCPUPercentage: 50, memory: 2Gi}
---
apiVersion: crownlabs.polito.it/v1alpha2
kind: Tenant
metadata: {name: mario}
spec:
  firstName: Mario
  lastName: Rossi
  email: mario@example.com
  workspaces: [{name: coffee, role: user}]
  quota: {cpu: 4, memory: 8Gi, instances: 2}
---
apiVersion: crownlabs.polito.it/v1alpha2
kind: Instance
metadata: {name: espresso-1, namespace: tenant-mario}
spec:
  template.crownlabs.polito.it/TemplateRef: {name: espresso, namespace: workspace-coffee}
  tenant.crownlabs.polito.it/TenantRef: {name: mario}
  customizationUrls:
    statusCheck: https://check.example/
    contentOrigin: https://content.example/a.tar
    contentDestination: /data
`;

function labFile(text = LAB): { dir: string; file: string } {
  const dir = mkdtempSync(join(tmpdir(), 'migrate-cli-'));
  const file = join(dir, 'lab.yaml');
  writeFileSync(file, text);
  return { dir, file };
}

describe('crownlabs migrate -f', () => {
  it('writes e62be9e objects that the loader accepts at e62be9e (and refuses at 2e8aeb9); exit 3 as some values were not carried', () => {
    const { dir, file } = labFile();
    const r = crownlabs(['migrate', '-f', 'lab.yaml'], dir);
    expect(r.code).toBe(3);
    const parsed = parseInputText(r.stdout, 'out.yaml', 'e62be9e');
    expect(parsed.problems).toEqual([]);
    expect(parsed.objects.map((o) => o.object.kind)).toEqual(['Workspace', 'Template', 'Tenant', 'Instance']);
    const [ws, tpl, tenant, inst] = parsed.objects.map((o) => o.object as any);
    expect(ws.spec.quota.cpu).toBe(2);
    expect(tpl.spec.cleanup.deleteAfterCreation).toBe('7d');
    expect(tenant.spec.personalWorkspace).toEqual({ cpu: 4, memory: '8Gi', instances: 2 });
    expect(inst.spec.statusCheckUrl).toBe('https://check.example/');
    expect(inst.spec.contentUrls).toEqual({ desktop: { origin: 'https://content.example/a.tar', destination: '/data' } });
    expect(parseInputText(r.stdout, 'out.yaml', '2e8aeb9').problems.some((p) => p.severity === 'error')).toBe(true);
    expect(readFileSync(file, 'utf8')).toBe(LAB);
  });

  it('each value not carried is a warning naming the file, the document, the object and the field', () => {
    const { dir } = labFile();
    const r = crownlabs(['migrate', '-f', 'lab.yaml'], dir);
    const warnings = r.stderr.split('\n').filter((l) => / warning: /.test(l));
    expect(warnings).toEqual([
      expect.stringMatching(/^lab\.yaml \(document 1, Workspace coffee\): warning: spec\.quota\.cpu: "2500m": e62be9e counts CPU in whole cores; floored to 2/),
      expect.stringMatching(/^lab\.yaml \(document 2, Template workspace-coffee\/espresso\): warning: spec\.environmentList\[0\]\.mode: "Exam" cannot be carried/),
      expect.stringMatching(/^lab\.yaml \(document 3, Tenant mario\): warning: spec\.quota: carried as spec\.personalWorkspace, whose meaning differs/),
    ]);
  });

  it('a lab whose values all carry: exit 0, no warning', () => {
    const plain = LAB.replace('2500m', '2').replace('    mode: Exam\n', '').replace('  quota: {cpu: 4, memory: 8Gi, instances: 2}\n', '');
    const { dir } = labFile(plain);
    const r = crownlabs(['migrate', '-f', 'lab.yaml'], dir);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
  });

  it('an object that cannot exist at e62be9e: exit 1, the error at its field, nothing on stdout', () => {
    const { dir } = labFile(LAB.replace('name: desktop', 'name: a-far-too-long-name'));
    const r = crownlabs(['migrate', '-f', 'lab.yaml'], dir);
    expect(r.code).toBe(1);
    expect(r.stdout).toBe('');
    const errors = r.stderr.split('\n').filter((l) => /\): error: /.test(l));
    expect(errors).toEqual([expect.stringMatching(/^lab\.yaml \(document 2, Template workspace-coffee\/espresso\): error: spec\.environmentList\[0\]\.name: "a-far-too-long-name" breaks/)]);
  });

  it('an input invalid at 2e8aeb9 is refused before any migration', () => {
    const { dir } = labFile(LAB.replace('deleteAfter: 7d', 'cleanup: {deleteAfterCreation: 7d}'));
    const r = crownlabs(['migrate', '-f', 'lab.yaml'], dir);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/spec\.cleanup: unknown field/);
    expect(r.stderr).toMatch(/input errors: nothing migrated/);
  });

  it('-o DIR: one file per input file, below the folder given, valid at e62be9e; the moves are listed on stdout', () => {
    const { dir } = labFile();
    const out = join(mkdtempSync(join(tmpdir(), 'migrate-out-')), 'out');
    const r = crownlabs(['migrate', '-f', dir, '-o', out], dir);
    expect(r.code).toBe(3);
    expect(readdirSync(out).filter((f) => !f.startsWith('.'))).toEqual(['lab.yaml']);
    // An output folder is never input: its file is read as one.
    const back = readInputs([join(out, 'lab.yaml')], { level: 'e62be9e' });
    expect(back.problems).toEqual([]);
    expect(back.objects).toHaveLength(4);
    expect(r.stdout).toContain('  moved    spec.deleteAfter → spec.cleanup.deleteAfterCreation\n');
    expect(r.stdout).toContain('  moved    spec.customizationUrls.contentOrigin → spec.contentUrls.desktop.origin\n');
    expect(r.stdout).toContain('  removed  spec.environmentList[0].mode (Exam not carried)\n');
    expect(r.stdout).toMatch(/4 to migrate, 0 unchanged\n$/);
  });

  it('--apply needs a copy (-f), not --from-cluster: usage error, exit 2', () => {
    const r = crownlabs(['migrate', '--from-cluster', '--apply']);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/--apply takes a copy of the live objects/);
  });

  it('--apply refuses objects without uid and resourceVersion (not read from a cluster) before contacting one', () => {
    const { dir } = labFile();
    const kubeconfig = join(dir, 'kubeconfig');
    writeFileSync(kubeconfig, 'apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: "https://127.0.0.1:1"}}]\ncontexts: [{name: c, context: {cluster: c, user: u}}]\ncurrent-context: c\nusers: [{name: u, user: {}}]\n');
    const r = crownlabs(['migrate', '-f', 'lab.yaml', '--apply', '--kubeconfig', kubeconfig], dir);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/\(document 2, Template workspace-coffee\/espresso\): error: metadata\.resourceVersion: --apply writes back objects read from the cluster/);
  });
});
