import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { describe, expect, it } from 'vitest';
import { MANIFESTS_HEADER } from '../../../src/cli/manifests.ts';
import { CONFIG, crownlabs } from '../../support/cli.ts';
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Any = any;

const docs = (text: string) => parseAllDocuments(text).map((d) => d.toJS()).filter(Boolean);

describe('crownlabs manifests', () => {
  it('prints the install; -o writes the same stream to a file, after a header line', () => {
    const a = crownlabs(['manifests', '--config', CONFIG, '--platform-shards', 'a,b']);
    expect(a.code).toBe(0);
    const objects = docs(a.stdout);
    expect(objects.filter((o) => o.kind === 'Deployment').map((o) => o.metadata.name)).toEqual(['crownlabs-controller-a', 'crownlabs-controller-b', 'ssh-bastion']);
    const file = join(mkdtempSync(join(tmpdir(), 'manifests-')), 'platform.yaml');
    expect(crownlabs(['manifests', '--config', CONFIG, '--platform-shards', 'a,b', '-o', file]).code).toBe(0);
    expect(readFileSync(file, 'utf8')).toBe(MANIFESTS_HEADER + a.stdout);
  });

  it('--argocd-application renders the Application that syncs the committed install', () => {
    const objects = docs(crownlabs(['manifests', '--config', CONFIG, '--argocd-application', 'platform']).stdout);
    expect(objects).toHaveLength(2);
    expect(objects[1]).toMatchObject({ kind: 'Application', metadata: { name: 'crownlabs-platform' }, spec: { project: 'crownlabs-platform', source: { path: 'platform' }, destination: { namespace: 'crownlabs-composer' } } });
    // Its own least-privilege project (#17.3): the lab's project does not permit CRDs, this one does, and no wildcard.
    const project = objects[0] as Any;
    expect(project).toMatchObject({ kind: 'AppProject', metadata: { name: 'crownlabs-platform' } });
    expect(project.spec.clusterResourceWhitelist).toContainEqual({ group: 'apiextensions.k8s.io', kind: 'CustomResourceDefinition' });
    expect(project.spec.destinations.map((d: Any) => d.namespace)).toContain('crownlabs-composer');
    expect(JSON.stringify(project.spec)).not.toContain('"*"');
  });

  it('--argocd-cm renders the argocd-cm keys the gitops tree needs, the Lua as readable blocks', () => {
    const cm = crownlabs(['manifests', '--config', CONFIG, '--argocd-namespace', 'gitops', '--argocd-cm']);
    expect(cm.code).toBe(0);
    const objects = docs(cm.stdout);
    expect(objects).toHaveLength(1);
    // Argo CD reads only ConfigMaps labelled part-of: argocd.
    expect(objects[0]).toMatchObject({ kind: 'ConfigMap', metadata: { name: 'argocd-cm', namespace: 'gitops', labels: { 'app.kubernetes.io/part-of': 'argocd' } } });
    expect(Object.keys(objects[0].data).sort()).toEqual([
      'application.resourceTrackingMethod',
      'resource.customizations.health.argoproj.io_Application',
      'resource.customizations.health.cdi.kubevirt.io_DataVolume',
      'resource.customizations.health.crownlabs.polito.it_Instance',
      'resource.customizations.health.gateway.networking.k8s.io_HTTPRoute',
      'resource.customizations.health.kubevirt.io_VirtualMachine',
      'resource.customizations.health.kubevirt.io_VirtualMachineInstance',
    ]);
    expect(objects[0].data['application.resourceTrackingMethod']).toBe('annotation');
    expect(cm.stdout).toContain('resource.customizations.health.kubevirt.io_VirtualMachine: |\n    local hs = ');
  });

  it('--argocd-cm with --argocd-application is a usage error (exit 2)', () => {
    const r = crownlabs(['manifests', '--argocd-cm', '--argocd-application', 'platform']);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(/--argocd-application and --argocd-cm/);
  });

  it('a bad config value is an input error (exit 1)', () => {
    expect(crownlabs(['manifests', '--platform-controller-replicas', 'two']).code).toBe(1);
  });
});
