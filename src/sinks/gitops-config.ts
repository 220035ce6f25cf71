import type { Problem } from '../inputs/problems.ts';
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
