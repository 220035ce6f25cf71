import { cpSync, mkdtempSync, readFileSync, writeFileSync, appendFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CONFIG, crownlabs, LAB } from '../../support/cli.ts';

/** A copy of the example lab, to break. */
function labCopy(): string {
  const dir = join(mkdtempSync(join(tmpdir(), 'cliux-')), 'lab');
  cpSync(LAB, dir, { recursive: true });
  return dir;
}

const errorLines = (stderr: string) => stderr.split('\n').filter((l) => l.includes(': error: '));

describe('one broken Template is one error (#17.2)', () => {
  it('names the Template, its file, document and field, and the Instances that use it, once', () => {
    const lab = labCopy();
    const coffee = join(lab, 'templates-coffee.yaml');
    writeFileSync(coffee, readFileSync(coffee, 'utf8').replace('cpu: 2', 'cpu: two'));
    for (let i = 2; i <= 8; i++) {
      appendFileSync(
        join(lab, 'instances.yaml'),
        `---\napiVersion: crownlabs.polito.it/v1alpha2\nkind: Instance\nmetadata:\n  name: espresso-${i}\n  namespace: tenant-john-doe\nspec:\n  template.crownlabs.polito.it/TemplateRef:\n    name: espresso\n    namespace: workspace-coffee\n  tenant.crownlabs.polito.it/TenantRef:\n    name: john.doe\n`,
      );
    }
    const out = join(mkdtempSync(join(tmpdir(), 'cliux-out-')), 'gitops');
    const extra: Record<string, string[]> = { validate: [], synth: ['--stdout'], gitops: ['-o', out] };
    for (const cmd of ['validate', 'synth', 'gitops']) {
      const r = crownlabs([cmd, '-f', lab, '--config', CONFIG, ...extra[cmd]]);
      expect(r.code).toBe(1);
      const errors = errorLines(r.stderr);
      expect(errors).toHaveLength(1);
      expect(errors[0]).toMatch(/templates-coffee\.yaml:\d+:\d+ \(document 1, Template workspace-coffee\/espresso\): error: spec\.environmentList\[0\]\.resources\.cpu: /);
      expect(errors[0]).toContain('used by 8 Instances, not rendered: tenant-john-doe/espresso-1, tenant-john-doe/espresso-2, tenant-john-doe/espresso-3, tenant-john-doe/espresso-4, tenant-john-doe/espresso-5, and 3 more');
      expect(r.stderr).not.toContain('not found');
    }
  });

  it('a Template that is not in the input at all is still reported per Instance', () => {
    const lab = labCopy();
    const coffee = join(lab, 'templates-coffee.yaml');
    writeFileSync(coffee, readFileSync(coffee, 'utf8').replace('name: espresso\n', 'name: ristretto\n'));
    const r = crownlabs(['validate', '-f', lab, '--config', CONFIG]);
    expect(r.code).toBe(1);
    expect(errorLines(r.stderr).join('\n')).toMatch(/Instance tenant-john-doe\/espresso-1\): error: .*Template workspace-coffee\/espresso not found/);
  });
});

describe('--help, help config and usage errors (#17.2)', () => {
  const commandsWithConfig = ['synth', 'validate', 'gitops', 'diff', 'manifests', 'controller'];

  it("each command's --help shows its own flags, not the configuration keys", () => {
    for (const cmd of commandsWithConfig) {
      const r = crownlabs([cmd, '--help']);
      expect(r.code).toBe(0);
      expect(r.stdout).toContain('--config <file>');
      expect(r.stdout).toContain('crownlabs help config');
      for (const flag of ['--website-base-url', '--gitops-repo-url', '--platform-image', '--kc-tenant-operator-psw']) expect(r.stdout, `${cmd} --help`).not.toContain(`${flag} <value>`);
      expect(r.stdout.split('\n').length, `${cmd} --help`).toBeLessThan(80);
    }
    expect(crownlabs(['synth', '--help']).stdout).toContain('-o, --output <dir>');
  });

  it('crownlabs help config lists every configuration key with its flag, environment variable and default', async () => {
    const { CONFIG_KEYS, envVarName } = await import('../../../src/config/keys.ts');
    const r = crownlabs(['help', 'config']);
    expect(r.code).toBe(0);
    for (const def of CONFIG_KEYS) {
      expect(r.stdout).toContain(`\n${def.key}\n`);
      if (def.flag) expect(r.stdout).toContain(`${def.flag} <value>`);
      expect(r.stdout).toContain(envVarName(def.key));
    }
    expect(r.stdout).toMatch(/gitopsSecretMode\n.*one of: existing, external-secret, sealed-secret/);
  });

  it('help <command> shows that command; an unknown topic is a usage error', () => {
    expect(crownlabs(['help', 'synth']).stdout).toMatch(/^Usage: crownlabs synth/);
    const r = crownlabs(['help', 'nope']);
    expect(r.code).toBe(2);
    expect(r.stderr).toBe("error: unknown help topic 'nope' (a command, or config)\nsee 'crownlabs --help'\n");
  });

  it('config flags still work on the commands', () => {
    const r = crownlabs(['synth', '-f', LAB, '--config', CONFIG, '--stdout', '--website-base-url', 'labs.example.org']);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('host: labs.example.org');
  });

  it('a usage error is one line plus where to look, exit 2', () => {
    const cases: [string[], string][] = [
      [['synth', '-f', LAB, '--ouput', 'x'], "error: unknown option '--ouput' (Did you mean --output?)\nsee 'crownlabs synth --help'\n"],
      [['synth'], "error: required option '-f, --file <path...>' not specified\nsee 'crownlabs synth --help'\n"],
      [['validate', '-f'], "error: option '-f, --file <path...>' argument missing\nsee 'crownlabs validate --help'\n"],
      [['synt'], "error: unknown command 'synt' (Did you mean synth?)\nsee 'crownlabs --help'\n"],
    ];
    for (const [args, stderr] of cases) {
      const r = crownlabs(args);
      expect(r.code, args.join(' ')).toBe(2);
      expect(r.stderr, args.join(' ')).toBe(stderr);
      expect(r.stdout).toBe('');
    }
  });

  it('an unknown config flag suggests the nearest one, though --help does not show them', () => {
    const r = crownlabs(['gitops', '-f', LAB, '--gitops-repo-ur', 'https://x.example/r.git']);
    expect(r.code).toBe(2);
    expect(r.stderr).toBe("error: unknown option '--gitops-repo-ur' (Did you mean --gitops-repo-url?)\nsee 'crownlabs gitops --help'\n");
  });

  it('an unknown key of the config file suggests the nearest valid key', () => {
    const dir = mkdtempSync(join(tmpdir(), 'cliux-config-'));
    const file = join(dir, 'c.yaml');
    // A typo, the flag's spelling and the environment variable's: each names the key to write.
    writeFileSync(file, 'websiteBaseURl: a.example.org\ngitops-repo-url: https://x.example/r.git\nCROWNLABS_CAP_CPU: "4"\nzzzzzz: 1\n');
    const r = crownlabs(['validate', '-f', LAB, '--config', file]);
    expect(r.code).toBe(1);
    expect(errorLines(r.stderr)).toEqual([
      `${file}:1:1: error: websiteBaseURl: unknown config key: did you mean websiteBaseUrl?`,
      `${file}:2:1: error: gitops-repo-url: unknown config key: did you mean gitopsRepoUrl?`,
      `${file}:3:1: error: CROWNLABS_CAP_CPU: unknown config key: did you mean capCpu?`,
      `${file}:4:1: error: zzzzzz: unknown config key (see 'crownlabs help config' for the keys)`,
    ]);
  });
});
