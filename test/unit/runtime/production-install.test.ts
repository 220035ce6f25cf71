// The image installs production dependencies only (no tsx, no esbuild: devDependencies) and runs
// the bundles made at build time. This lays out the same install in a temporary folder.
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const ROOT = join(import.meta.dirname, '..', '..', '..');
const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { dependencies: Record<string, string>; devDependencies: Record<string, string> };
let app: string;

/** Links `name` from the repository's node_modules into the temporary install. */
function link(name: string): void {
  if (existsSync(join(app, 'node_modules', name))) return;
  mkdirSync(join(app, 'node_modules', name, '..'), { recursive: true });
  symlinkSync(join(ROOT, 'node_modules', name), join(app, 'node_modules', name), 'dir');
}

function crownlabs(args: string[], env: Record<string, string> = {}) {
  return spawnSync(process.execPath, [join(app, 'bin', 'crownlabs.js'), ...args], { cwd: app, encoding: 'utf8', env: { ...process.env, CROWNLABS_TSX: '', ...env }, timeout: 60_000 });
}

beforeAll(() => {
  app = mkdtempSync(join(tmpdir(), 'crownlabs-prod-'));
  for (const f of ['package.json', 'tsconfig.json']) cpSync(join(ROOT, f), join(app, f));
  for (const d of ['bin', 'src', 'constructs', 'imports']) cpSync(join(ROOT, d), join(app, d), { recursive: true });
  for (const name of Object.keys(pkg.dependencies)) link(name);
  // esbuild only while the bundles are made, as in the image's build stage.
  link('esbuild');
  const build = spawnSync(process.execPath, [join(app, 'src', 'runtime', 'build.mjs')], { cwd: app, encoding: 'utf8', timeout: 120_000 });
  expect(build.status, build.stderr).toBe(0);
  rmSync(join(app, 'node_modules', 'esbuild'));
}, 180_000);

afterAll(() => {
  if (app) rmSync(app, { recursive: true, force: true });
});

describe('a production install (the image)', () => {
  it('keeps tsx and esbuild out of the production dependencies', () => {
    expect(Object.keys(pkg.dependencies)).not.toContain('tsx');
    expect(Object.keys(pkg.dependencies)).not.toContain('esbuild');
    expect(readdirSync(join(app, 'node_modules'))).not.toContain('tsx');
  });

  it('renders from the bundles alone, with render workers too', () => {
    const args = ['synth', '-f', join(ROOT, 'examples', 'lab'), '--config', join(ROOT, 'examples', 'crownlabs.config.yaml'), '--stdout'];
    const one = crownlabs(args);
    expect(one.status, one.stderr).toBe(0);
    expect(one.stdout).toMatch(/^kind: VirtualMachineInstance$/m);
    const two = crownlabs([args[0], '-j', '2', ...args.slice(1)]);
    expect(two.status, two.stderr).toBe(0);
    expect(two.stdout).toBe(one.stdout);
  });

  it('without a bundle and without tsx, says so in one line (exit 1), no stack trace', () => {
    const r = crownlabs(['--version'], { CROWNLABS_TSX: '1' });
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(/^crownlabs: error: no bundle of the sources in \.cache\/ and no tsx to run them .*npm run build/);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
  });
});
