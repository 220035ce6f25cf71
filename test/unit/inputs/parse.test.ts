import { describe, expect, it } from 'vitest';
import { Inventory } from '../../../src/inputs/inventory.ts';
import { parseInputText } from '../../../src/inputs/parse.ts';
import { formatProblem, pointerToFieldPath } from '../../../src/inputs/problems.ts';
import type { Instance, Template, Tenant } from '../../../src/inputs/types.ts';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Any = any;

const TEMPLATE = `apiVersion: crownlabs.polito.it/v1alpha2
kind: Template
metadata: {name: t, namespace: workspace-w}
spec:
  prettyName: T
  description: d
  workspace.crownlabs.polito.it/WorkspaceRef: {name: w}
  environmentList:
    - name: e
      image: i
      environmentType: Container
      resources: {cpu: 1, reservedCPUPercentage: 10, memory: 1G}
`;

describe('§1 CRD defaults applied like the API server', () => {
  it('fills Template and environment defaults', () => {
    const { objects, problems } = parseInputText(TEMPLATE, 'f.yaml');
    expect(problems).toEqual([]);
    const t = objects[0].object as Template;
    expect(t.spec.deleteAfter).toBe('never');
    expect(t.spec.environmentList[0]).toMatchObject({ guiEnabled: true, disableControls: false, persistent: false, mode: 'Standard', rewriteURL: false, mountMyDriveVolume: true });
  });
  it('fills Instance running and Tenant createSandbox', () => {
    const { objects } = parseInputText(
      `apiVersion: crownlabs.polito.it/v1alpha2
kind: Instance
metadata: {name: i, namespace: n}
spec:
  template.crownlabs.polito.it/TemplateRef: {name: t, namespace: workspace-w}
  tenant.crownlabs.polito.it/TenantRef: {name: x}
---
apiVersion: crownlabs.polito.it/v1alpha2
kind: Tenant
metadata: {name: x}
spec: {firstName: A, lastName: B, email: a@b.c}
`,
      'f.yaml',
    );
    expect((objects[0].object as Instance).spec.running).toBe(true);
    expect((objects[1].object as Tenant).spec.createSandbox).toBe(false);
  });
  it('accepts kubectl List documents', () => {
    const list = JSON.stringify({ apiVersion: 'v1', kind: 'List', items: [{ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'a' } }, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'b' } }] });
    expect(parseInputText(list, 'l.json').objects.map((o) => o.object.metadata.name)).toEqual(['a', 'b']);
  });
});

describe('input problems', () => {
  it('rejects a bad e-mail with the CRD pattern, naming the field and line', () => {
    const { problems } = parseInputText('apiVersion: crownlabs.polito.it/v1alpha2\nkind: Tenant\nmetadata: {name: x}\nspec:\n  firstName: A\n  lastName: B\n  email: not-an-email\n', 'f.yaml');
    expect(problems).toHaveLength(1);
    expect(formatProblem(problems[0])).toMatch(/^f\.yaml:7:10 \(document 1, Tenant x\): error: spec\.email: must match pattern/);
  });
  it('rejects bad roles, names and namespaces', () => {
    const { problems } = parseInputText(
      `apiVersion: crownlabs.polito.it/v1alpha2
kind: Tenant
metadata: {name: Bad_Name, namespace: nope}
spec: {firstName: A, lastName: B, email: a@b.c, workspaces: [{name: w, role: owner}]}
`,
      'f.yaml',
    );
    expect(problems.map((p) => `${p.field}: ${p.message}`)).toEqual([
      'metadata.name: "Bad_Name" is not a valid name (lower-case RFC 1123 subdomain)',
      'metadata.namespace: Tenant is cluster-scoped and takes no namespace',
      'spec.workspaces[0].role: must be one of "manager", "user"',
    ]);
  });
  it('rejects label and annotation keys and label values the API server would refuse on the object, naming each', () => {
    const { objects, problems } = parseInputText(
      `apiVersion: crownlabs.polito.it/v1alpha2
kind: Tenant
metadata:
  name: x
  labels:
    ok.example/fine: yes-1
    "bad key!": v
    a/b/c: v
    ok: "$(rm -rf /)"
    long: ${'a'.repeat(64)}
    empty: ""
  annotations:
    crownlabs.polito.it/any-value: "spaces and $(symbols) are fine here"
    "-bad": v
spec: {firstName: A, lastName: B, email: a@b.c}
`,
      'f.yaml',
    );
    expect(problems.map((p) => `${formatProblem(p).split(': error: ')[0].split(' ')[0]} ${p.field}`)).toEqual([
      'f.yaml:7:17 metadata.labels["bad key!"]',
      'f.yaml:8:12 metadata.labels["a/b/c"]',
      'f.yaml:9:9 metadata.labels.ok',
      'f.yaml:10:11 metadata.labels.long',
      'f.yaml:14:13 metadata.annotations["-bad"]',
    ]);
    expect(problems[0].message).toMatch(/^"bad key!" is not a valid label key/);
    expect(problems[2].message).toMatch(/^"\$\(rm -rf \/\)" is not a valid label value/);
    expect(problems[4].message).toMatch(/^"-bad" is not a valid annotation key/);
    expect(objects).toHaveLength(0);
  });
  it('names keys with dots and slashes in bracket form', () => {
    expect(pointerToFieldPath('/spec/template.crownlabs.polito.it~1TemplateRef/name')).toBe('spec["template.crownlabs.polito.it/TemplateRef"].name');
  });
});

