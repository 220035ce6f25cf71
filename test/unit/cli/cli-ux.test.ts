import { spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, readdirSync, readFileSync, writeFileSync, appendFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { BIN, CONFIG, crownlabs, LAB, ROOT } from '../../support/cli.ts';
import type { ConfigKeyDef } from '../../../src/config/keys.ts';

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

  it('help config shows each default as its flag takes it (k=v&k=v for a map), and the flag takes it back', async () => {
    const { CONFIG_KEYS } = await import('../../../src/config/keys.ts');
    const { parseValue } = await import('../../../src/config/config.ts');
    const out = crownlabs(['help', 'config']).stdout;
    expect(out).toMatch(/\nnamespaceWhitelist\n.*default: crownlabs\.polito\.it\/operator-selector=production\s/);
    for (const def of CONFIG_KEYS as readonly ConfigKeyDef[]) {
      if (!def.flag) continue;
      const shown = new RegExp(`\n${def.key}\n.*default: (.*?)(  ·  |\n)`).exec(out)![1];
      const text = shown === '""' ? '' : shown;
      expect(parseValue(def, text), def.key).toEqual(parseValue(def, def.default));
    }
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

/** Runs the CLI with `input` on its standard input. */
function withStdin(args: string[], input: string | Buffer) {
  const r = spawnSync(process.execPath, [BIN, ...args], { cwd: ROOT, input, encoding: 'utf8', env: { ...process.env, CI: 'true' } });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** The example lab as one multi-document stream, as `kustomize build` or `cat` with separators give it. */
const labStream = () => readdirSync(LAB).sort().map((f) => `---\n${readFileSync(join(LAB, f), 'utf8')}`).join('\n');

describe('-f - reads standard input (#17.2)', () => {
  it('synth, validate and gitops render from stdin what they render from the files', () => {
    const fromFiles = crownlabs(['synth', '-f', LAB, '--config', CONFIG, '--stdout']);
    const fromStdin = withStdin(['synth', '-f', '-', '--config', CONFIG, '--stdout'], labStream());
    expect(fromStdin.code, fromStdin.stderr).toBe(0);
    expect(fromStdin.stdout).toBe(fromFiles.stdout);
    expect(withStdin(['validate', '-f', '-', '--config', CONFIG], labStream()).code).toBe(0);
    const out = join(mkdtempSync(join(tmpdir(), 'cliux-gitops-')), 'tree');
    const g = withStdin(['gitops', '-f', '-', '--config', CONFIG, '-o', out], labStream());
    expect(g.code, g.stderr).toBe(0);
    expect(readdirSync(out).length).toBeGreaterThan(1);
  });

  it('mixes with files; its problems are shown as <stdin> with document and line', () => {
    const lab = labCopy();
    const templates = readFileSync(join(lab, 'templates-coffee.yaml'), 'utf8');
    writeFileSync(join(lab, 'templates-coffee.yaml'), '');
    const r = withStdin(['validate', '-f', lab, '-f', '-', '--config', CONFIG], templates.replace('cpu: 2', 'cpu: two'));
    expect(r.code).toBe(1);
    expect(errorLines(r.stderr)[0]).toMatch(/^<stdin>:18:14 \(document 1, Template workspace-coffee\/espresso\): error: spec\.environmentList\[0\]\.resources\.cpu: /);
    // The same object on stdin and in a file, defined otherwise, is a duplicate naming both.
    const dup = withStdin(['validate', '-f', LAB, '-f', '-', '--config', CONFIG], readFileSync(join(LAB, 'workspaces.yaml'), 'utf8').replace(/prettyName: .*/, 'prettyName: Another'));
    expect(dup.code).toBe(1);
    expect(dup.stderr).toMatch(/^<stdin>:\d+:\d+ \(document 1, Workspace \S+\): error: metadata\.name: duplicate Workspace "\S+" \(first defined in examples\/lab\/workspaces\.yaml, document 1\), differing at spec\.prettyName$/m);
  });

  it('keeps the limits of an input file: size, UTF-8, aliases', () => {
    const big = withStdin(['validate', '-f', '-', '--input-max-file-size', '1Ki'], `# ${'x'.repeat(2000)}\n`);
    expect(big.code).toBe(1);
    expect(big.stderr).toContain('<stdin>: error: has more than inputMaxFileSize (1024 bytes): not read');
    const bad = withStdin(['validate', '-f', '-'], Buffer.from('a: \xff\n', 'latin1'));
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain('<stdin>:1: error: invalid UTF-8 at byte offset 3 (byte 0xff)');
    const bomb = ['a: &a [x, x, x, x, x, x, x, x, x, x]', ...Array.from({ length: 8 }, (_, i) => `${String.fromCharCode(98 + i)}: &${String.fromCharCode(98 + i)} [${Array(10).fill(`*${String.fromCharCode(97 + i)}`).join(', ')}]`)].join('\n');
    const alias = withStdin(['validate', '-f', '-'], bomb);
    expect(alias.code).toBe(1);
    expect(alias.stderr).toMatch(/^<stdin>:\d+:\d+ \(document 1\): error: .*alias/m);
  });

  it('naming it twice, or watching it, is a usage error', () => {
    for (const cmd of ['synth', 'validate', 'gitops', 'diff']) {
      const r = withStdin([cmd, '-f', '-', '-f', '-'], labStream());
      expect(r.code, cmd).toBe(2);
      expect(r.stderr, cmd).toBe(`error: -f - given more than once: standard input can be read only once\nsee 'crownlabs ${cmd} --help'\n`);
    }
    const w = withStdin(['gitops', '-f', '-', '--watch'], labStream());
    expect(w.code).toBe(2);
    expect(w.stderr).toBe("error: --watch cannot watch standard input (-f -)\nsee 'crownlabs gitops --help'\n");
  });
});
