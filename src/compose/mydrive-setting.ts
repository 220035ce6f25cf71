import type { Problem } from '../inputs/problems.ts';
import { envVarName } from '../config/keys.ts';

/** The field of an Instance's error when MyDrive is mounted and no share is known (src/model/instance-plan.ts). */
const MYDRIVE_FIELD = 'spec.environmentList[].mountMyDriveVolume';
const SHOWN = 5;

/**
 * Replaces the per-Instance "no MyDrive share" errors of a composition from files, made while
 * `mydriveNfsServerName` is unset, by one configuration error put first: the fix is one key, not
 * an edit of each Instance.
 */
export function foldMyDriveProblems(problems: Problem[]): void {
  const missing = problems.filter((p) => p.severity === 'error' && p.field === MYDRIVE_FIELD);
  if (missing.length === 0) return;
  const rest = problems.filter((p) => !missing.includes(p));
  const names = missing.slice(0, SHOWN).map((p) => p.name);
  const more = missing.length > SHOWN ? `, and ${missing.length - SHOWN} more` : '';
  const folded: Problem = {
    severity: 'error',
    file: 'configuration',
    field: 'mydriveNfsServerName',
    message:
      `is not set: set it to the NFS server of the tenants' MyDrive shares (mydriveNfsServerName: nfs.example.org in the config file, --mydrive-nfs-server-name or ${envVarName('mydriveNfsServerName')}), ` +
      `or give each tenant namespace its mydrive-info Secret. ${missing.length} Instance${missing.length === 1 ? '' : 's'} mount${missing.length === 1 ? 's' : ''} MyDrive and ${missing.length === 1 ? 'is' : 'are'} not rendered: ${names.join(', ')}${more}`,
  };
  problems.splice(0, problems.length, folded, ...rest);
}
