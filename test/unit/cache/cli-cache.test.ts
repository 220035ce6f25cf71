import { createHash } from 'node:crypto';
import { chmodSync, cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { listFiles } from '../../../src/sinks/atomic-tree.ts';
import { CONFIG, crownlabs, LAB } from '../../support/cli.ts';

const tree = (dir: string) => new Map([...listFiles(dir)].sort().map((f) => [f, readFileSync(join(dir, f), 'utf8')]));

describe('synth and gitops with the render cache', () => {
  it.each(['synth', 'gitops'])('%s gives what a run without the cache gives: warm, after an edit, and with a damaged cache', (command) => {
    const root = mkdtempSync(join(tmpdir(), 'cli-cache-'));
    const lab = join(root, 'lab');
    cpSync(LAB, lab, { recursive: true });
    const cache = { CROWNLABS_CACHE_DIR: join(root, 'cache') };
    const noCache = { CROWNLABS_RENDER_CACHE: '0' };
    {
      const expectSame = (env: NodeJS.ProcessEnv) => {
        const out = join(root, `${command}-out`);
        const ref = join(root, `${command}-ref`);
        const a = crownlabs([command, '-f', lab, '--config', CONFIG, '-o', out], undefined, env);
        expect(a.stderr).not.toMatch(/internal error/);
        expect(a.code).toBe(0);
        expect(crownlabs([command, '-f', lab, '--config', CONFIG, '-o', ref], undefined, noCache).code).toBe(0);
        expect(tree(out)).toEqual(tree(ref));
        return a;
      };
      expectSame(cache);
      // Warm: nothing changed, nothing written.
      expect(expectSame(cache).stderr).toMatch(/\(0 written,/);
      // An edited input file: the sets that read it change.
      const file = join(lab, readdirSync(lab).find((f) => /instance/i.test(f))!);
      const text = readFileSync(file, 'utf8');
      writeFileSync(file, text.includes('running: true') ? text.replace('running: true', 'running: false') : text.replace('running: false', 'running: true'));
      expect(text).not.toBe(readFileSync(file, 'utf8'));
      expectSame(cache);
      // Every cache file truncated: a miss, same output.
      for (const f of readdirSync(cache.CROWNLABS_CACHE_DIR)) {
        const p = join(cache.CROWNLABS_CACHE_DIR, f);
        writeFileSync(p, readFileSync(p, 'utf8').slice(0, 100));
      }
      expectSame(cache);
    }
  });

  it('a run record planted where others can write is not read: the run renders instead of replaying it', () => {
    const root = mkdtempSync(join(tmpdir(), 'cli-cache-'));
    const cacheDir = join(root, 'cache');
    const env = { CROWNLABS_CACHE_DIR: cacheDir };
    const out = join(root, 'out');
    const run = () => {
      const r = crownlabs(['synth', '-f', LAB, '--config', CONFIG, '-o', out], undefined, env);
      expect(r.code).toBe(0);
      return r.stderr;
    };
    expect(run()).not.toContain('planted-by-mallory');
    // Mallory rewrites the record, digest included, as anyone who can write the file could: a run
    // on these inputs would replay her words (or claim an output it never wrote) instead of rendering.
    const file = join(cacheDir, readdirSync(cacheDir).find((f) => /^run-synth-.*\.json$/.test(f))!);
    const text = readFileSync(file, 'utf8');
    const record = JSON.parse(text.slice(0, text.lastIndexOf('\n', text.length - 2)));
    record.problems.push({ severity: 'warning', message: 'planted-by-mallory' });
    const body = JSON.stringify(record);
    const plant = (mode: number) => {
      writeFileSync(file, `${body}\n${createHash('sha256').update(body).digest('hex')}\n`);
      chmodSync(file, mode);
    };
    // Mode 0600, this user's: the record is trusted (that is what makes a planted one dangerous).
    plant(0o600);
    expect(run()).toContain('planted-by-mallory');
    plant(0o666);
    expect(run()).not.toContain('planted-by-mallory');
  });

  // The caches hold digests, not text: a file the folder no longer holds as the last run wrote it is rendered again.
  it.each(['synth', 'gitops'])('%s with a warm cache restores output files edited, touched or removed by hand, and a removed folder', (command) => {
    const root = mkdtempSync(join(tmpdir(), 'cli-cache-'));
    const lab = join(root, 'lab');
    cpSync(LAB, lab, { recursive: true });
    const env = { CROWNLABS_CACHE_DIR: join(root, 'cache') };
    const out = join(root, 'out');
    const ref = join(root, 'ref');
    const run = () => crownlabs([command, '-f', lab, '--config', CONFIG, '-o', out], undefined, env);
    expect(crownlabs([command, '-f', lab, '--config', CONFIG, '-o', ref], undefined, { CROWNLABS_RENDER_CACHE: '0' }).code).toBe(0);
    expect(run().code).toBe(0);
    const want = tree(ref);
    const rels = [...want.keys()].filter((rel) => rel.endsWith('.yaml') && !rel.endsWith('kustomization.yaml') && !rel.startsWith('apps/') && !rel.startsWith('root/')).sort();
    expect(rels.length).toBeGreaterThan(3);
    const [edited, removed, touched] = rels;
    // A set's file changed, one removed, one touched (same content, other times): the next run gives the reference tree back.
    writeFileSync(join(out, edited), 'edited: by hand\n');
    rmSync(join(out, removed));
    utimesSync(join(out, touched), new Date(0), new Date(0));
    const a = run();
    expect(a.code).toBe(0);
    expect(a.stderr).toMatch(/\(2 written, \d+ unchanged, 0 removed\)/);
    expect(tree(out)).toEqual(want);
    // The same file with the same size but other content, between two runs that both hit the cache.
    const text = readFileSync(join(out, edited), 'utf8');
    writeFileSync(join(out, edited), text.replace(/[a-z]/, (c) => (c === 'a' ? 'b' : 'a')));
    expect(run().code).toBe(0);
    expect(tree(out)).toEqual(want);
    // No folder at all: every set from the constructs again.
    rmSync(out, { recursive: true });
    const b = run();
    expect(b.code).toBe(0);
    expect(tree(out)).toEqual(want);
    expect(run().stderr).toMatch(/\(0 written,/);
  });

  it('gitops --check with a warm cache (digests only) finds a file edited by hand, and nothing in an up-to-date folder', () => {
    const root = mkdtempSync(join(tmpdir(), 'cli-cache-'));
    const env = { CROWNLABS_CACHE_DIR: join(root, 'cache') };
    const out = join(root, 'gitops');
    const check = () => crownlabs(['gitops', '-f', LAB, '--config', CONFIG, '-o', out, '--check'], undefined, env);
    expect(crownlabs(['gitops', '-f', LAB, '--config', CONFIG, '-o', out], undefined, env).code).toBe(0);
    expect(check().code).toBe(0);
    const victim = [...listFiles(out)].find((f) => f.includes('/') && !f.startsWith('apps/') && !f.startsWith('root/') && !f.endsWith('kustomization.yaml'))!;
    writeFileSync(join(out, victim), readFileSync(join(out, victim), 'utf8').replace('metadata:', 'metadata: \n'));
    const stale = check();
    expect(stale.code).toBe(1);
    expect(stale.stderr).toContain(`M ${victim}`);
  });
});

