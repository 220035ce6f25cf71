import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { loadInventory } from '../../../src/inputs/load.ts';
import type { KubeObject } from '../../../src/inputs/types.ts';
import { compose, renderAll, type RenderedSet } from '../../../src/compose/compose.ts';
import { loadConfig, type ComposerConfig } from '../../../src/config/config.ts';
import { gitopsFiles } from '../../../src/sinks/gitops.ts';

const ROOT = join(import.meta.dirname, '..', '..', '..');
const exampleConfig = (over: Partial<ComposerConfig> = {}) => ({ ...loadConfig({ file: join(ROOT, 'examples', 'crownlabs.config.yaml') }).config, ...over });

function exampleSets(config: ComposerConfig): RenderedSet[] {
  const { inventory } = loadInventory([join(ROOT, 'examples', 'lab')]);
  return renderAll(compose(inventory, config));
}

interface Project {
  spec: {
    destinations: { server: string; namespace: string }[];
    clusterResourceWhitelist: { group: string; kind: string }[];
    namespaceResourceWhitelist: { group: string; kind: string }[];
    sourceRepos: string[];
  };
}

/** Argo CD's glob for destination namespaces (only `*` appears in ours). */
const globMatch = (pattern: string, value: string) => new RegExp(`^${pattern.split('*').map((p) => p.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('.*')}$`).test(value);
const group = (apiVersion: string) => (apiVersion.includes('/') ? apiVersion.slice(0, apiVersion.lastIndexOf('/')) : '');

/** The AppProject and every object Argo CD syncs (all but root/, which is applied by hand). */
function tree(files: Map<string, string>): { project: Project; synced: KubeObject[]; apps: KubeObject[] } {
  const [, projectYaml] = [...files].find(([p]) => p.startsWith('root/AppProject_'))!;
  const synced: KubeObject[] = [];
  for (const [path, content] of files) {
    if (!path.endsWith('.yaml') || path.endsWith('kustomization.yaml') || path.startsWith('root/')) continue;
    synced.push(parse(content) as KubeObject);
  }
  const rootApp = parse([...files].find(([p]) => p.startsWith('root/Application_'))![1]) as KubeObject;
  return { project: parse(projectYaml) as Project, synced, apps: [rootApp, ...synced.filter((o) => o.kind === 'Application')] };
}

/** Argo CD's IsResourcePermitted (pkg/apis/application/v1alpha1/app_project_types.go). */
function permitted(p: Project, o: KubeObject): boolean {
  const ns = o.metadata.namespace;
  const list = ns ? p.spec.namespaceResourceWhitelist : p.spec.clusterResourceWhitelist;
  const kindOk = list.some((w) => globMatch(w.group, group(o.apiVersion)) && globMatch(w.kind, o.kind));
  return kindOk && (!ns || p.spec.destinations.some((d) => globMatch(d.namespace, ns)));
}

describe('the AppProject is least privilege (#17.3)', () => {
  it('permits every object the tree syncs and every Application destination, with no wildcard kind, group or namespace', () => {
    const config = exampleConfig();
    const { project, synced, apps } = tree(gitopsFiles(exampleSets(config), config));
    expect(synced.filter((o) => !permitted(project, o)).map((o) => `${o.kind} ${o.metadata.namespace}/${o.metadata.name}`)).toEqual([]);
    for (const app of apps) {
      const dest = (app.spec as { destination: { namespace: string } }).destination.namespace;
      expect(dest, app.metadata.name).toBeTruthy();
      expect(project.spec.destinations.some((d) => globMatch(d.namespace, dest)), `${app.metadata.name} → ${dest}`).toBe(true);
    }
    const all = [...project.spec.clusterResourceWhitelist, ...project.spec.namespaceResourceWhitelist];
    expect(all.filter((w) => w.kind.includes('*') || w.group.includes('*'))).toEqual([]);
    expect(project.spec.destinations.map((d) => d.namespace)).not.toContain('*');
    expect(project.spec.sourceRepos).toEqual([config.gitopsRepoUrl]);
  });

  it('lists only what the tree uses: each kind is used, each namespace entry holds an object or a destination', () => {
    const config = exampleConfig();
    const { project, synced, apps } = tree(gitopsFiles(exampleSets(config), config));
    for (const w of project.spec.namespaceResourceWhitelist) expect(synced.some((o) => o.metadata.namespace && o.kind === w.kind && group(o.apiVersion) === w.group), `${w.group}/${w.kind}`).toBe(true);
    for (const w of project.spec.clusterResourceWhitelist) expect(synced.some((o) => !o.metadata.namespace && o.kind === w.kind && group(o.apiVersion) === w.group), `${w.group}/${w.kind}`).toBe(true);
    const used = [...synced.map((o) => o.metadata.namespace), ...apps.map((a) => (a.spec as { destination: { namespace: string } }).destination.namespace)].filter(Boolean) as string[];
    for (const d of project.spec.destinations) expect(used.some((ns) => globMatch(d.namespace, ns)), d.namespace).toBe(true);
    // CrownLabs' namespace families are patterns; the others (config-named) are exact.
    expect(project.spec.destinations.map((d) => d.namespace)).toEqual(['argocd', 'mydrive-pvcs', 'sandbox-*', 'tenant-*', 'workspace-*']);
  });

  it('follows the input: without Instances, no workload kind and no VirtualMachine is permitted', () => {
    const config = exampleConfig();
    const sets = exampleSets(config).filter((s) => s.unit.parent.kind !== 'Instance');
    const { project } = tree(gitopsFiles(sets, config));
    const kinds = project.spec.namespaceResourceWhitelist.map((w) => w.kind);
    expect(kinds).not.toContain('Deployment');
    expect(kinds).not.toContain('VirtualMachine');
    expect(kinds).toContain('Application');
  });

  it('a namespace outside the families (an Instance in kube-system, say) is listed exactly, not widened to a pattern', () => {
    const config = exampleConfig({ mydrivePvcsNamespace: 'tenants' });
    const sets = exampleSets(config);
    const { project } = tree(gitopsFiles(sets, config));
    // `tenants` shares a prefix with `tenant-<name>` but is no tenant namespace: listed as is.
    expect(project.spec.destinations.map((d) => d.namespace)).toEqual(['argocd', 'sandbox-*', 'tenant-*', 'tenants', 'workspace-*']);
    const moved = sets.map((s) => ({ ...s, objects: s.objects.map((o) => (o.metadata.namespace === 'tenant-john-doe' && o.kind === 'Service' ? { ...o, metadata: { ...o.metadata, namespace: 'kube-system' } } : o)) }));
    const { project: p2 } = tree(gitopsFiles(moved, config));
    const dest = p2.spec.destinations.map((d) => d.namespace);
    expect(dest).toContain('kube-system');
    expect(dest.filter((d) => d.startsWith('kube'))).toEqual(['kube-system']);
  });
});