describe('Inventory references', () => {
  const build = (text: string) => {
    const parsed = parseInputText(text, 'f.yaml');
    return Inventory.fromObjects(parsed.objects);
  };
  it('warns about Templates of unknown Workspaces and Tenants in unknown Workspaces, listing each', () => {
    const { problems } = build(`${TEMPLATE}---
apiVersion: crownlabs.polito.it/v1alpha2
kind: Tenant
metadata: {name: x}
spec: {firstName: A, lastName: B, email: a@b.c, workspaces: [{name: w, role: user}, {name: v, role: manager}]}
`);
    expect(problems.map((p) => [p.severity, p.field, p.message])).toEqual([
      ['warning', 'spec["workspace.crownlabs.polito.it/WorkspaceRef"].name', 'Workspace w not found'],
      ['warning', 'spec.workspaces[0].name', 'Workspace w not found (reported in status.failingWorkspaces)'],
      ['warning', 'spec.workspaces[1].name', 'Workspace v not found (reported in status.failingWorkspaces)'],
    ]);
  });
  it('finds workspace managers in name order for cloud-init keys', () => {
    const tenant = (name: string, role: string) =>
      JSON.stringify({ apiVersion: 'crownlabs.polito.it/v1alpha2', kind: 'Tenant', metadata: { name }, spec: { firstName: 'A', lastName: 'B', email: 'a@b.c', workspaces: [{ name: 'w', role }] } });
    const { inventory } = build([tenant('zed', 'manager'), tenant('amy', 'manager'), tenant('bob', 'user')].join('\n---\n'));
    expect(inventory.managersOf('w').map((t: Any) => t.metadata.name)).toEqual(['amy', 'zed']);
  });
  it('the managers follow a Tenant upserted or removed (the controller keeps one Inventory)', () => {
    const tenant = (name: string, role: string) => ({ apiVersion: 'crownlabs.polito.it/v1alpha2', kind: 'Tenant', metadata: { name }, spec: { firstName: 'A', lastName: 'B', email: 'a@b.c', workspaces: [{ name: 'w', role }] } });
    const { inventory } = build([tenant('zed', 'manager'), tenant('bob', 'user')].map((t) => JSON.stringify(t)).join('\n---\n'));
    expect(inventory.managersOf('w').map((t: Any) => t.metadata.name)).toEqual(['zed']);
    inventory.upsert(tenant('bob', 'manager') as Any);
    expect(inventory.managersOf('w').map((t: Any) => t.metadata.name)).toEqual(['bob', 'zed']);
    inventory.remove(tenant('zed', 'manager') as Any);
    expect(inventory.managersOf('w').map((t: Any) => t.metadata.name)).toEqual(['bob']);
  });
});
