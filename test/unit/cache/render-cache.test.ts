import { createHash } from 'node:crypto';
import { chmodSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { Inventory } from '../../../src/inputs/inventory.ts';
import { TEMPLATE_REF, type InputObject } from '../../../src/inputs/types.ts';
import type { Problem } from '../../../src/inputs/problems.ts';
import { parentKey } from '../../../src/model/labels.ts';
import { tenantNamespaceName } from '../../../src/model/naming.ts';
import { isApplicationFiles, isGitopsEntry, isSynthEntry, RenderCache, type SynthEntry } from '../../../src/cache/render-cache.ts';
import { composeReusing } from '../../../src/cache/reuse.ts';
import { compose, renderUnit, type RenderUnit } from '../../../src/compose/compose.ts';
import { defaultConfig, type ComposerConfig } from '../../../src/config/config.ts';
import { objectsToYaml } from '../../../src/sinks/yaml-emitter.ts';
import { checkSetObjects } from '../../../src/compose/prewrite.ts';
import { generateLab } from '../../support/generate-lab.ts';

const baseConfig: ComposerConfig = { ...defaultConfig(), mydriveNfsServerName: 'nfs.example' };
const LAB_SIZE = { instances: 40, tenants: 12, workspaces: 3 };

function inventoryOf(objects: InputObject[]): Inventory {
  const { inventory, problems } = Inventory.fromObjects(objects.map((object, document) => ({ object, source: { file: 'lab.yaml', document } })));
  expect(problems.filter((p) => p.severity === 'error')).toEqual([]);
  return inventory;
}

function entryOf(unit: RenderUnit): SynthEntry {
  const objects = renderUnit(unit);
  return { digest: createHash('sha256').update(objectsToYaml(objects)).digest('hex'), objects: objects.length, check: checkSetObjects(objects) };
}

interface Run {
  /** The sets of a full composition. */
  units: RenderUnit[];
  /** Set ids that missed the cache. */
  misses: Set<string>;
  /** Set ids taken from the cache without composing them (RenderCache.reuse). */
  reused: Set<string>;
  problems: Problem[];
}

/**
 * One run as synth does it into a folder it wrote before: sets stored as quiet whose inputs are as
 * they were are taken without composing them; the others are composed, then taken from the cache
 * or rendered; then saved. Checks it against a full composition: the same sets and problems, and
 * every hit and every reused set holding what rendering the set now gives (never stale).
 */
function run(dir: string, objects: InputObject[], config = baseConfig, codeHash = 'code-1'): Run {
  const inventory = inventoryOf(objects);
  const full = compose(inventory, config);
  const cache = RenderCache.open({ kind: 'synth', config, inputs: ['/lab'], output: '/out', dir, codeHash }, inventory, isSynthEntry);
  expect(cache).toBeDefined();
  const { composition: composed, reused: taken } = composeReusing(inventory, config, cache);
  const reused = new Map(taken.map((r): [string, SynthEntry] => [r.id, r.entry]));
  expect(composed.problems).toEqual(full.problems);
  expect([...composed.units.map((u) => u.id), ...reused.keys()].sort()).toEqual(full.units.map((u) => u.id).sort());
  const misses = new Set<string>();
  for (const unit of full.units) {
    const fresh = entryOf(unit);
    if (reused.has(unit.id)) {
      expect(reused.get(unit.id)).toEqual(fresh);
      expect(full.reported.has(parentKey(unit.parent))).toBe(false);
      continue;
    }
    const own = composed.units.find((u) => u.id === unit.id)!;
    const quiet = !composed.reported.has(parentKey(unit.parent));
    const hit = cache!.get(own, quiet);
    if (hit) expect(hit).toEqual(fresh);
    else {
      misses.add(unit.id);
      cache!.set(own, fresh, quiet);
    }
  }
  cache!.save();
  return { units: full.units, misses, reused: new Set(reused.keys()), problems: full.problems };
}

const clone = <T>(v: T): T => structuredClone(v);
const find = (objs: InputObject[], kind: string, name: string) => objs.find((o) => o.kind === kind && o.metadata.name === name)!;
const ids = (units: RenderUnit[], pred: (u: RenderUnit) => boolean) => new Set(units.filter(pred).map((u) => u.id));

describe('render cache', () => {
  const lab = generateLab(LAB_SIZE);

  function warm(): { dir: string; first: Run } {
    const dir = mkdtempSync(join(tmpdir(), 'render-cache-'));
    const first = run(dir, lab);
    expect(first.misses.size).toBe(first.units.length);
    return { dir, first };
  }

  it('an unchanged input hits every set, each taken without composing it', () => {
    const { dir, first } = warm();
    expect(first.reused).toEqual(new Set());
    const again = run(dir, lab);
    expect(again.misses).toEqual(new Set());
    expect(again.reused).toEqual(new Set(first.units.map((u) => u.id)));
    expect(first.units.length).toBeGreaterThan(40);
  });

  it('a parent whose composition warns is composed every time, so the warning is never lost', () => {
    const { dir } = warm();
    const next = clone(lab);
    const tenant = next.find((o) => o.kind === 'Tenant')!;
    tenant.metadata.labels = { ...tenant.metadata.labels, [baseConfig.targetLabel.key]: 'elsewhere' };
    // The Tenant, and the Instances in its namespace, which nothing creates now.
    const inNamespace = next.filter((o) => o.kind === 'Instance' && o.metadata.namespace === tenantNamespaceName(tenant.metadata.name)).map((o) => `Instance/${o.metadata.namespace}/${o.metadata.name}`);
    expect(compose(inventoryOf(next), baseConfig).reported).toEqual(new Set([`Tenant/${tenant.metadata.name}`, ...inNamespace]));
    for (let i = 0; i < 2; i++) {
      const r = run(dir, next);
      expect(r.problems.map((p) => p.message)).toContain(`skipped: no target label ${baseConfig.targetLabel.key}=${baseConfig.targetLabel.value}`);
      expect(r.units.map((u) => u.id)).not.toContain(`tenants/${tenant.metadata.name}`);
      // Every other set is reused the second time.
      if (i === 1) expect(r.reused.size).toBe(r.units.length);
    }
  });

  it('a set stored as not quiet (its composition reported a problem) is taken only after composing it', () => {
    const { dir, first } = warm();
    const inventory = inventoryOf(lab);
    const open = () => RenderCache.open({ kind: 'synth', config: baseConfig, inputs: ['/lab'], output: '/out', dir, codeHash: 'code-1' }, inventory, isSynthEntry)!;
    const [unit] = first.units;
    let cache = open();
    expect(cache.get(unit, false)).toBeDefined();
    cache.save();
    cache = open();
    expect(cache.reuse(unit.parent)).toBeUndefined();
    expect(cache.get(unit, true)).toBeDefined();
    cache.save();
    expect(open().reuse(unit.parent)).toEqual({ id: unit.id, value: entryOf(unit) });
  });

  it('an edited Instance invalidates its set only', () => {
    const { dir } = warm();
    const next = clone(lab);
    const inst = next.find((o) => o.kind === 'Instance')!;
    (inst.spec as { running?: boolean }).running = !(inst.spec as { running?: boolean }).running;
    expect(run(dir, next).misses).toEqual(new Set([`instances/${inst.metadata.namespace}/${inst.metadata.name}`]));
  });

  it('an edited Template invalidates exactly the Instances using it', () => {
    const { dir, first } = warm();
    const next = clone(lab);
    const tpl = next.find((o) => o.kind === 'Template')!;
    (tpl.spec as { prettyName?: string }).prettyName = 'changed';
    const users = new Set(
      lab.filter((o) => o.kind === 'Instance' && (o.spec as unknown as Record<string, { name: string; namespace?: string }>)[TEMPLATE_REF].name === tpl.metadata.name && (o.spec as unknown as Record<string, { namespace?: string }>)[TEMPLATE_REF].namespace === tpl.metadata.namespace).map((o) => `instances/${o.metadata.namespace}/${o.metadata.name}`),
    );
    expect(users.size).toBeGreaterThan(0);
    expect(run(dir, next).misses).toEqual(ids(first.units, (u) => users.has(u.id)));
  });

  it('an edited Tenant invalidates its set, its Instances, and the Instances of workspaces it manages', () => {
    const { dir, first } = warm();
    const manager = lab.find((o) => o.kind === 'Tenant' && ((o.spec as { workspaces?: { role: string }[] }).workspaces ?? []).some((w) => w.role === 'manager'))!;
    expect(manager).toBeDefined();
    const next = clone(lab);
    (find(next, 'Tenant', manager.metadata.name).spec as { publicKeys?: string[] }).publicKeys = ['ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIBx test'];
    const expected = ids(first.units, (u) => u.dependsOn.includes(`Tenant/${manager.metadata.name}`));
    expect(expected.has(`tenants/${manager.metadata.name}`)).toBe(true);
    expect([...expected].some((id) => id.startsWith('instances/') && !id.startsWith(`instances/tenant-${manager.metadata.name}/`))).toBe(true);
    expect(run(dir, next).misses).toEqual(expected);
  });

  it('a Tenant that becomes a manager invalidates every Instance of that workspace: the recorded reverse lookup Workspace/<w>#managers', () => {
    const { dir, first } = warm();
    const next = clone(lab);
    const tenant = next.find((o) => o.kind === 'Tenant' && ((o.spec as { workspaces?: { role: string }[] }).workspaces ?? []).every((w) => w.role === 'user') && (o.spec as { workspaces?: unknown[] }).workspaces?.length)!;
    expect(tenant).toBeDefined();
    const entry = (tenant.spec as { workspaces: { name: string; role: string }[] }).workspaces[0];
    entry.role = 'manager';
    const name = tenant.metadata.name;
    const expected = ids(first.units, (u) => u.dependsOn.includes(`Tenant/${name}`) || u.dependsOn.includes(`Workspace/${entry.name}#managers`));
    // Instances of the workspace that never read this Tenant: only the reverse lookup's key names them.
    expect(first.units.some((u) => expected.has(u.id) && !u.dependsOn.includes(`Tenant/${name}`))).toBe(true);
    // run() also checks every hit against a fresh render: no stale hit.
    expect(run(dir, next).misses).toEqual(expected);
  });

  it('a new object a set reads (the MyDrive Secret of a namespace) invalidates the sets of that namespace only', () => {
    const { dir, first } = warm();
    const inst = lab.find((o) => o.kind === 'Instance')!;
    const ns = inst.metadata.namespace!;
    const next = [...clone(lab), { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'mydrive-info', namespace: ns }, data: {}, stringData: { 'server-name': 'other.nfs', path: '/x' } } as unknown as InputObject];
    expect(run(dir, next).misses).toEqual(ids(first.units, (u) => u.dependsOn.includes(`Secret/${ns}/mydrive-info`)));
  });

  it('a changed configuration or product version invalidates every set', () => {
    const { dir, first } = warm();
    const all = new Set(first.units.map((u) => u.id));
    expect(run(dir, lab, { ...baseConfig, websiteBaseUrl: 'labs.example.org' }).misses).toEqual(all);
    expect(run(dir, lab, baseConfig, 'code-2').misses).toEqual(all);
    // Both versions are kept: going back hits again.
    expect(run(dir, lab).misses).toEqual(new Set());
  });

  it('a corrupted, truncated or tampered cache file is a miss, never wrong output', () => {
    const { dir, first } = warm();
    const all = new Set(first.units.map((u) => u.id));
    const [file] = readdirSync(dir).map((f) => join(dir, f));
    const good = readFileSync(file, 'utf8');
    // Truncated.
    writeFileSync(file, good.slice(0, good.length >> 1));
    expect(run(dir, lab).misses).toEqual(all);
    // One byte of an entry changed (a set's output digest), the file's digest left as it was.
    const at = good.indexOf('"digest":"') + 10;
    expect(at).toBeGreaterThan(10);
    writeFileSync(file, `${good.slice(0, at)}${good[at] === '0' ? '1' : '0'}${good.slice(at + 1)}`);
    expect(run(dir, lab).misses).toEqual(all);
    // Tampered with a matching digest: an entry of the wrong shape is a miss (a digest that is not
    // one, too); a wrong output digest under a key that does not match the inputs is a miss too.
    const lines = good.split('\n').slice(0, -2);
    const e1 = JSON.parse(lines[1]) as [string, string, unknown];
    const e2 = JSON.parse(lines[2]) as [string, string, unknown];
    lines[1] = JSON.stringify([e1[0], e1[1], { yaml: 42, objects: 'x', check: null }]);
    const e3 = JSON.parse(lines[3]) as [string, string, unknown];
    lines[2] = JSON.stringify([e2[0], 'f'.repeat(64), { ...(e2[2] as object), digest: 'e'.repeat(64) }]);
    lines[3] = JSON.stringify([e3[0], e3[1], { ...(e3[2] as object), digest: 'not a digest' }]);
    const body = `${lines.join('\n')}\n`;
    writeFileSync(file, `${body}${createHash('sha256').update(body).digest('hex')}\n`);
    expect(run(dir, lab).misses).toEqual(new Set([e1[0], e2[0], e3[0]]));
    // Not JSON, empty, a folder in its place.
    for (const junk of ['', 'garbage', `x\n{`]) {
      writeFileSync(file, junk);
      expect(run(dir, lab).misses).toEqual(all);
    }
  });

  it('a cache folder that overlaps an input or the output is not used', () => {
    const inventory = inventoryOf(lab);
    const root = mkdtempSync(join(tmpdir(), 'render-cache-'));
    const open = (dir: string, inputs: string[], output?: string) =>
      RenderCache.open({ kind: 'synth', config: baseConfig, inputs, output, dir, codeHash: 'c' }, inventory, isSynthEntry);
    expect(open(join(root, 'out', '.cache'), [join(root, 'lab')], join(root, 'out'))).toBeUndefined();
    expect(open(join(root, 'lab', '.cache'), [join(root, 'lab')], join(root, 'out'))).toBeUndefined();
    expect(open(root, [join(root, 'lab')], join(root, 'out'))).toBeUndefined();
    expect(open(join(root, 'cache'), [join(root, 'lab')], join(root, 'out'))).toBeDefined();
  });

  it('a cache that cannot be written (read-only, or a file in the way) renders and does not throw', () => {
    const root = mkdtempSync(join(tmpdir(), 'render-cache-'));
    writeFileSync(join(root, 'file'), 'x');
    const blocked = join(root, 'file', 'cache');
    expect(run(blocked, lab).misses.size).toBeGreaterThan(0);
    expect(run(blocked, lab).misses.size).toBe(run(blocked, lab).units.length);
    const ro = join(root, 'ro');
    mkdirSync(ro);
    chmodSync(ro, 0o500);
    // (root may write anyway: then it is simply a working cache; either way no throw and correct hits.)
    run(ro, lab);
    run(ro, lab);
  });

  it('two writers of one cache file leave a whole file behind', () => {
    const { dir } = warm();
    const inventory = inventoryOf(lab);
    const { units } = compose(inventory, baseConfig);
    const open = () => RenderCache.open({ kind: 'synth', config: baseConfig, inputs: ['/lab'], output: '/out', dir, codeHash: 'code-1' }, inventory, isSynthEntry)!;
    const a = open();
    const b = open();
    for (const u of units) {
      a.set(u, entryOf(u));
      b.set(u, entryOf(u));
    }
    a.save();
    b.save();
    expect(run(dir, lab).misses).toEqual(new Set());
  });

  it('a value kept beside the sets (an Application file) is read back by the next run of the same product and config, and only while used', () => {
    const inventory = inventoryOf(lab);
    const dir = mkdtempSync(join(tmpdir(), 'render-cache-'));
    const open = (config = baseConfig) => RenderCache.open({ kind: 'gitops', config, inputs: ['/lab'], output: '/out', dir, codeHash: 'code-1' }, inventory, isGitopsEntry)!;
    const app: [string, string] = ['Application_argocd_ws-a.yaml', 'kind: Application\n'];
    let cache = open();
    expect(cache.extra('Application\0ws-a', isApplicationFiles)).toBeUndefined();
    cache.setExtra('Application\0ws-a', app);
    cache.setExtra('Application\0ws-b', ['Application_argocd_ws-b.yaml', 'kind: Application\n']);
    cache.save();
    // Another config: another cache file, nothing kept.
    expect(open({ ...baseConfig, argocdProject: 'other' }).extra('Application\0ws-a', isApplicationFiles)).toBeUndefined();
    cache = open();
    expect(cache.extra('Application\0ws-a', isApplicationFiles)).toEqual(app);
    cache.save(); // ws-b was not asked for: not kept
    cache = open();
    expect(cache.extra('Application\0ws-b', isApplicationFiles)).toBeUndefined();
    expect(cache.extra('Application\0ws-a', isApplicationFiles)).toEqual(app);
    // A file name must be one path segment: a tampered entry cannot write outside apps/.
    for (const name of ['../root/x.yaml', 'a/b.yaml', '.yaml', 'x.yml', '']) expect(isApplicationFiles([name, 'kind: Application\n'])).toBe(false);
    expect(isApplicationFiles(['Application_x.yaml', 42])).toBe(false);
  });

  it('an entry holds digests, never text: a YAML text, a short digest or a missing field is no entry', () => {
    const check = { ids: ['v1/Namespace//x'], issues: [] };
    const digest = 'a'.repeat(64);
    expect(isSynthEntry({ digest, objects: 1, check })).toBe(true);
    expect(isSynthEntry({ yaml: 'kind: Namespace\n', objects: 1, check })).toBe(false);
    expect(isSynthEntry({ digest: 'a'.repeat(63), objects: 1, check })).toBe(false);
    const files = { files: [['Namespace_x.yaml', digest]], resources: ['\tNamespace\t'], expectedSecrets: [] };
    expect(isGitopsEntry({ files, objects: 1, check })).toBe(true);
    expect(isGitopsEntry({ files: { ...files, files: [['Namespace_x.yaml', 'kind: Namespace\n']] }, objects: 1, check })).toBe(false);
    expect(isGitopsEntry({ files: { ...files, resources: undefined }, objects: 1, check })).toBe(false);
    expect(isGitopsEntry({ files, objects: -1, check })).toBe(false);
  });
});
