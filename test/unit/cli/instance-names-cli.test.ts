// The CLI refuses the Instance names the install's admission policy refuses
// (src/model/instance-names.ts), at the Instance's own field, before rendering anything.
import { appendFileSync, cpSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { LabSession } from '../../../src/compose/incremental.ts';
import { loadConfig } from '../../../src/config/config.ts';
import { CONFIG, crownlabs, LAB } from '../../support/cli.ts';

const instance = (name: string) =>
  `---\napiVersion: crownlabs.polito.it/v1alpha2\nkind: Instance\nmetadata:\n  name: ${name}\n  namespace: tenant-john-doe\nspec:\n  template.crownlabs.polito.it/TemplateRef:\n    name: green-tea\n    namespace: workspace-tea\n  tenant.crownlabs.polito.it/TenantRef:\n    name: john.doe\n`;

describe('Instance names validate, synth and gitops refuse', () => {
  it('a name over 50 characters and a reserved name, each one error at metadata.name with file, line, document and the reason', () => {
    const lab = join(mkdtempSync(join(tmpdir(), 'names-')), 'lab');
    cpSync(LAB, lab, { recursive: true });
    const long = 'a'.repeat(64);
    appendFileSync(join(lab, 'instances.yaml'), instance(long) + instance('mydrive-info'));
    const out = join(mkdtempSync(join(tmpdir(), 'names-out-')), 'tree');
    for (const args of [['validate'], ['synth', '--stdout'], ['gitops', '-o', out]]) {
      const r = crownlabs([args[0], '-f', lab, '--config', CONFIG, ...args.slice(1)]);
      expect(r.code, args[0]).toBe(1);
      const errors = r.stderr.split('\n').filter((l) => l.includes(': error: '));
      expect(errors, args[0]).toHaveLength(2);
      expect(errors[0]).toMatch(new RegExp(`instances\\.yaml:\\d+:\\d+ \\(document \\d+, Instance tenant-john-doe/${long}\\): error: metadata\\.name: an Instance name is at most 50 characters: .*limited to 63 \\(this one has 64\\)$`));
      expect(errors[1]).toMatch(/instances\.yaml:\d+:\d+ \(document \d+, Instance tenant-john-doe\/mydrive-info\): error: metadata\.name: "mydrive-info" is reserved: one of the Instance's objects would take the name of an object of the tenant's namespace \(.*mydrive-info\)$/);
      expect(r.stdout).toBe('');
    }
  });
});

describe('watch mode (gitops --watch)', () => {
  it('refuses an edit that adds a reserved Instance name and keeps the last good sets', () => {
    const lab = join(mkdtempSync(join(tmpdir(), 'names-watch-')), 'lab');
    cpSync(LAB, lab, { recursive: true });
    const session = new LabSession([lab], loadConfig({ file: CONFIG }).config, lab);
    expect(session.load().applied).toBe(true);
    const before = session.renderedSets().length;
    appendFileSync(join(lab, 'instances.yaml'), instance('mydrive.info'));
    const r = session.update([join(lab, 'instances.yaml')]);
    expect(r.applied).toBe(false);
    expect(r.problems.filter((p) => p.severity === 'error').map((p) => [p.name, p.field])).toEqual([['tenant-john-doe/mydrive.info', 'metadata.name']]);
    expect(session.renderedSets()).toHaveLength(before);
  });
});
