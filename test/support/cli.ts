import { spawnSync } from 'node:child_process';
import { join } from 'node:path';

export const ROOT = join(import.meta.dirname, '..', '..');
export const BIN = join(ROOT, 'bin', 'crownlabs.js');
export const LAB = join(ROOT, 'examples', 'lab');
export const CONFIG = join(ROOT, 'examples', 'crownlabs.config.yaml');

/** Runs the real `crownlabs` binary, as CI would (no TTY, CI=true). */
export function crownlabs(args: string[], cwd = ROOT, env: NodeJS.ProcessEnv = {}) {
  const r = spawnSync(process.execPath, [BIN, ...args], { cwd, encoding: 'utf8', env: { ...process.env, CI: 'true', ...env } });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}
