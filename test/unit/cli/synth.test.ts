import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { BIN, CONFIG, crownlabs, LAB, ROOT } from '../../support/cli.ts';
import { parseAllDocuments } from 'yaml';
import { listFiles } from '../../../src/sinks/atomic-tree.ts';
import { snapshotTag } from '../../../src/model/snapshot.ts';
import { OUTPUT_MARKER, OUTPUT_MARKER_TEXT } from '../../../src/output-marker.ts';

describe('crownlabs synth on the example lab', () => {
  it('writes one file per resource set, deterministically', () => {
    const out1 = join(mkdtempSync(join(tmpdir(), 'synth-')), 'dist');
    const out2 = join(mkdtempSync(join(tmpdir(), 'synth-')), 'dist');
    const a = crownlabs(['synth', '-f', LAB, '--config', CONFIG, '-o', out1]);
    expect(a.stderr).toMatch(/12 resource sets/);
    expect(a.code).toBe(0);
    expect(crownlabs(['synth', '-f', LAB, '--config', CONFIG, '-o', out2]).code).toBe(0);
    const files = [...listFiles(out1)].sort();
    expect(files).toContain('instances/tenant-john-doe/green-tea-6831.yaml');
    expect(files).toContain('tenants/john.doe.yaml');
    expect(files).toContain('workspaces/tea.yaml');
    for (const f of files) expect(readFileSync(join(out2, f), 'utf8')).toBe(readFileSync(join(out1, f), 'utf8'));
  });

  it('--stdout prints every object as one YAML stream, equal to the files', () => {
    const out = join(mkdtempSync(join(tmpdir(), 'synth-')), 'dist');
    crownlabs(['synth', '-f', LAB, '--config', CONFIG, '-o', out]);
    const r = crownlabs(['synth', '-f', LAB, '--config', CONFIG, '--stdout']);
    expect(r.code).toBe(0);
    const docs = parseAllDocuments(r.stdout).map((d) => d.toJS());
    const fromFiles = [...listFiles(out)].filter((f) => f.endsWith('.yaml')).sort().flatMap((f) => parseAllDocuments(readFileSync(join(out, f), 'utf8')).map((d) => d.toJS()));
    expect(docs.length).toBe(fromFiles.length);
    expect(new Set(docs.map((d) => JSON.stringify(d)))).toEqual(new Set(fromFiles.map((d) => JSON.stringify(d))));
  });

  it('applies flags over the config file and environment', () => {
    const r = spawnSync(process.execPath, [BIN, 'synth', '-f', LAB, '--config', CONFIG, '--stdout', '--website-base-url', 'labs.example.org'], {
      cwd: ROOT,
      encoding: 'utf8',
      env: { ...process.env, CROWNLABS_WEBSITE_BASE_URL: 'env.example.org' },
    });
    expect(r.status).toBe(0);
    expect(r.stdout).toContain('host: labs.example.org');
    expect(r.stdout).not.toContain('env.example.org');
    const e = spawnSync(process.execPath, [BIN, 'synth', '-f', LAB, '--config', CONFIG, '--stdout'], {
      cwd: ROOT,
      encoding: 'utf8',
      env: { ...process.env, CROWNLABS_WEBSITE_BASE_URL: 'env.example.org' },
    });
    expect(e.stdout).toContain('host: env.example.org');
  });
});

describe('crownlabs synth of an InstanceSnapshot (docs/behaviour.md §9)', () => {
  it('renders its Job into snapshots/<ns>/<name>.yaml, tagged with the request time', () => {
    const dir = mkdtempSync(join(tmpdir(), 'synth-snap-'));
    const created = '2026-01-02T10:00:00Z';
    writeFileSync(
      join(dir, 'snapshot.yaml'),
      `apiVersion: crownlabs.polito.it/v1alpha2
kind: InstanceSnapshot
metadata: {name: black-tea-snap, namespace: tenant-john-doe, creationTimestamp: "${created}"}
spec:
  instanceRef: {name: black-tea-0042, namespace: tenant-john-doe}
  imageName: black-tea-image
`,
    );
    const out = join(dir, 'dist');
    const r = crownlabs(['synth', '-f', LAB, join(dir, 'snapshot.yaml'), '--config', CONFIG, '-o', out, '--vm-registry', 'registry.example', '--vm-registry-secret', 'registry-push']);
    expect(r.code).toBe(0);
    const [job] = parseAllDocuments(readFileSync(join(out, 'snapshots/tenant-john-doe/black-tea-snap.yaml'), 'utf8')).map((d) => d.toJS());
    expect(job.kind).toBe('Job');
    expect(job.spec.template.spec.containers[0].args).toContain(`--destination=registry.example/johndoe/black-tea-image:${snapshotTag(new Date(created))}`);
  });
});

