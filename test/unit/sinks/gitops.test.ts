import { spawn } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { loadInventory } from '../../../src/inputs/load.ts';
import type { KubeObject } from '../../../src/inputs/types.ts';
import { compose, renderAll } from '../../../src/compose/compose.ts';
import { loadConfig, type ComposerConfig } from '../../../src/config/config.ts';
import { OUTPUT_MARKER } from '../../../src/output-marker.ts';
import { listFiles, writeTreeAtomically } from '../../../src/sinks/atomic-tree.ts';
import { gitopsFiles, GitopsTreeBuilder, objectSyncWave } from '../../../src/sinks/gitops.ts';
import { GitopsStager, type StageableFile } from '../../../src/sinks/gitops-stage.ts';
import { compareUnits } from '../../../src/compose/compose.ts';

const ROOT = join(import.meta.dirname, '..', '..', '..');
const CONFIG_FILE = join(ROOT, 'examples', 'crownlabs.config.yaml');
const exampleConfig = (over: Partial<ComposerConfig> = {}) => ({ ...loadConfig({ file: CONFIG_FILE }).config, ...over });
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Any = any;

function exampleSets(config = exampleConfig()) {
  const { inventory } = loadInventory([join(ROOT, 'examples', 'lab')]);
  return renderAll(compose(inventory, config));
}

const key = (o: KubeObject) => `${o.kind}/${o.metadata.namespace ?? ''}/${o.metadata.name}`;

