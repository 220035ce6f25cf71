// `crownlabs migrate --from-cluster` against the shared test cluster (2e8aeb9 CRDs): the live
// objects of a fresh namespace are read, what each becomes is listed (field paths moved, removed,
// added), and nothing is written to the cluster (every resourceVersion is as before).
import { spawnSync } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BIN } from '../support/cli.ts';
import { adminKubeConfigPath, createNamespace, createObject, deleteNamespace, getObject, rest, type KubeObject } from './cluster.ts';

function migrate(args: string[]) {
  const r = spawnSync(process.execPath, [BIN, 'migrate', '--kubeconfig', adminKubeConfigPath(), ...args], { encoding: 'utf8', env: { ...process.env, CI: 'true' } });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** The report lines of one object: its line and the indented lines under it. */
function block(stdout: string, id: string): string[] {
  const lines = stdout.split('\n');
  const start = lines.findIndex((l) => l.startsWith('migrate   ') && l.endsWith(id));
  if (start < 0) return [];
  let end = start + 1;
  while (end < lines.length && lines[end].startsWith('  ')) end++;
  return lines.slice(start + 1, end);
}

describe('crownlabs migrate --from-cluster (dry run)', () => {
  let ns: string;
  const objects: KubeObject[] = [];

  beforeAll(async () => {
    ns = await createNamespace('migrate');
    const template = {
      apiVersion: 'crownlabs.polito.it/v1alpha2',
      kind: 'Template',
      metadata: { name: 'espresso', namespace: ns },
      spec: {
        prettyName: 'Espresso',
        description: 'd',
        deleteAfter: '7d',
        environmentList: [{ name: 'desktop', image: 'registry.example/desktop:1', environmentType: 'Container', mode: 'Exam', resources: { cpu: 1, reservedCPUPercentage: 50, memory: '2Gi' } }],
      },
    };
    const instance = {
      apiVersion: 'crownlabs.polito.it/v1alpha2',
      kind: 'Instance',
      metadata: { name: 'espresso-1', namespace: ns },
      spec: {
        'template.crownlabs.polito.it/TemplateRef': { name: 'espresso', namespace: ns },
        'tenant.crownlabs.polito.it/TenantRef': { name: 'nobody' },
        running: false,
        customizationUrls: { statusCheck: 'https://check.example/', contentOrigin: 'https://content.example/a.tar' },
      },
    };
    objects.push(await createObject(template), await createObject(instance));
    // A status as the 2e8aeb9 controller writes it.
    const live = objects[1] as any;
    objects[1] = await rest().request('PUT', `/apis/crownlabs.polito.it/v1alpha2/namespaces/${ns}/instances/espresso-1/status`, {
      body: { ...live, status: { phase: 'Off', ip: '10.1.2.3', initialReadyTime: '12s', automation: { lastCheckTime: '2026-12-01T10:00:00Z' } } },
    });
  });

  afterAll(async () => {
    if (ns) await deleteNamespace(ns);
  });

  it('lists the moves of each object, warns with the field of each value not carried, and writes nothing', async () => {
    const r = migrate(['--from-cluster', '-n', ns]);
    expect(r.stderr).toMatch(new RegExp(`^<cluster> \\(Template ${ns}/espresso\\): warning: spec\\.environmentList\\[0\\]\\.mode: "Exam" cannot be carried`, 'm'));
    expect(r.code).toBe(3);
    expect(block(r.stdout, `Template ${ns}/espresso`)).toEqual([
      '  moved    spec.deleteAfter → spec.cleanup.deleteAfterCreation',
      '  added    spec.cleanup.stopAfterInactivity (never)',
      '  added    spec.cleanup.deleteAfterInactivity (never)',
      '  removed  spec.environmentList[0].mode (Exam not carried)',
    ]);
    expect(block(r.stdout, `Instance ${ns}/espresso-1`)).toEqual([
      '  moved    spec.customizationUrls.statusCheck → spec.statusCheckUrl',
      '  moved    spec.customizationUrls.contentOrigin → spec.contentUrls.desktop.origin',
      '  moved    status.ip → status.environments[0].ip',
      '  moved    status.initialReadyTime → status.environments[0].initialReadyTime',
      '  moved    status.automation → status.environments[0].automation',
      '  added    metadata.annotations.composer.crownlabs.polito.it/children-level (2e8aeb9: its children keep their names)',
    ]);
    expect(r.stdout).toMatch(/^2 to migrate, 0 unchanged$/m);
    for (const before of objects) {
      const now = await getObject<KubeObject>(before);
      expect(now?.metadata.resourceVersion, `${before.kind} unchanged`).toBe(before.metadata.resourceVersion);
    }
    expect(((await getObject<any>(objects[0]))!.spec as any).deleteAfter).toBe('7d');
  });

  it('--apply is refused with --from-cluster: the old fields are read at 2e8aeb9, the new ones written at e62be9e', () => {
    const r = migrate(['--from-cluster', '--apply', '-n', ns]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/--apply takes a copy of the live objects \(-f COPY\)/);
  });

  it('--apply of a copy is refused while the cluster serves the 2e8aeb9 CRDs: nothing written', async () => {
    const { writeFileSync, mkdtempSync } = await import('node:fs');
    const { join } = await import('node:path');
    const { tmpdir } = await import('node:os');
    const copy = join(mkdtempSync(join(tmpdir(), 'migrate-copy-')), 'copy.yaml');
    const live = await Promise.all(objects.map((o) => getObject<KubeObject>(o)));
    writeFileSync(copy, live.map((o) => JSON.stringify({ ...o, metadata: { ...o!.metadata, managedFields: undefined } })).join('\n---\n'));
    const r = migrate(['-f', copy, '--apply']);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/still serves the CrownLabs CRDs of 2e8aeb9: they would drop the e62be9e fields/);
    for (const before of objects) expect((await getObject<KubeObject>(before))?.metadata.resourceVersion).toBe(before.metadata.resourceVersion);
  });
});