describe('crownlabs synth on bad input', () => {
  it('reports every problem with file, line, document, object and field, exits 1 and writes nothing', () => {
    const dir = mkdtempSync(join(tmpdir(), 'synth-bad-'));
    const out = join(dir, 'dist');
    mkdirSync(out);
    writeFileSync(join(out, 'keep.yaml'), 'previous output\n');
    writeFileSync(join(out, OUTPUT_MARKER), OUTPUT_MARKER_TEXT); // an earlier run's output
    const r = crownlabs(['synth', '-f', join(ROOT, 'test', 'fixtures', 'bad'), '-o', out], ROOT);
    expect(r.code).toBe(1);
    const err = r.stderr;
    expect(err).toMatch(/test\/fixtures\/bad\/broken\.yaml:13:\d+ \(document 1, Template workspace-tea\/bad-template\): error: spec\.environmentList\[0\]\.environmentType: must be one of/);
    expect(err).toMatch(/broken\.yaml:15:\d+ \(document 1, Template workspace-tea\/bad-template\): error: spec\.environmentList\[0\]\.resources\.cpu: must be >= 1/);
    expect(err).toMatch(/broken\.yaml:17:\d+ .*resources\.memory: must be a Kubernetes quantity/);
    expect(err).toMatch(/\(document 2, Instance tenant-nobody\/orphan\): error: spec\["template\.crownlabs\.polito\.it\/TemplateRef"\]: Template workspace-tea\/missing-template not found/);
    expect(err).toMatch(/Instance tenant-nobody\/orphan\): error: spec\["tenant\.crownlabs\.polito\.it\/TenantRef"\]: Tenant nobody not found/);
    expect(err).toMatch(/\(document 3, Deployment not-ours\): error: kind: unknown kind "Deployment"/);
    expect(err).toMatch(/\(document 5, Workspace tea\): error: metadata\.name: duplicate Workspace "tea" \(first defined in .*broken\.yaml, document 4\)/);
    expect(err).toMatch(/malformed\.yaml:\d+:\d+ \(document 1\): error: malformed YAML/);
    expect(err).not.toMatch(/\n\s+at /); // no stack trace
    expect(readFileSync(join(out, 'keep.yaml'), 'utf8')).toBe('previous output\n');
    expect([...listFiles(out)].sort()).toEqual([OUTPUT_MARKER, 'keep.yaml']);
  });

  it('a missing input path is an input error', () => {
    const r = crownlabs(['synth', '-f', 'no/such/folder', '--stdout']);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/no\/such\/folder: error: no such file or folder/);
  });

  it('a bad config value names the key and its source', () => {
    const r = crownlabs(['synth', '-f', LAB, '--stdout', '--target-label', 'no-equals-sign']);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/flag --target-label: error: targetLabel: "no-equals-sign" must be exactly one key=value/);
    const cfg = join(mkdtempSync(join(tmpdir(), 'cfg-')), 'c.yaml');
    writeFileSync(cfg, 'websiteBaseUrl: x\nbogusKey: 1\ncapInstances: many\n');
    const f = crownlabs(['synth', '-f', LAB, '--stdout', '--config', cfg]);
    expect(f.code).toBe(1);
    expect(f.stderr).toMatch(/c\.yaml:2:1: error: bogusKey: unknown config key/);
    expect(f.stderr).toMatch(/c\.yaml:3:1: error: capInstances: must be a non-negative integer/);
  });

  it('usage errors exit 2', () => {
    expect(crownlabs(['synth']).code).toBe(2);
    expect(crownlabs(['no-such-command']).code).toBe(2);
    expect(crownlabs(['synth', '-f', LAB, '--auth-mode', 'bogus']).code).toBe(2);
  });

  it("--help exits 0 and points at 'crownlabs help config', which lists the config flags", () => {
    const r = execFileSync(process.execPath, [BIN, 'synth', '--help'], { encoding: 'utf8' });
    expect(r).not.toContain('--website-base-url <value>');
    expect(r).toContain('crownlabs help config');
    const config = execFileSync(process.execPath, [BIN, 'help', 'config'], { encoding: 'utf8' });
    expect(config).toContain('--website-base-url <value>');
    expect(config).toContain('CROWNLABS_WEBSITE_BASE_URL');
  });
});