describe('one composition, two sinks', () => {
  it('the gitops tree holds exactly the objects synth renders, apart from the documented differences', () => {
    const config = exampleConfig();
    const sets = exampleSets(config);
    const synthObjects = new Map(sets.flatMap((s) => s.objects).map((o) => [key(o), o]));
    const files = gitopsFiles(sets, config);
    const treeObjects = new Map<string, KubeObject>();
    for (const [path, content] of files) {
      if (!/^(workspaces|tenants|instances)\//.test(path) || path.endsWith('kustomization.yaml')) continue;
      const o = parse(content) as KubeObject;
      treeObjects.set(key(o), o);
    }
    const secrets = [...synthObjects.values()].filter((o) => o.kind === 'Secret');
    expect(secrets.length).toBeGreaterThan(0);
    // Same objects, except Secrets, which "existing" mode leaves to the cluster.
    expect([...treeObjects.keys()].sort()).toEqual([...synthObjects.keys()].filter((k) => !k.startsWith('Secret/')).sort());
    for (const [k, o] of treeObjects) {
      const s = synthObjects.get(k)!;
      const { annotations, ...meta } = o.metadata;
      const { annotations: synthAnnotations, ...synthMeta } = s.metadata;
      expect({ ...o, metadata: meta }).toEqual({ ...s, metadata: synthMeta });
      const extra = Object.keys(annotations ?? {}).filter((a) => !(a in (synthAnnotations ?? {})));
      expect(extra.every((a) => a.startsWith('argocd.argoproj.io/'))).toBe(true);
      expect(annotations?.['argocd.argoproj.io/sync-wave']).toBe(String(objectSyncWave(o.kind)));
    }
  });

  it('never writes a Secret value, whatever the secret mode', () => {
    for (const mode of ['existing', 'external-secret', 'sealed-secret'] as const) {
      const config = exampleConfig({ gitopsSecretMode: mode });
      const files = gitopsFiles(exampleSets(config), config);
      const all = [...files.values()].join('\n');
      expect(all).not.toMatch(/^kind: Secret$/m);
      expect(all).not.toContain('I2Nsb3VkLWNvbmZpZw'); // base64 of "#cloud-config"
      expect(all).not.toContain(Buffer.from('rook-nfs-server.rook-nfs').toString('base64'));
      if (mode === 'external-secret') {
        const es = parse(files.get('tenants/john.doe/ExternalSecret_tenant-john-doe_mydrive-info.yaml')!) as Any;
        expect(es.spec.data).toEqual([
          { secretKey: 'path', remoteRef: { key: 'tenant-john-doe/mydrive-info', property: 'path' } },
          { secretKey: 'server-name', remoteRef: { key: 'tenant-john-doe/mydrive-info', property: 'server-name' } },
        ]);
        expect(es.spec.secretStoreRef).toEqual({ kind: 'ClusterSecretStore', name: 'crownlabs' });
      }
      if (mode === 'sealed-secret') {
        const ss = parse(files.get('instances/tenant-john-doe/SealedSecret_tenant-john-doe_green-tea-6831.yaml')!) as Any;
        expect(Object.keys(ss.spec.encryptedData)).toEqual(['userdata']);
        expect(ss.spec.template.metadata.labels['crownlabs.polito.it/instance']).toBe('green-tea-6831');
      }
    }
  });
});

describe('gitops layout', () => {
  const config = exampleConfig();
  const files = gitopsFiles(exampleSets(config), config);
  it('has a root app of apps, one Application per workspace, tenant and instance namespace, each with ServerSideApply', () => {
    const root = parse(files.get('root/Application_argocd_crownlabs-root.yaml')!) as Any;
    expect(root.spec.source.path).toBe('gitops/apps');
    const apps = [...files.keys()].filter((f) => f.startsWith('apps/Application_')).map((f) => parse(files.get(f)!) as Any);
    expect(apps.map((a) => a.metadata.name).sort()).toEqual([
      'crownlabs-instances-tenant-jane-smith',
      'crownlabs-instances-tenant-john-doe',
      'crownlabs-instances-tenant-mario-de-luca',
      'crownlabs-tenant-jane.smith',
      'crownlabs-tenant-john.doe',
      'crownlabs-tenant-mario.de.luca',
      'crownlabs-workspace-coffee',
      'crownlabs-workspace-tea',
    ]);
    for (const a of apps) {
      expect(a.spec.syncPolicy.syncOptions).toContain('ServerSideApply=true');
      expect(files.has(`${a.spec.source.path.replace(/^gitops\//, '')}/kustomization.yaml`)).toBe(true);
    }
  });
  it('lists every object file in its folder kustomization and writes no owner references', () => {
    for (const [path, content] of files) {
      if (!path.endsWith('/kustomization.yaml')) continue;
      const folder = path.slice(0, -'/kustomization.yaml'.length);
      const listed = (parse(content) as Any).resources as string[];
      const present = [...files.keys()].filter((f) => f.startsWith(`${folder}/`) && f !== path).map((f) => f.slice(folder.length + 1));
      expect(listed.sort()).toEqual(present.sort());
    }
    expect([...files.values()].some((c) => c.includes('ownerReferences'))).toBe(false);
  });
  it('never lets Argo CD delete student data: storage is neither pruned nor deleted with its Application, namespaces outlive theirs', () => {
    const options = (path: string) => (parse(files.get(path)!) as Any).metadata.annotations?.['argocd.argoproj.io/sync-options'] as string | undefined;
    // MyDrive, a persistent container's PVC, a persistent VM (it owns its DataVolume).
    expect(options('tenants/john.doe/PersistentVolumeClaim_mydrive-pvcs_john-doe-drive.yaml')).toBe('Prune=false,Delete=false');
    expect(options('instances/tenant-john-doe/PersistentVolumeClaim_tenant-john-doe_espresso-1.yaml')).toBe('Prune=false,Delete=false');
    expect(options('instances/tenant-john-doe/VirtualMachine_tenant-john-doe_black-tea-0042.yaml')).toBe('Prune=false,Delete=false');
    // Deleting the tenant's Application must not delete its namespace: that would take every
    // Instance's disk in it along, Delete=false or not.
    expect(options('tenants/john.doe/Namespace_tenant-john-doe.yaml')).toBe('Delete=false');
    expect(options('tenants/jane.smith/Namespace_sandbox-jane-smith.yaml')).toBe('Delete=false');
    expect(options('workspaces/tea/Namespace_workspace-tea.yaml')).toBe('Delete=false');
    // Every object by kind: storage and namespaces are kept, everything else is pruned as usual.
    for (const [path, content] of files) {
      if (!/^(workspaces|tenants|instances)\//.test(path) || path.endsWith('kustomization.yaml')) continue;
      const o = parse(content) as Any;
      const expected = ['PersistentVolumeClaim', 'VirtualMachine'].includes(o.kind) ? 'Prune=false,Delete=false' : o.kind === 'Namespace' ? 'Delete=false' : undefined;
      expect(o.metadata.annotations['argocd.argoproj.io/sync-options'], path).toBe(expected);
    }
  });
  it('puts a PVC in the wave of the workload that binds it', () => {
    // Argo CD waits for a wave to be healthy (a PVC: Bound) before the next one, and a
    // WaitForFirstConsumer PVC binds only when its pod exists.
    const pvc = parse(files.get('instances/tenant-john-doe/PersistentVolumeClaim_tenant-john-doe_espresso-1.yaml')!) as Any;
    const dep = parse(files.get('instances/tenant-john-doe/Deployment_tenant-john-doe_espresso-1.yaml')!) as Any;
    expect(dep.spec.template.spec.volumes.some((v: Any) => v.persistentVolumeClaim?.claimName === 'espresso-1')).toBe(true);
    expect(pvc.metadata.annotations['argocd.argoproj.io/sync-wave']).toBe(dep.metadata.annotations['argocd.argoproj.io/sync-wave']);
  });
  it('splits a namespace with many instance objects into several Applications', () => {
    const small = gitopsFiles(exampleSets(), exampleConfig({ gitopsMaxObjectsPerApp: 8 }));
    const johnApps = [...small.keys()].filter((f) => f.startsWith('apps/Application_argocd_crownlabs-instances-tenant-john-doe'));
    expect(johnApps.length).toBeGreaterThan(1);
    for (const f of [...small.keys()].filter((k) => k.startsWith('instances/') && k.endsWith('kustomization.yaml'))) {
      expect((parse(small.get(f)!) as Any).resources.length).toBeLessThanOrEqual(8);
    }
  });
  it('is the same bytes on every run', () => {
    const again = gitopsFiles(exampleSets(), exampleConfig());
    expect([...again]).toEqual([...files]);
  });
});

describe('files staged while they render (GitopsStager, a first write)', () => {
  // Chunked namespaces included: their folders are known only once the namespace's last set came.
  it.each([1000, 8, 1])('stages every set file under the path the tree gives it (gitopsMaxObjectsPerApp %i)', (max) => {
    const config = exampleConfig({ gitopsMaxObjectsPerApp: max });
    const sets = exampleSets(config).sort((a, b) => compareUnits(a.unit, b.unit));
    const staged = new Map<string, string>();
    const stage = { add: (rel: string, text: string) => (staged.set(rel, text), { stagedBytes: Buffer.byteLength(text) }), abort: () => {} };
    const stager = new GitopsStager(stage, max);
    const builder = new GitopsTreeBuilder<StageableFile>(config);
    for (const set of sets) {
      const files = builder.renderedFilesOf(set).files.map(([name, text]): [string, StageableFile] => [name, { text }]);
      builder.prime(set.unit, { ...builder.renderedFilesOf(set), files });
      stager.push({ unit: set.unit, objectCount: set.objects.length }, files);
    }
    stager.flush();
    const tree = builder.filesOf(sets.map((set) => ({ unit: set.unit, objectCount: set.objects.length })));
    const want = gitopsFiles(sets, config);
    const setFiles = [...want.keys()].filter((rel) => /^(workspaces|tenants|instances)\//.test(rel) && !rel.endsWith('/kustomization.yaml'));
    expect([...staged.keys()].sort()).toEqual(setFiles.sort());
    for (const [rel, text] of staged) {
      expect(text).toBe(want.get(rel));
      // Where the tree holds it, the text is gone and the file says where it was staged.
      const file = tree.get(rel) as StageableFile;
      expect(file.text).toBeUndefined();
      expect(file.staged?.rel).toBe(rel);
    }
    if (max === 1) expect(setFiles.some((rel) => /^instances\/[^/]+\.2\//.test(rel))).toBe(true);
  });
});

describe('writing trees', () => {
  it('swaps the whole folder and keeps unchanged files (same inode)', () => {
    const dir = join(mkdtempSync(join(tmpdir(), 'tree-')), 'out');
    writeTreeAtomically(dir, new Map([['a/x.yaml', 'x: 1\n'], ['b.yaml', 'b: 1\n']]));
    const before = readFileSync(join(dir, 'a/x.yaml'));
    const r = writeTreeAtomically(dir, new Map([['a/x.yaml', 'x: 1\n'], ['c.yaml', 'c: 1\n']]));
    expect(r).toEqual({ written: 1, unchanged: 1, removed: 1 });
    expect([...listFiles(dir)].sort()).toEqual([OUTPUT_MARKER, 'a/x.yaml', 'c.yaml']);
    expect(readFileSync(join(dir, 'a/x.yaml'))).toEqual(before);
  });
});

describe('gitops --watch', () => {
  it('crownlabs gitops --watch updates the tree after an edit', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'watch-cli-'));
    const lab = join(dir, 'lab');
    cpSync(join(ROOT, 'examples', 'lab'), lab, { recursive: true });
    const out = join(dir, 'gitops');
    const child = spawn(process.execPath, [join(ROOT, 'bin', 'crownlabs.js'), 'gitops', '-f', lab, '--config', CONFIG_FILE, '-o', out, '--watch', '--debounce', '50'], { env: { ...process.env, CI: 'true' } });
    let stderr = '';
    const waitFor = (re: RegExp) =>
      new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`timeout waiting for ${re}; stderr:\n${stderr}`)), 30_000);
        const check = () => {
          if (re.test(stderr)) {
            clearTimeout(timer);
            resolve();
          }
        };
        child.stderr.on('data', (d) => {
          stderr += d;
          check();
        });
        check();
      });
    try {
      await waitFor(/watching/);
      const instances = join(lab, 'instances.yaml');
      writeFileSync(instances, readFileSync(instances, 'utf8').replace('  running: false\n', '  running: true\n'));
      await waitFor(/watch: 1 set\(s\) re-rendered.*\n/);
      // Status lines are log records like every long-running command's: JSON when stderr is no terminal.
      const record = JSON.parse(stderr.split('\n').find((l) => l.includes('re-rendered'))!) as Any;
      expect(record).toMatchObject({ name: 'crownlabs-gitops', level: 30, sets: 1 });
      const vm = parse(readFileSync(join(out, 'instances/tenant-john-doe/VirtualMachine_tenant-john-doe_black-tea-0042.yaml'), 'utf8')) as Any;
      expect(vm.spec.running).toBe(true);
      expect(readFileSync(join(out, 'instances/tenant-john-doe/kustomization.yaml'), 'utf8')).toContain('Service_tenant-john-doe_black-tea-0042.yaml');
    } finally {
      child.kill('SIGTERM');
    }
  });
});

