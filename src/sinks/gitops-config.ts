import { existsSync } from 'node:fs';
import { dirname, join, relative, sep } from 'node:path';
import type { Problem } from '../inputs/problems.ts';
import { realPath } from './output-guard.ts';
import type { ComposerConfig } from '../config/config.ts';
import { envVarName } from '../config/keys.ts';

/**
 * What the gitops tree needs of the configuration beyond valid values: the repository Argo CD reads
 * it from has no default (a placeholder would render a tree that syncs nothing, without a word).
 */
export function gitopsConfigProblems(config: ComposerConfig): Problem[] {
  if (config.gitopsRepoUrl !== '') return [];
  return [
    {
      severity: 'error',
      file: 'configuration',
      field: 'gitopsRepoUrl',
      message: `is not set: the Applications and the AppProject name the git repository Argo CD reads this tree from. Set it in the config file (gitopsRepoUrl: https://git.example.org/lab.git), with --gitops-repo-url or with ${envVarName('gitopsRepoUrl')}`,
    },
  ];
}

/**
 * The Applications name the tree's folder in the repository by `gitopsPath`. When the output folder
 * is another path of its git work tree (or, outside one, of the working folder), Argo CD would look
 * in the wrong place: a warning saying how to set it. Undefined when they agree.
 */
export function gitopsPathWarning(config: ComposerConfig, output: string, cwd = process.cwd()): string | undefined {
  const out = realPath(output);
  const top = gitTop(out);
  const rel = relative(top ?? realPath(cwd), out).split(sep).join('/');
  // Outside the repository (or the working folder): nothing to compare with.
  if (rel === '' || rel.startsWith('..')) return undefined;
  const configured = config.gitopsPath.replace(/\/+$/, '');
  if (rel === configured) return undefined;
  const where = top ? `path ${rel} of the git repository ${top}` : `${rel} (from the working folder)`;
  return `warning: the Applications tell Argo CD to read this tree from path ${configured}/ of ${config.gitopsRepoUrl} (gitopsPath), but -o writes it to ${where}: if that is where Argo CD reads it, set gitopsPath: ${rel} in the config file (or --gitops-path ${rel}, ${envVarName('gitopsPath')}=${rel})`;
}

/** The top of the git work tree holding `path` (the nearest folder with a .git), if any. */
function gitTop(path: string): string | undefined {
  for (let dir = path; ; dir = dirname(dir)) {
    if (existsSync(join(dir, '.git'))) return dir;
    if (dirname(dir) === dir) return undefined;
  }
}
