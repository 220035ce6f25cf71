// Watch mode mirrors the disk (src/compose/incremental.ts): whatever failed before, an update
// renders the input files as they are now, and a failed update leaves no trace but pending files.
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import jsYaml from 'js-yaml';
import { LabSession } from '../../../src/compose/incremental.ts';
import { gitopsFiles } from '../../../src/sinks/gitops.ts';
import { generateLab } from '../../support/generate-lab.ts';
import { testConfig } from '../../support/lab.ts';

const config = testConfig({ gitopsSecretMode: 'existing' });

/** A small lab, one file per Tenant and per Instance under a/, the rest in shared files. */
function smallLab(): string {
  const dir = mkdtempSync(join(tmpdir(), 'watch-disk-'));
  mkdirSync(join(dir, 'a'));
  mkdirSync(join(dir, 'b'));
  for (const o of generateLab({ instances: 6, tenants: 3, workspaces: 2 })) {
    const name = o.kind === 'Instance' || o.kind === 'Tenant' ? `a/${o.kind.toLowerCase()}-${o.metadata.name}.yaml` : `${o.kind.toLowerCase()}s.yaml`;
    const path = join(dir, name);
    writeFileSync(path, (name.startsWith('a/') ? '' : readOr(path, '')) + `---\n${jsYaml.dump(o)}`);
  }
  return dir;
}

const readOr = (path: string, fallback: string) => {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return fallback;
  }
};

/** A copy of `from` at `to` whose objects carry one more label: an edit made while moving the file. */
function copyEdited(from: string, to: string): void {
  const docs = jsYaml.loadAll(readFileSync(from, 'utf8')) as { metadata: { labels?: Record<string, string> } }[];
  for (const d of docs) d.metadata.labels = { ...d.metadata.labels, 'example.org/moved': 'yes' };
  writeFileSync(to, docs.map((d) => `---\n${jsYaml.dump(d)}`).join(''));
}

function started(dir: string): LabSession {
  const session = new LabSession([dir], config, dir);
  expect(session.load().applied).toBe(true);
  return session;
}

const treeOf = (session: LabSession) => Object.fromEntries(gitopsFiles(session.renderedSets(), config));

/** The tree a fresh run renders from the disk as it is (undefined: the disk is invalid). */
function fresh(dir: string): Record<string, string> | undefined {
  const s = new LabSession([dir], config, dir);
  return s.load().applied ? treeOf(s) : undefined;
}

const hasInstance = (tree: Record<string, string>, name: string) => Object.values(tree).some((t) => t.includes(`name: ${name}\n`));

