import { spawn } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { parse } from 'yaml';
import { describe, expect, it } from 'vitest';
import { boundDiff, shellWord } from '../../../src/cli/tree-diff.ts';
import { BIN, CONFIG, crownlabs, LAB, ROOT } from '../../support/cli.ts';

const tmp = (prefix: string) => mkdtempSync(join(tmpdir(), prefix));

/** A copy of the committed tree, which the example renders to. */
function committedTree(): string {
  const out = join(tmp('check-'), 'my tree');
  cpSync(join(ROOT, 'gitops'), out, { recursive: true });
  return out;
}

const ROOT_APP = 'root/Application_argocd_crownlabs-root.yaml';

describe('gitops --check prints what differs (#17.1)', () => {
  it('a changed, an added and a deleted file: a unified diff on stdout, their names on stderr, exit 1', () => {
    const out = committedTree();
    const app = join(out, ROOT_APP);
    writeFileSync(app, readFileSync(app, 'utf8').replace('targetRevision: HEAD', 'targetRevision: main'));
    rmSync(join(out, 'apps', 'kustomization.yaml'));
    writeFileSync(join(out, 'stray.yaml'), 'left: over\n');
    const r = crownlabs(['gitops', '-f', LAB, '--config', CONFIG, '-o', out, '--check']);
    expect(r.code).toBe(1);
    // The changed line, as `diff -u` / git show it, with a/ and b/ headers and no timestamps.
    expect(r.stdout).toContain(`--- a/${ROOT_APP}\n+++ b/${ROOT_APP}\n@@ `);
    expect(r.stdout).toMatch(/^-    targetRevision: main\n\+    targetRevision: HEAD$/m);
    // Added: every line is new; deleted: every line is gone.
    expect(r.stdout).toMatch(/^\+\+\+ b\/apps\/kustomization\.yaml\n@@ -0,0 \+1,\d+ @@\n\+apiVersion: kustomize/m);
    expect(r.stdout).toContain('--- a/stray.yaml\n+++ b/stray.yaml\n@@ -1 +0,0 @@\n-left: over\n');
    expect(r.stderr).toContain('3 file(s) differ (1 changed, 1 added, 1 deleted');
    expect(r.stderr).toMatch(/^ {2}A apps\/kustomization\.yaml\n {2}M root\/Application_argocd_crownlabs-root\.yaml\n {2}D stray\.yaml$/m);
  });

  it('the hint repeats -f, --config, -o and the config flags given, quoted for the shell, without --check', () => {
    const out = committedTree();
    const r = crownlabs(['gitops', '-f', LAB, '--config', CONFIG, '-o', out, '--check', '--gitops-revision', 'main', '--full-diff']);
    expect(r.code).toBe(1);
    const hint = /^run: (.*)$/m.exec(r.stderr)?.[1];
    expect(hint).toBe(`crownlabs gitops -f ${LAB} -o '${out}' --config ${CONFIG} --gitops-revision main`);
  });

  it('a huge diff is bounded: a few files, a few lines each, with counts of what is left out', () => {
    const out = committedTree();
    // A long stray file (first in path order), and every Application changes with Argo CD's namespace.
    writeFileSync(join(out, 'aaa.yaml'), Array.from({ length: 100 }, (_, i) => `line${i}: x\n`).join(''));
    const r = crownlabs(['gitops', '-f', LAB, '--config', CONFIG, '-o', out, '--check', '--argocd-namespace', 'gitops-elsewhere', '--gitops-path', 'deep/er']);
    expect(r.code).toBe(1);
    expect(r.stdout.match(/^\+\+\+ b\//gm)?.length).toBe(20);
    expect(r.stdout).toMatch(/^--- a\/aaa\.yaml\n\+\+\+ b\/aaa\.yaml\n@@ -1,100 \+0,0 @@\n(-line\d+: x\n){59}… 41 more line\(s\) of this file's diff \(--full-diff prints them\)$/m);
    expect(r.stderr).toMatch(/the diff on stdout shows 20 of the \d+ files, at most 60 lines each/);
    const full = crownlabs(['gitops', '-f', LAB, '--config', CONFIG, '-o', out, '--check', '--argocd-namespace', 'gitops-elsewhere', '--gitops-path', 'deep/er', '--full-diff']);
    expect(full.stdout.length).toBeGreaterThan(r.stdout.length);
    expect(full.stdout).not.toContain('more line(s)');
  });

  it('invalid input or configuration is exit 3 (nothing compared), not 1 (stale)', () => {
    const out = committedTree();
    const bad = join(tmp('bad-'), 'bad.yaml');
    writeFileSync(bad, 'apiVersion: crownlabs.polito.it/v1alpha2\nkind: Tenant\nmetadata: [oops\n');
    const input = crownlabs(['gitops', '-f', bad, '--config', CONFIG, '-o', out, '--check']);
    expect(input.code).toBe(3);
    expect(input.stdout).toBe('');
    const config = crownlabs(['gitops', '-f', LAB, '--config', CONFIG, '-o', out, '--check', '--gitops-path', '/abs']);
    expect(config.code).toBe(3);
    expect(config.stderr).toMatch(/gitopsPath: must be a relative path/);
    // Without --check an input error stays exit 1, as in every other command.
    expect(crownlabs(['gitops', '-f', bad, '--config', CONFIG, '-o', join(tmp('w-'), 'g')]).code).toBe(1);
  });

  it('--check with --watch is a usage error (exit 2)', () => {
    expect(crownlabs(['gitops', '-f', LAB, '--config', CONFIG, '--check', '--watch']).code).toBe(2);
  });
});

describe('boundDiff', () => {
  it('keeps headers, cuts each file after n lines and drops diff command lines and timestamps', () => {
    const text = ['diff -ruN a/x b/x', '--- a/x\t2026-01-01 00:00:00', '+++ b/x\t2026-01-01 00:00:01', '@@ -1,3 +1,3 @@', '-1', '+2', ' 3', 'diff -ruN a/y b/y', '--- a/y\t1970', '+++ b/y\t1970', '@@ -0,0 +1 @@', '+--- not a header', ''].join('\n');
    expect(boundDiff(text, 2)).toBe(['--- a/x', '+++ b/x', '@@ -1,3 +1,3 @@', '-1', "… 2 more line(s) of this file's diff (--full-diff prints them)", '--- a/y', '+++ b/y', '@@ -0,0 +1 @@', '+--- not a header', ''].join('\n'));
  });
  it('shellWord quotes what a shell would split or expand', () => {
    expect(shellWord('examples/lab')).toBe('examples/lab');
    expect(shellWord("it's $HOME")).toBe(`'it'\\''s $HOME'`);
  });
});

describe('no placeholder repository (#17.2)', () => {
  it('gitops without gitopsRepoUrl is an error naming the key and how to set it; nothing is written', () => {
    const dir = tmp('norepo-');
    const config = join(dir, 'config.yaml');
    writeFileSync(config, readFileSync(CONFIG, 'utf8').replace(/^gitopsRepoUrl:.*\n/m, ''));
    const r = crownlabs(['gitops', '-f', LAB, '--config', config, '-o', join(dir, 'gitops')]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/gitopsRepoUrl: is not set: .*--gitops-repo-url .*CROWNLABS_GITOPS_REPO_URL/);
    expect(r.stderr).not.toMatch(/git\.example\.com/);
    expect(existsSync(join(dir, 'gitops'))).toBe(false);
    const ok = crownlabs(['gitops', '-f', LAB, '--config', config, '-o', join(dir, 'gitops'), '--gitops-repo-url', 'ssh://git@git.lab.org/lab.git']);
    expect(ok.code).toBe(0);
    expect(readFileSync(join(dir, 'gitops', ROOT_APP), 'utf8')).toContain('repoURL: ssh://git@git.lab.org/lab.git');
  });
  it('manifests --argocd-application without gitopsRepoUrl is an error too', () => {
    const r = crownlabs(['manifests', '--argocd-application', 'platform']);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/gitopsRepoUrl: is not set/);
    expect(r.stdout).toBe('');
  });
});

describe('what Argo CD will not do by itself is said (#17.2, #17.3)', () => {
  it('a new or changed AppProject is announced with the command to apply it; an unchanged one is not', () => {
    const out = join(tmp('project-'), 'gitops');
    const first = crownlabs(['gitops', '-f', LAB, '--config', CONFIG, '-o', out]);
    expect(first.code).toBe(0);
    expect(first.stderr).toContain(`note: the AppProject root/AppProject_argocd_crownlabs.yaml`);
    expect(first.stderr).toContain(`kubectl apply -f ${join(out, 'root', 'AppProject_argocd_crownlabs.yaml')}`);
    const again = crownlabs(['gitops', '-f', LAB, '--config', CONFIG, '-o', out]);
    expect(again.code).toBe(0);
    expect(again.stderr).not.toContain('AppProject');
  });
  it('sealed-secret mode warns that its SealedSecrets hold placeholders; -q silences it', () => {
    const dir = tmp('sealed-');
    const r = crownlabs(['gitops', '-f', LAB, '--config', CONFIG, '-o', join(dir, 'a'), '--gitops-secret-mode', 'sealed-secret']);
    expect(r.code).toBe(0);
    expect(r.stderr).toMatch(/warning: gitopsSecretMode "sealed-secret": \d+ SealedSecret\(s\) hold \d+ placeholder value\(s\)/);
    expect(crownlabs(['gitops', '-f', LAB, '--config', CONFIG, '-o', join(dir, 'b'), '--gitops-secret-mode', 'external-secret']).stderr).not.toMatch(/placeholder/);
    expect(crownlabs(['gitops', '-f', LAB, '--config', CONFIG, '-o', join(dir, 'c'), '--gitops-secret-mode', 'sealed-secret', '-q']).stderr).not.toMatch(/placeholder/);
  });
});

describe('sealed values in the folder survive gitops runs (#14 follow-up: sealed secrets)', () => {
  const SEALED = ['--gitops-secret-mode', 'sealed-secret'];
  /** A sealed-secret tree whose placeholders are all replaced by (fake) sealed values; returns them by file. */
  function sealedTree(): { out: string; values: Map<string, Record<string, string>> } {
    const out = join(tmp('sealed-tree-'), 'gitops');
    expect(crownlabs(['gitops', '-f', LAB, '--config', CONFIG, '-o', out, ...SEALED]).code).toBe(0);
    const values = new Map<string, Record<string, string>>();
    let i = 0;
    for (const rel of readdirSync(out, { recursive: true, encoding: 'utf8' }).filter((f) => basename(f).startsWith('SealedSecret_'))) {
      const file = join(out, rel);
      // As an operator does: each placeholder replaced in place by kubeseal's output.
      let text = readFileSync(file, 'utf8');
      const sealedValues: Record<string, string> = {};
      for (const key of Object.keys(valuesIn(out, rel))) {
        sealedValues[key] = Buffer.from(`sealed value ${i++} of ${rel} ${key}`).toString('base64');
        text = text.replace(/"SEAL-ME: [^"]*"/, sealedValues[key]);
      }
      values.set(rel, sealedValues);
      writeFileSync(file, text);
    }
    expect(values.size).toBeGreaterThan(1);
    return { out, values };
  }
  const valuesIn = (out: string, rel: string) => (parse(readFileSync(join(out, rel), 'utf8')) as { spec: { encryptedData: Record<string, string> } }).spec.encryptedData;

  it('a re-render keeps the sealed values, --check is up to date, and no placeholder warning is left', () => {
    const { out, values } = sealedTree();
    const check = crownlabs(['gitops', '-f', LAB, '--config', CONFIG, '-o', out, '--check', ...SEALED]);
    expect(check.stderr).toContain('is up to date');
    expect(check.code).toBe(0);
    const again = crownlabs(['gitops', '-f', LAB, '--config', CONFIG, '-o', out, ...SEALED]);
    expect(again.code).toBe(0);
    expect(again.stderr).not.toMatch(/placeholder/);
    for (const [rel, v] of values) expect(valuesIn(out, rel)).toEqual(v);
    // Still up to date after the write.
    expect(crownlabs(['gitops', '-f', LAB, '--config', CONFIG, '-o', out, '--check', ...SEALED]).code).toBe(0);
  });

  it('the warning counts the placeholders left: one value back to a placeholder, one warned', () => {
    const { out, values } = sealedTree();
    const [rel, v] = [...values][0];
    const key = Object.keys(v)[0];
    const file = join(out, rel);
    writeFileSync(file, readFileSync(file, 'utf8').replace(v[key], 'SEAL-ME: later'));
    const r = crownlabs(['gitops', '-f', LAB, '--config', CONFIG, '-o', out, ...SEALED]);
    expect(r.code).toBe(0);
    expect(r.stderr).toMatch(/1 SealedSecret\(s\) hold 1 placeholder value\(s\)/);
    expect(valuesIn(out, rel)[key]).toMatch(/^SEAL-ME: kubeseal --raw/);
  });

  it('watch mode keeps the sealed values when it re-renders their set', async () => {
    const { out, values } = sealedTree();
    const lab = join(tmp('sealed-lab-'), 'lab');
    cpSync(LAB, lab, { recursive: true });
    const child = spawn(process.execPath, [BIN, 'gitops', '-f', lab, '--config', CONFIG, '-o', out, '--watch', '--debounce', '50', ...SEALED], { env: { ...process.env, CI: 'true' } });
    let stderr = '';
    child.stderr.on('data', (d) => (stderr += d));
    const waitFor = (re: RegExp) =>
      new Promise<void>((done, fail) => {
        const timer = setInterval(() => {
          if (re.test(stderr)) {
            clearInterval(timer);
            done();
          } else if (child.exitCode !== null) {
            clearInterval(timer);
            fail(new Error(`exited: ${stderr}`));
          }
        }, 20);
      });
    try {
      await waitFor(/watching/);
      const instances = join(lab, 'instances.yaml');
      writeFileSync(instances, readFileSync(instances, 'utf8').replace('  running: false\n', '  running: true\n'));
      await waitFor(/watch: 1 set\(s\) re-rendered/);
    } finally {
      child.kill('SIGTERM');
    }
    const rel = 'instances/tenant-john-doe/SealedSecret_tenant-john-doe_black-tea-0042.yaml';
    expect(values.has(rel)).toBe(true);
    for (const [r, v] of values) expect(valuesIn(out, r)).toEqual(v);
  });
});
