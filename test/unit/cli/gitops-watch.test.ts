// The real `gitops --watch` process and file watcher: after each change the output folder is what a
// fresh `crownlabs gitops` of the same inputs writes (`diff -r`), or the last good tree.
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import jsYaml from 'js-yaml';
import { CONFIG, crownlabs, LAB } from '../../support/cli.ts';
import { folderFiles, watchProcess } from '../../support/watch-process.ts';

const tmp = (prefix: string) => mkdtempSync(join(tmpdir(), prefix));

/** What a fresh one-shot `crownlabs gitops` writes for these inputs. */
function freshTree(lab: string, config: string): Map<string, string> {
  const out = join(tmp('watch-fresh-'), 'gitops');
  const r = crownlabs(['gitops', '-f', lab, '--config', config, '-o', out], undefined, { CROWNLABS_RENDER_CACHE: '0' });
  if (r.code !== 0) throw new Error(`fresh gitops failed: ${r.stderr}`);
  return folderFiles(out);
}

/** The example lab with instances.yaml in a/, so that it can be moved to b/. */
function lab(): { dir: string; lab: string; out: string } {
  const dir = tmp('watch-cli-');
  const lab = join(dir, 'lab');
  cpSync(LAB, lab, { recursive: true });
  mkdirSync(join(lab, 'a'));
  mkdirSync(join(lab, 'b'));
  cpSync(join(lab, 'instances.yaml'), join(lab, 'a', 'instances.yaml'));
  rmSync(join(lab, 'instances.yaml'));
  return { dir, lab, out: join(dir, 'gitops') };
}

describe('gitops --watch mirrors the disk', () => {
  it('a file moved by copy then delete: the tree is the fresh one, with every Instance of the file', async () => {
    const { lab: l, out } = lab();
    const before = freshTree(l, CONFIG);
    const w = watchProcess(['-f', l, '--config', CONFIG, '-o', out, '--debounce', '50']);
    try {
      await w.waitFor(/watching/);
      let n = w.records();
      // Copied with an edit (a label more), so the two copies differ: refused until the old one goes.
      const docs = jsYaml.loadAll(readFileSync(join(l, 'a', 'instances.yaml'), 'utf8')) as { metadata: { labels?: Record<string, string> } }[];
      for (const d of docs) d.metadata.labels = { ...d.metadata.labels, 'example.org/moved': 'yes' };
      writeFileSync(join(l, 'b', 'instances.yaml'), docs.map((d) => `---\n${jsYaml.dump(d)}`).join(''));
      await w.settled(n);
      expect(w.stderr()).toMatch(/invalid input; the last good tree stays/);
      n = w.records();
      rmSync(join(l, 'a', 'instances.yaml'));
      await w.settled(n);
      const tree = folderFiles(out);
      expect(tree).toEqual(freshTree(l, CONFIG));
      // The same Instances as before the move: none dropped.
      expect([...tree.keys()].filter((f) => f.startsWith('instances/'))).toEqual([...before.keys()].filter((f) => f.startsWith('instances/')));
    } finally {
      await w.stop();
    }
  });

  it('a file truncated and written slowly never drops its objects from the tree', async () => {
    const { lab: l, out } = lab();
    const w = watchProcess(['-f', l, '--config', CONFIG, '-o', out, '--debounce', '50']);
    try {
      await w.waitFor(/watching/);
      const good = folderFiles(out);
      const file = join(l, 'a', 'instances.yaml');
      const text = readFileSync(file, 'utf8');
      const n = w.records();
      // As `slow-generator > instances.yaml`: truncated, then written 600 ms later.
      writeFileSync(file, '');
      await new Promise((r) => setTimeout(r, 600));
      expect(folderFiles(out)).toEqual(good);
      writeFileSync(file, text);
      await w.settled(n);
      expect(folderFiles(out)).toEqual(good);
    } finally {
      await w.stop();
    }
  });

  it('an edit of --config is reloaded; a config that fails to load keeps the last good tree and says why', async () => {
    const { dir, lab: l, out } = lab();
    const config = join(dir, 'crownlabs.config.yaml');
    const text = readFileSync(CONFIG, 'utf8');
    writeFileSync(config, text);
    const w = watchProcess(['-f', l, '--config', config, '-o', out, '--debounce', '50']);
    try {
      await w.waitFor(/watching/);
      let n = w.records();
      writeFileSync(config, text.replace('websiteBaseUrl: crownlabs.polito.it', 'websiteBaseUrl: lab.example.org'));
      await w.settled(n);
      const reloaded = folderFiles(out);
      expect(reloaded).toEqual(freshTree(l, config));
      expect([...reloaded.values()].some((t) => t.includes('lab.example.org'))).toBe(true);
      n = w.records();
      writeFileSync(config, `${text}gitopsMaxObjectsPerApp: many\n`);
      await w.settled(n);
      expect(w.stderr()).toMatch(/crownlabs\.config\.yaml.*gitopsMaxObjectsPerApp/);
      expect(w.stderr()).toMatch(/the configuration \S+crownlabs\.config\.yaml is invalid; the last good tree stays/);
      expect(folderFiles(out)).toEqual(reloaded);
      // An input edit while the config is still broken changes nothing either.
      n = w.records();
      writeFileSync(join(l, 'a', 'instances.yaml'), readFileSync(join(l, 'a', 'instances.yaml'), 'utf8').replace('running: false', 'running: true'));
      await w.settled(n);
      expect(folderFiles(out)).toEqual(reloaded);
      n = w.records();
      writeFileSync(config, text);
      await w.settled(n);
      expect(folderFiles(out)).toEqual(freshTree(l, config));
    } finally {
      await w.stop();
    }
  });

  it('a change no event reports (a broken symbolic link removed) is read while the input is invalid', async () => {
    const { dir, lab: l, out } = lab();
    const target = join(dir, 'extra.yaml');
    writeFileSync(target, readFileSync(join(l, 'workspaces.yaml'), 'utf8').replace(/name: (tea|coffee)\n/g, 'name: $1-extra\n'));
    symlinkSync(target, join(l, 'b', 'extra.yaml'));
    const w = watchProcess(['-f', l, '--config', CONFIG, '-o', out, '--debounce', '50']);
    try {
      await w.waitFor(/watching/);
      let n = w.records();
      rmSync(target);
      await w.settled(n);
      expect(w.stderr()).toMatch(/extra\.yaml: error: broken symbolic link/);
      n = w.records();
      // The watcher stopped following the link when its target went: no event for this.
      rmSync(join(l, 'b', 'extra.yaml'));
      await w.settled(n);
      expect(folderFiles(out)).toEqual(freshTree(l, CONFIG));
    } finally {
      await w.stop();
    }
  });
});
