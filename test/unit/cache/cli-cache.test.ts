import { createHash } from 'node:crypto';
import { chmodSync, cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
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

  it('a render cache planted where others can write is not read: its sets are rendered, not copied', () => {
    const root = mkdtempSync(join(tmpdir(), 'cli-cache-'));
    const cacheDir = join(root, 'cache');
    const env = { CROWNLABS_CACHE_DIR: cacheDir };
    const out = join(root, 'out');
    const run = () => {
      rmSync(out, { recursive: true, force: true }); // no replay of the last run: every set from the cache
      expect(crownlabs(['synth', '-f', LAB, '--config', CONFIG, '-o', out], undefined, env).code).toBe(0);
      return [...tree(out).values()].join('');
    };
    expect(run()).not.toContain('planted-by-mallory');
    // Mallory rewrites the entries, digest included, as anyone who can write the file could.
    const file = join(cacheDir, readdirSync(cacheDir).find((f) => /^synth-.*\.json$/.test(f))!);
    const text = readFileSync(file, 'utf8');
    const body = text.slice(0, text.length - 65).replace(/app\.kubernetes\.io\/managed-by: crownlabs-composer/g, 'app.kubernetes.io/managed-by: planted-by-mallory');
    writeFileSync(file, `${body}${createHash('sha256').update(body).digest('hex')}\n`);
    chmodSync(file, 0o600);
    // Mode 0600, this user's: the cache is trusted (that is what makes a planted one dangerous).
    expect(run()).toContain('planted-by-mallory');
    writeFileSync(file, `${body}${createHash('sha256').update(body).digest('hex')}\n`);
    chmodSync(file, 0o666);
    expect(run()).not.toContain('planted-by-mallory');
  });
});

