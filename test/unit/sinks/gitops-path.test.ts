import { mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../../src/config/config.ts';
import { gitopsPathWarning } from '../../../src/sinks/gitops-config.ts';
import { CONFIG, crownlabs, LAB } from '../../support/cli.ts';

function repo(): string {
  const dir = mkdtempSync(join(tmpdir(), 'gitops-path-'));
  mkdirSync(join(dir, '.git'));
  return dir;
}
const config = (flags: Record<string, string> = {}) => loadConfig({ file: CONFIG, env: {}, flags }).config;

describe('the path the Applications give Argo CD (gitopsPath) and the folder -o writes', () => {
  it('warns, with the setting to write, when -o is another path of the git repository', () => {
    const dir = repo();
    expect(gitopsPathWarning(config(), join(dir, 'deploy', 'tree'), '/')).toBe(
      `warning: the Applications tell Argo CD to read this tree from path gitops/ of https://git.example.com/crownlabs/lab.git (gitopsPath), but -o writes it to path deploy/tree of the git repository ${dir}: if that is where Argo CD reads it, set gitopsPath: deploy/tree in the config file (or --gitops-path deploy/tree, CROWNLABS_GITOPS_PATH=deploy/tree)`,
    );
    expect(gitopsPathWarning(config(), join(dir, 'gitops'), '/')).toBeUndefined();
    expect(gitopsPathWarning(config({ gitopsPath: 'deploy/tree' }), join(dir, 'deploy', 'tree'), '/')).toBeUndefined();
  });

  it('outside a repository, compares with the path from the working folder; says nothing for a folder outside it', () => {
    const dir = mkdtempSync(join(tmpdir(), 'gitops-path-plain-'));
    expect(gitopsPathWarning(config(), join(dir, 'other'), dir)).toMatch(/-o writes it to other \(from the working folder\): .*set gitopsPath: other /);
    expect(gitopsPathWarning(config(), join(dir, 'gitops'), dir)).toBeUndefined();
    expect(gitopsPathWarning(config(), join(dir, 'other'), join(dir, 'elsewhere'))).toBeUndefined();
  });

  it('gitops -o other/ prints it (not with -q), and writes the tree all the same', () => {
    const dir = repo();
    const r = crownlabs(['gitops', '-f', LAB, '--config', CONFIG, '-o', 'other'], dir);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain('-o writes it to path other of the git repository');
    expect(crownlabs(['gitops', '-f', LAB, '--config', CONFIG, '-o', 'other', '-q'], dir).stderr).not.toContain('warning: the Applications');
  });
});
