// A few mutated labs through the real `crownlabs` binary (synth, gitops, validate), as an operator
// runs it: exit 0 or 1 (never 70, never killed), no stack trace, no raw control character on
// stderr, an error on exit 1, and the commands agree on whether the input is good.
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { BIN, CONFIG, ROOT } from '../support/cli.ts';
import { objectCase, textCase } from './support/arbitraries.ts';
import { materialize, type DocCase } from './support/doc-case.ts';
import { fuzz, runsOf, settings, timeoutOf } from './support/settings.ts';

const FILE = 'test/fuzz/cli.test.ts';
const SECRET_MODES = ['existing', 'external-secret', 'sealed-secret'];
const scratch = mkdtempSync(join(tmpdir(), 'crownlabs-fuzz-cli-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

interface Run {
  code: number | null;
  signal: NodeJS.Signals | null;
  stderr: string;
}

/** Runs the binary with a time limit (a hang is killed and reported, not waited out). */
function crownlabs(args: string[]): Promise<Run> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [BIN, ...args], { cwd: ROOT, env: { ...process.env, CI: 'true' }, stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr = (stderr + d.toString('utf8')).slice(-20_000)));
    const timer = setTimeout(() => child.kill('SIGKILL'), Math.max(settings.caseTimeoutMs, 120_000));
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stderr });
    });
  });
}

const STACK = /^\s+at .+:\d+:\d+\)?$/m;
const RAW_CONTROL = /[\x00-\x08\x0b-\x1f]/;

let n = 0;
async function check(c: DocCase): Promise<void> {
  const dir = join(scratch, String(n++));
  const input = join(dir, 'lab');
  mkdirSync(input, { recursive: true });
  for (const f of materialize(c).files) writeFileSync(join(input, f.name), f.bytes);
  const common = ['-f', input, '--config', CONFIG, '--vm-registry', 'registry.example', '--vm-registry-secret', 'registry-push', '--gitops-secret-mode', SECRET_MODES[c.config % 3]];
  // Two spawns per case (~1 s each): synth and gitops; validate only where both accept (it must too).
  const [synth, gitops] = await Promise.all([crownlabs(['synth', ...common, '-o', join(dir, 'dist')]), crownlabs(['gitops', ...common, '-o', join(dir, 'gitops')])]);
  const runs: Record<string, Run> = { synth, gitops };
  if (synth.code === 0 && gitops.code === 0) runs.validate = await crownlabs(['validate', ...common]);
  const wrong: string[] = [];
  for (const [name, r] of Object.entries(runs)) {
    const tail = JSON.stringify(r.stderr.slice(-1500));
    if (r.signal) wrong.push(`${name}: killed (${r.signal}): a hang or a crash; stderr ends ${tail}`);
    else if (r.code !== 0 && r.code !== 1) wrong.push(`${name}: exit ${r.code}${r.code === 70 ? ' (internal error)' : ''}; stderr ends ${tail}`);
    if (/internal error/.test(r.stderr) || STACK.test(r.stderr)) wrong.push(`${name}: a stack trace or "internal error" on stderr: ${tail}`);
    if (RAW_CONTROL.test(r.stderr)) wrong.push(`${name}: a raw control character on stderr (#14.16): ${tail}`);
    if (r.code === 1 && !/error/.test(r.stderr)) wrong.push(`${name}: exit 1 without an error message: ${tail}`);
  }
  if (!wrong.length && synth.code !== gitops.code) wrong.push(`synth exits ${synth.code} but gitops ${gitops.code} on the same input`);
  if (!wrong.length && runs.validate && runs.validate.code !== 0) {
    wrong.push(`synth and gitops exit 0 on what validate refuses (#14.15: they must refuse output the API server would reject): ${JSON.stringify(runs.validate.stderr.slice(-1500))}`);
  }
  rmSync(dir, { recursive: true, force: true });
  if (wrong.length) throw new Error(wrong.join('\n'));
}

describe('fuzz: the crownlabs binary end to end', () => {
  it('cli: end to end', { timeout: timeoutOf('cli: end to end', 30_000) }, async () => {
    const { runs } = await fuzz('cli: end to end', FILE, fc.oneof(objectCase, textCase), check);
    if (!settings.path) expect(runs).toBe(runsOf('cli: end to end'));
  });
});
