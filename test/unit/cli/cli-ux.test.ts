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
