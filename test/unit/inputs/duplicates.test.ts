// The same object defined in two input files (upstream's operators/samples/ defines one Namespace
// twice, and kubectl apply -f takes it): identical definitions are one object, differing ones an
// error naming both places.
import { describe, expect, it } from 'vitest';
import { inventoryFromInput } from '../../../src/inputs/load.ts';
import { parseInputText } from '../../../src/inputs/parse.ts';
import { formatProblem } from '../../../src/inputs/problems.ts';

function load(files: Record<string, string>) {
  const parsed = Object.entries(files).map(([name, text]) => parseInputText(text, name));
  const loaded = inventoryFromInput(
    parsed.flatMap((p) => p.objects),
    parsed.flatMap((p) => p.problems),
  );
  return { ...loaded, errors: loaded.problems.filter((p) => p.severity === 'error').map(formatProblem) };
}

const NAMESPACE = 'apiVersion: v1\nkind: Namespace\nmetadata:\n  name: workspace-tea\n  labels:\n    crownlabs.polito.it/type: workspace\n';
const WORKSPACE = 'apiVersion: crownlabs.polito.it/v1alpha1\nkind: Workspace\nmetadata:\n  name: tea\nspec:\n  prettyName: Tea\n  quota: {cpu: 1, memory: 1G, instances: 1}\n';

describe('objects defined in more than one input file', () => {
  it('the same Namespace in two files is one object, with no problem', () => {
    const r = load({ 'a.yaml': NAMESPACE, 'b.yaml': NAMESPACE });
    expect(r.errors).toEqual([]);
    expect([...r.inventory.namespaces.keys()]).toEqual(['workspace-tea']);
    // The first definition is the one kept (its place is what later problems name).
    expect(r.inventory.sourceOf(r.inventory.namespaces.get('workspace-tea')!)?.file).toBe('a.yaml');
  });

  it('is identical once read: key order, flow or block style and YAML or JSON do not matter', () => {
    const json = JSON.stringify({ kind: 'Workspace', apiVersion: 'crownlabs.polito.it/v1alpha1', spec: { quota: { instances: 1, memory: '1G', cpu: 1 }, prettyName: 'Tea' }, metadata: { name: 'tea' } });
    const r = load({ 'a.yaml': WORKSPACE, 'b.json': json });
    expect(r.errors).toEqual([]);
    expect(r.inventory.workspaces.size).toBe(1);
  });

  it('a field written as its CRD default is the same as one left out', () => {
    const template = (extra: string) =>
      `apiVersion: crownlabs.polito.it/v1alpha2\nkind: Template\nmetadata: {name: t, namespace: workspace-tea}\nspec:\n  prettyName: T\n  description: d\n  environmentList:\n  - name: e\n    image: x\n    environmentType: Container\n    resources: {cpu: 1, reservedCPUPercentage: 25, memory: 1G}\n${extra}`;
    expect(load({ 'a.yaml': template(''), 'b.yaml': template('    guiEnabled: true\n') }).errors).toEqual([]);
    expect(load({ 'a.yaml': template(''), 'b.yaml': template('    guiEnabled: false\n') }).errors).toEqual([
      expect.stringMatching(/duplicate Template "workspace-tea\/t" \(first defined in a\.yaml, document 1\), differing at spec\.environmentList\[0\]\.guiEnabled$/),
    ]);
  });

  it('differing definitions stay an error naming both places and the first field that differs', () => {
    const r = load({ 'a.yaml': WORKSPACE, 'b.yaml': `---\n${WORKSPACE.replace('prettyName: Tea', 'prettyName: Tea again')}` });
    expect(r.errors).toEqual(['b.yaml:5:9 (document 1, Workspace tea): error: metadata.name: duplicate Workspace "tea" (first defined in a.yaml, document 1), differing at spec.prettyName']);
    const labels = load({ 'a.yaml': NAMESPACE, 'b.yaml': NAMESPACE.replace('type: workspace', 'type: tenant') });
    expect(labels.errors).toEqual([
      'b.yaml:4:9 (document 1, Namespace workspace-tea): error: metadata.name: duplicate Namespace "workspace-tea" (first defined in a.yaml, document 1), differing at metadata.labels["crownlabs.polito.it/type"]',
    ]);
  });

  it('the same document twice in one file is one object too', () => {
    const r = load({ 'a.yaml': `${WORKSPACE}---\n${WORKSPACE}` });
    expect(r.errors).toEqual([]);
  });
});
