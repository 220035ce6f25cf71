import { cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { compose } from '../../../src/compose/compose.ts';
import { loadConfig } from '../../../src/config/config.ts';
import { loadInventory } from '../../../src/inputs/load.ts';
import { listFiles } from '../../../src/sinks/atomic-tree.ts';
import { CONFIG, crownlabs, LAB } from '../../support/cli.ts';

const tmp = (prefix: string) => mkdtempSync(join(tmpdir(), prefix));
const SKIPPED_NS = 'tenant-mario-de-luca';

/** The example lab with Tenant mario.de.luca (three Instances in his namespace) lacking the target label. */
function labWithUnlabelledTenant(extra = ''): string {
  const lab = join(tmp('skipped-'), 'lab');
  cpSync(LAB, lab, { recursive: true });
  const file = join(lab, 'tenants.yaml');
  const text = readFileSync(file, 'utf8');
  const at = text.indexOf('name: mario.de.luca');
  const label = '    crownlabs.polito.it/operator-selector: production\n';
  const cut = text.indexOf(label, at);
  expect(cut).toBeGreaterThan(at);
  writeFileSync(file, text.slice(0, cut) + '    other: label\n' + text.slice(cut + label.length));
  if (extra) writeFileSync(join(lab, 'extra.yaml'), extra);
  return lab;
}

const instancesOf = (lab: string, ns: string) =>
  readFileSync(join(lab, 'instances.yaml'), 'utf8')
    .split(/^---$/m)
    .filter((d) => d.includes(`namespace: ${ns}`))
    .map((d) => /name: (\S+)\n\s+namespace:/.exec(d)![1]);

describe("a Tenant skipped for its target label: its Instances are skipped too, in every sink", () => {
  it('synth and gitops render none of them, warn for each, and render the rest', () => {
    const lab = labWithUnlabelledTenant();
    const names = instancesOf(lab, SKIPPED_NS);
    expect(names.length).toBe(3);
    const dist = join(tmp('skipped-dist-'), 'dist');
    const s = crownlabs(['synth', '-f', lab, '--config', CONFIG, '-o', dist]);
    expect(s.code, s.stderr).toBe(0);
    const gitops = join(tmp('skipped-gitops-'), 'gitops');
    const g = crownlabs(['gitops', '-f', lab, '--config', CONFIG, '-o', gitops]);
    expect(g.code, g.stderr).toBe(0);
    for (const r of [s, g]) {
      expect(r.stderr).toMatch(/Tenant mario\.de\.luca\): warning: skipped: no target label crownlabs\.polito\.it\/operator-selector=production/);
      for (const name of names) {
        expect(r.stderr).toContain(`Instance ${SKIPPED_NS}/${name}): warning: skipped: its namespace belongs to Tenant mario.de.luca, which is skipped (no target label crownlabs.polito.it/operator-selector=production), so nothing creates the namespace`);
      }
    }
    expect(existsSync(join(dist, 'instances', SKIPPED_NS))).toBe(false);
    expect(readdirSync(join(dist, 'instances'))).toContain('tenant-john-doe');
    const files = [...listFiles(gitops)];
    expect(files.filter((f) => f.includes(SKIPPED_NS) || f.includes('mario'))).toEqual([]);
    expect(files.some((f) => f.startsWith('instances/tenant-john-doe'))).toBe(true);
  });

  it("the controller's composition of one Instance (its options: one parent, the share of a bound PV) renders nothing for it either", () => {
    const lab = labWithUnlabelledTenant();
    const { config } = loadConfig({ file: CONFIG, env: {}, flags: { namespaceWhitelist: '' } });
    const { inventory } = loadInventory([lab]);
    const share = () => ({ server: 'nfs.example', path: '/share' });
    for (const name of instancesOf(lab, SKIPPED_NS)) {
      const c = compose(inventory, config, { parent: { kind: 'Instance', namespace: SKIPPED_NS, name }, myDriveShare: share });
      expect(c.units).toEqual([]);
      expect(c.problems.map((p) => p.message)).toEqual([expect.stringMatching(/^skipped: its namespace belongs to Tenant mario\.de\.luca, which is skipped/)]);
      // Re-composed when the Tenant changes (it gains the label).
      expect(c.dependencies.get(`Instance/${SKIPPED_NS}/${name}`)).toContain(`Namespace/${SKIPPED_NS}`);
    }
  });

  it('a namespace that exists (live, or given in the input) is what counts: its Instances render when it is whitelisted', () => {
    const namespace = `apiVersion: v1\nkind: Namespace\nmetadata:\n  name: ${SKIPPED_NS}\n  labels: {crownlabs.polito.it/operator-selector: production}\n`;
    const lab = labWithUnlabelledTenant(namespace);
    const dist = join(tmp('skipped-live-'), 'dist');
    const r = crownlabs(['synth', '-f', lab, '--config', CONFIG, '-o', dist]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).not.toContain('its namespace belongs to Tenant');
    expect(readdirSync(join(dist, 'instances', SKIPPED_NS)).length).toBe(3);
  });
});

describe('the default configuration and MyDrive', () => {
  it('a lab mounting MyDrive without mydriveNfsServerName is one error, first, naming the key, its flag and variable', () => {
    const r = crownlabs(['synth', '-f', LAB, '--stdout']);
    expect(r.code).toBe(1);
    const errors = r.stderr.split('\n').filter((l) => l.includes(': error: '));
    expect(errors).toHaveLength(1);
    expect(r.stderr.split('\n')[0]).toBe(errors[0]);
    expect(errors[0]).toMatch(
      /^configuration: error: mydriveNfsServerName: is not set: set it to the NFS server of the tenants' MyDrive shares \(mydriveNfsServerName: nfs\.example\.org in the config file, --mydrive-nfs-server-name or CROWNLABS_MYDRIVE_NFS_SERVER_NAME\), or give each tenant namespace its mydrive-info Secret\. 5 Instances mount MyDrive and are not rendered: tenant-john-doe\/green-tea-6831, /,
    );
    expect(r.stdout).toBe('');
  });
});
