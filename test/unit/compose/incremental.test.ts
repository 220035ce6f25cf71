// Watch mode (src/compose/incremental.ts): an edit re-renders exactly the sets whose recorded
// dependencies it touches, and the result is the tree a fresh full render gives.
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import jsYaml from 'js-yaml';
import { LabSession } from '../../../src/compose/incremental.ts';
import { loadConfig, type ComposerConfig } from '../../../src/config/config.ts';
import { gitopsFiles, GitopsTreeBuilder } from '../../../src/sinks/gitops.ts';
import { generateLab } from '../../support/generate-lab.ts';
import { testConfig } from '../../support/lab.ts';

const ROOT = join(import.meta.dirname, '..', '..', '..');
const CONFIG_FILE = join(ROOT, 'examples', 'crownlabs.config.yaml');
const exampleConfig = (over: Partial<ComposerConfig> = {}) => ({ ...loadConfig({ file: CONFIG_FILE }).config, ...over });
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Any = any;

describe('watch mode (LabSession)', () => {
  it('re-renders only the Instances a Template edit affects, and keeps the last good sets on an invalid edit', () => {
    const dir = mkdtempSync(join(tmpdir(), 'watch-'));
    cpSync(join(ROOT, 'examples', 'lab'), dir, { recursive: true });
    const session = new LabSession([dir], exampleConfig(), dir);
    expect(session.load().applied).toBe(true);
    const templates = join(dir, 'templates-tea.yaml');
    writeFileSync(templates, readFileSync(templates, 'utf8').replace('memory: 2G\n', 'memory: 3G\n'));
    const r = session.update([templates]);
    expect(r.applied).toBe(true);
    // Only green-tea changed: its one Instance is re-rendered, nothing else.
    expect(r.rerendered).toEqual(['instances/tenant-john-doe/green-tea-6831']);
    const vmi = session.renderedSets().find((s) => s.unit.id === 'instances/tenant-john-doe/green-tea-6831')!.objects.find((o) => o.kind === 'VirtualMachineInstance') as Any;
    expect(vmi.spec.domain.resources.requests.memory).toBe('3500M');
    writeFileSync(templates, readFileSync(templates, 'utf8').replace('environmentType: VirtualMachine', 'environmentType: Banana'));
    const bad = session.update([templates]);
    expect(bad.applied).toBe(false);
    expect(bad.problems.some((p) => p.severity === 'error' && p.field?.endsWith('environmentType'))).toBe(true);
    const still = session.renderedSets().find((s) => s.unit.id === 'instances/tenant-john-doe/green-tea-6831')!.objects.find((o) => o.kind === 'VirtualMachineInstance') as Any;
    expect(still.spec.domain.resources.requests.memory).toBe('3500M');
  });

  it('a file that no longer parses is an error, not a deletion: its sets stay (#14.2)', () => {
    const dir = mkdtempSync(join(tmpdir(), 'watch-typo-'));
    cpSync(join(ROOT, 'examples', 'lab'), dir, { recursive: true });
    // A Tenant with no Instance, in a file of its own: removing the file is valid input, so a parse
    // failure taken for a removal would silently drop the tenant's sets.
    const file = join(dir, 'tenant-ann.yaml');
    const text = (alias: string) =>
      `apiVersion: crownlabs.polito.it/v1alpha2\nkind: Tenant\nmetadata:\n  name: ann.lee\n  labels: {crownlabs.polito.it/operator-selector: production}\nspec:\n  firstName: &first Ann\n  lastName: *${alias}\n  email: ann@example.com\n  workspaces: [{name: tea, role: user}]\n`;
    writeFileSync(file, text('first'));
    const session = new LabSession([dir], exampleConfig(), dir);
    expect(session.load().applied).toBe(true);
    const ids = () => session.renderedSets().map((s) => s.unit.id);
    const before = ids();
    expect(before).toContain('tenants/ann.lee');
    writeFileSync(file, text('frist'));
    const r = session.update([file]);
    expect(r.applied).toBe(false);
    expect(r.problems).toContainEqual(expect.objectContaining({ severity: 'error', file: 'tenant-ann.yaml', message: expect.stringMatching(/frist/) }));
    expect(ids()).toEqual(before);
    // Really gone: the tenant goes with it.
    rmSync(file);
    expect(session.update([file]).applied).toBe(true);
    expect(ids()).not.toContain('tenants/ann.lee');
  });

  it('after edits that change, add and remove sets, the tree is the one a fresh full render gives (small Applications, every chunk touched; objects released as gitops --watch does)', () => {
    const dir = mkdtempSync(join(tmpdir(), 'watch-eq-'));
    const byFile = new Map<string, unknown[]>();
    for (const o of generateLab({ instances: 90, tenants: 12, workspaces: 3 })) {
      const f = o.kind === 'Instance' ? `instances-${o.metadata.namespace}.yaml` : `${o.kind.toLowerCase()}s.yaml`;
      byFile.set(f, [...(byFile.get(f) ?? []), o]);
    }
    for (const [f, objs] of byFile) writeFileSync(join(dir, f), objs.map((o) => jsYaml.dump(o)).join('---\n'));
    const config = testConfig({ gitopsMaxObjectsPerApp: 12, gitopsSecretMode: 'existing' });
    const session = new LabSession([dir], config, dir);
    const builder = new GitopsTreeBuilder(config);
    expect(session.load().applied).toBe(true);
    let tree = [...builder.files(session.renderedSets())];
    session.releaseObjects();
    expect(session.renderedSets().every((s) => s.objects.length === 0)).toBe(true);
    const fresh = () => {
      const s = new LabSession([dir], config, dir);
      expect(s.load().applied).toBe(true);
      return [...gitopsFiles(s.renderedSets(), config)];
    };
    const file = join(dir, 'instances-tenant-user-0.yaml');
    const edits: [string, (text: string) => string][] = [
      [file, (t) => t.replace('running: true', 'running: false')],
      [file, (t) => t.split('---\n').slice(1).join('---\n')], // one Instance removed
      [file, (t) => `${t}---\n${t.split('---\n')[0].replace(/name: (\S+)/, 'name: $1-new')}`], // one added
      [join(dir, 'templates.yaml'), (t) => t.replace(/memory: (\S+)/, 'memory: 3G')], // a Template: every Instance of it
    ];
    for (const [f, edit] of edits) {
      writeFileSync(f, edit(readFileSync(f, 'utf8')));
      expect(session.update([f]).applied).toBe(true);
      const next = [...builder.files(session.renderedSets())];
      session.releaseObjects();
      expect(next).not.toEqual(tree);
      expect(next).toEqual(fresh());
      tree = next;
    }
  });

  it('a Tenant that becomes a workspace manager re-renders its set, its Instances and every Instance of that workspace', () => {
    const dir = mkdtempSync(join(tmpdir(), 'watch-manager-'));
    cpSync(join(ROOT, 'examples', 'lab'), dir, { recursive: true });
    const session = new LabSession([dir], exampleConfig(), dir);
    expect(session.load().applied).toBe(true);
    const espresso = () => session.renderedSets().find((s) => s.unit.id === 'instances/tenant-john-doe/espresso-1')!.unit.plan!.allowedEmails;
    // john.doe's espresso-1 is of workspace coffee, where mario.de.luca is a user: his e-mail is not in it.
    expect(espresso()).not.toContain('mario.deluca@crownlabs.example.com');
    const tenants = join(dir, 'tenants.yaml');
    const text = readFileSync(tenants, 'utf8');
    const mario = text.indexOf('name: mario.de.luca');
    writeFileSync(tenants, text.slice(0, mario) + text.slice(mario).replace('- name: coffee\n      role: user', '- name: coffee\n      role: manager'));
    const r = session.update([tenants]);
    expect(r.applied).toBe(true);
    expect(r.rerendered.sort()).toEqual([
      'instances/tenant-john-doe/espresso-1',
      'instances/tenant-mario-de-luca/cappuccino-exam-3',
      'instances/tenant-mario-de-luca/instance-vscode-python-proxyenabled',
      'instances/tenant-mario-de-luca/mocha-1',
      'tenants/mario.de.luca',
    ]);
    // Managers' e-mails go into every Instance of the workspace (docs/behaviour.md §7.4): the old hand
    // list named only the managers of the time, so this Instance was not re-rendered.
    expect(espresso()).toContain('mario.deluca@crownlabs.example.com');
    const fresh = new LabSession([dir], exampleConfig(), dir);
    expect(fresh.load().applied).toBe(true);
    expect(session.renderedSets().map((s) => [s.unit.id, s.objects])).toEqual(fresh.renderedSets().map((s) => [s.unit.id, s.objects]));
  });
});
