import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { boundDiff, shellWord } from '../../../src/cli/tree-diff.ts';
import { CONFIG, crownlabs, LAB, ROOT } from '../../support/cli.ts';

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
    expect(r.stderr).toMatch(/warning: gitopsSecretMode "sealed-secret": \d+ SealedSecret\(s\) hold placeholder values/);
    expect(crownlabs(['gitops', '-f', LAB, '--config', CONFIG, '-o', join(dir, 'b'), '--gitops-secret-mode', 'external-secret']).stderr).not.toMatch(/placeholder/);
    expect(crownlabs(['gitops', '-f', LAB, '--config', CONFIG, '-o', join(dir, 'c'), '--gitops-secret-mode', 'sealed-secret', '-q']).stderr).not.toMatch(/placeholder/);
  });
});