describe('watch mode renders the disk as it is, whatever failed before', () => {
  it('a file moved by copy then delete keeps its objects in the tree', () => {
    const dir = smallLab();
    const session = started(dir);
    const from = join(dir, 'a', 'instance-inst-2.yaml');
    const to = join(dir, 'b', 'instance-inst-2.yaml');
    copyEdited(from, to);
    // Both copies on disk, differing: a duplicate, nothing applied.
    expect(session.update([to]).applied).toBe(false);
    rmSync(from);
    const r = session.update([from]);
    expect(r.applied).toBe(true);
    expect(hasInstance(treeOf(session), 'inst-2')).toBe(true);
    expect(treeOf(session)).toEqual(fresh(dir));
  });

  it('a file copied unchanged defines the same objects once: the tree stays that of the disk', () => {
    const dir = smallLab();
    const session = started(dir);
    const before = treeOf(session);
    const from = join(dir, 'a', 'instance-inst-2.yaml');
    cpSync(from, join(dir, 'b', 'instance-inst-2.yaml'));
    expect(session.update([join(dir, 'b', 'instance-inst-2.yaml')]).applied).toBe(true);
    rmSync(from);
    expect(session.update([from]).applied).toBe(true);
    expect(treeOf(session)).toEqual(before);
    expect(treeOf(session)).toEqual(fresh(dir));
  });

  it('a Tenant removed before its last Instance leaves the tree once the Instance goes too', () => {
    const dir = smallLab();
    const session = started(dir);
    const tenant = join(dir, 'a', 'tenant-user.1.yaml');
    rmSync(tenant);
    // Instances of user.1 still name it: refused.
    expect(session.update([tenant]).applied).toBe(false);
    const instances = [1, 4].map((i) => join(dir, 'a', `instance-inst-${i}.yaml`));
    for (const f of instances) rmSync(f);
    expect(session.update(instances).applied).toBe(true);
    const tree = treeOf(session);
    expect(Object.keys(tree).some((p) => p.includes('user-1'))).toBe(false);
    expect(tree).toEqual(fresh(dir));
  });

  it('a valid edit that came with a parse error elsewhere is applied once that file is fixed', () => {
    const dir = smallLab();
    const session = started(dir);
    const broken = join(dir, 'a', 'instance-inst-0.yaml');
    const good = readFileSync(broken, 'utf8');
    const edited = join(dir, 'a', 'instance-inst-3.yaml');
    writeFileSync(broken, `${good}  running: [\n`);
    writeFileSync(edited, readFileSync(edited, 'utf8').replace(/running: (true|false)/, (_, v) => `running: ${v === 'true' ? 'false' : 'true'}`));
    expect(session.update([broken, edited]).applied).toBe(false);
    writeFileSync(broken, good);
    expect(session.update([broken]).applied).toBe(true);
    expect(treeOf(session)).toEqual(fresh(dir));
  });

  it('while a file is broken on disk, a valid edit of another file changes nothing', () => {
    const dir = smallLab();
    const session = started(dir);
    const before = treeOf(session);
    const broken = join(dir, 'a', 'instance-inst-0.yaml');
    writeFileSync(broken, `${readFileSync(broken, 'utf8')}  running: [\n`);
    expect(session.update([broken]).applied).toBe(false);
    const edited = join(dir, 'a', 'instance-inst-3.yaml');
    writeFileSync(edited, readFileSync(edited, 'utf8').replace(/running: (true|false)/, (_, v) => `running: ${v === 'true' ? 'false' : 'true'}`));
    const r = session.update([edited]);
    expect(r.applied).toBe(false);
    expect(r.problems.some((p) => p.severity === 'error' && p.file === 'a/instance-inst-0.yaml')).toBe(true);
    expect(treeOf(session)).toEqual(before);
  });

  it('a file deleted in a failed update is not brought back: the moved copy stays editable', () => {
    const dir = smallLab();
    const session = started(dir);
    // A Tenant file moved by copy then delete: the delete alone would leave its Instances dangling.
    const from = join(dir, 'a', 'tenant-user.2.yaml');
    const to = join(dir, 'b', 'tenant-user.2.yaml');
    copyEdited(from, to);
    expect(session.update([to]).applied).toBe(false);
    rmSync(from);
    expect(session.update([from]).applied).toBe(true);
    writeFileSync(to, readFileSync(to, 'utf8').replace('firstName: User', 'firstName: Moved'));
    const r = session.update([to]);
    expect(r.problems.filter((p) => p.severity === 'error')).toEqual([]);
    expect(r.applied).toBe(true);
    expect(session.inputFiles()).not.toContain(from);
    expect(treeOf(session)).toEqual(fresh(dir));
  });

  it('a file emptied (truncated before it is written again) drops nothing until the caller lets it', () => {
    const dir = smallLab();
    const session = started(dir);
    const before = treeOf(session);
    const file = join(dir, 'a', 'instance-inst-5.yaml');
    const text = readFileSync(file, 'utf8');
    writeFileSync(file, '');
    const r = session.update([file], { emptiedMayApply: () => false });
    expect(r).toMatchObject({ applied: false, held: [file], problems: [] });
    expect(treeOf(session)).toEqual(before);
    // The rest of the write arrives: the tree is as before.
    writeFileSync(file, text);
    expect(session.update([file], { emptiedMayApply: () => false }).applied).toBe(true);
    expect(treeOf(session)).toEqual(before);
    // Emptied for good: once allowed, its Instance goes.
    writeFileSync(file, '');
    expect(session.update([file], { emptiedMayApply: () => true }).applied).toBe(true);
    expect(hasInstance(treeOf(session), 'inst-5')).toBe(false);
    expect(treeOf(session)).toEqual(fresh(dir));
  });

  it('a change seen by no event (a file written with no event for it) is read at the next update', () => {
    const dir = smallLab();
    const session = started(dir);
    const edited = join(dir, 'a', 'instance-inst-3.yaml');
    writeFileSync(edited, readFileSync(edited, 'utf8').replace(/running: (true|false)/, (_, v) => `running: ${v === 'true' ? 'false' : 'true'}`));
    writeFileSync(join(dir, 'b', 'instance-new.yaml'), readFileSync(join(dir, 'a', 'instance-inst-0.yaml'), 'utf8').replace('name: inst-0', 'name: inst-new'));
    expect(session.update([]).applied).toBe(true);
    expect(hasInstance(treeOf(session), 'inst-new')).toBe(true);
    expect(treeOf(session)).toEqual(fresh(dir));
  });
});