describe('the tree with exposition through Gateway API', () => {
  const applications = (files: Map<string, string>) => [...files].filter(([p]) => p.startsWith('apps/') && !p.endsWith('kustomization.yaml')).map(([, c]) => parse(c) as Any);
  it('carries an HTTPRoute where the Ingress was, the project permits the kind, and Applications prune last only with routes alone', () => {
    const gateway = exampleConfig({ exposition: 'gateway', gatewayRef: 'gateways/main' });
    const files = gitopsFiles(exampleSets(gateway), gateway);
    const kinds = [...files].filter(([p]) => p.startsWith('instances/') && !p.endsWith('kustomization.yaml')).map(([, c]) => (parse(c) as KubeObject).kind);
    expect(kinds).toContain('HTTPRoute');
    expect(kinds).not.toContain('Ingress');
    const project = [...files].filter(([p]) => p.endsWith('.yaml')).map(([, c]) => parse(c) as Any).find((o) => o?.kind === 'AppProject');
    expect(project.spec.namespaceResourceWhitelist).toContainEqual({ group: 'gateway.networking.k8s.io', kind: 'HTTPRoute' });
    const apps = applications(files);
    expect(apps.length).toBeGreaterThan(0);
    for (const app of apps) expect(app.spec.syncPolicy.syncOptions).toContain('PruneLast=true');
    for (const exposition of ['ingress', 'both'] as const) {
      const config = exampleConfig({ exposition, gatewayRef: 'gateways/main' });
      for (const app of applications(gitopsFiles(exampleSets(config), config))) expect(app.spec.syncPolicy.syncOptions).not.toContain('PruneLast=true');
    }
  });
});
