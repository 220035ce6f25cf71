// #14.10: two inputs that render the same object (kind, namespace, name) are an error in every
// sink, naming both inputs; so is a set that renders an object twice.
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { Inventory } from '../../../src/inputs/inventory.ts';
import { parseInputText } from '../../../src/inputs/parse.ts';
import { formatProblem } from '../../../src/inputs/problems.ts';
import { LabSession } from '../../../src/compose/incremental.ts';
import { compose, renderAll } from '../../../src/compose/compose.ts';
import { gitopsFiles } from '../../../src/sinks/gitops.ts';
import { checkRenderedSets, checkSetObjects, objectIssues, parentSource, renderedSetProblems } from '../../../src/compose/prewrite.ts';
import { validateRenderedSets } from '../../../src/validate/validator.ts';
import { crownlabs, ROOT } from '../../support/cli.ts';
import { lab, testConfig } from '../../support/lab.ts';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Any = any;

/** The small test lab, with a second Instance `inst-one` next to `inst.one` in its own file. */
function twinLab(dir: string, secondName = 'inst-one'): { first: string; second: string } {
  const docs = lab({ env: { environmentType: 'Container', persistent: true, resources: { cpu: 2, reservedCPUPercentage: 25, memory: '2G', disk: '5Gi' } } });
  const first = join(dir, 'lab.yaml');
  writeFileSync(first, docs);
  const instance = JSON.parse(docs.split('\n---\n').at(-1)!);
  instance.metadata = { name: secondName, namespace: instance.metadata.namespace };
  const second = join(dir, 'more', 'second.yaml');
  mkdirSync(join(dir, 'more'), { recursive: true });
  writeFileSync(second, `${JSON.stringify(instance)}\n`);
  return { first, second };
}

function loadDir(dir: string) {
  const { first, second } = { first: join(dir, 'lab.yaml'), second: join(dir, 'more', 'second.yaml') };
  const objects = [first, second].flatMap((f) => parseInputText(readFileSync(f, 'utf8'), f).objects);
  return Inventory.fromObjects(objects).inventory;
}

describe('objects rendered by two inputs', () => {
  it('Instances my.inst and my-inst of one namespace: one error naming both inputs (file and document) and the objects', () => {
    const dir = mkdtempSync(join(tmpdir(), 'twins-'));
    const { first, second } = twinLab(dir);
    const inventory = loadDir(dir);
    const sets = renderAll(compose(inventory, testConfig()));
    const problems = checkRenderedSets(sets, (p) => parentSource(inventory, p));
    expect(problems).toHaveLength(1);
    const [p] = problems;
    // inst-one sorts before inst.one: the later one is reported, the earlier one named.
    expect(p).toMatchObject({ severity: 'error', file: first, document: 5, kind: 'Instance', name: 'tenant-john-doe/inst.one' });
    expect(p.message).toContain(`Instance/tenant-john-doe/inst-one (${second}, document 1) renders too`);
    expect(p.message).toMatch(/Deployment tenant-john-doe\/inst-one/);
    expect(p.message).toMatch(/PersistentVolumeClaim tenant-john-doe\/inst-one/);
    // validate reports it too.
    expect(validateRenderedSets(sets, { sourceOf: (q) => parentSource(inventory, q) }).problems.map(formatProblem)).toContain(formatProblem(p));
  });

  it('Tenants a.b and a-b would share a namespace and a MyDrive PVC', () => {
    const tenant = (name: string) => ({
      apiVersion: 'crownlabs.polito.it/v1alpha2',
      kind: 'Tenant',
      metadata: { name, labels: { 'crownlabs.polito.it/operator-selector': 'production' } },
      spec: { firstName: 'A', lastName: 'B', email: `${name}@example.com`, workspaces: [] },
    });
    const parsed = parseInputText([tenant('ann.lee'), tenant('ann-lee')].map((t) => JSON.stringify(t)).join('\n---\n'), 'tenants.yaml');
    const { inventory } = Inventory.fromObjects(parsed.objects);
    const problems = checkRenderedSets(renderAll(compose(inventory, testConfig())), (p) => parentSource(inventory, p));
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatchObject({ file: 'tenants.yaml', document: 1, kind: 'Tenant', name: 'ann.lee' });
    expect(problems[0].message).toContain('Tenant/ann-lee (tenants.yaml, document 2) renders too');
    expect(problems[0].message).toMatch(/^renders 9 objects that .*: Namespace tenant-ann-lee, .*… \(4 more\)/);
  });

  it('an Instance named mydrive-info cannot replace its tenant\'s MyDrive Secret with its cloud-init', () => {
    const parsed = parseInputText(lab({ env: { environmentType: 'VirtualMachine' }, instanceMeta: { name: 'mydrive-info' } }), 'lab.yaml');
    const { inventory } = Inventory.fromObjects(parsed.objects);
    const problems = checkRenderedSets(renderAll(compose(inventory, testConfig())), (p) => parentSource(inventory, p));
    expect(problems.map(formatProblem)).toEqual([
      'lab.yaml (document 5, Instance tenant-john-doe/mydrive-info): error: renders an object that Tenant/john.doe (lab.yaml, document 2) renders too: Secret tenant-john-doe/mydrive-info. ' +
        "Tenant objects take precedence over Instance objects: this Instance's set is refused; rename it",
    ]);
  });

  it('a collision between a Tenant and an Instance refuses the Instance whatever order the sets come in', () => {
    const parsed = parseInputText(lab({ env: { environmentType: 'VirtualMachine' }, instanceMeta: { name: 'mydrive-info' } }), 'lab.yaml');
    const { inventory } = Inventory.fromObjects(parsed.objects);
    const sets = renderAll(compose(inventory, testConfig()));
    const kinds = (order: typeof sets) => renderedSetProblems(order.map((s) => ({ unit: s.unit, check: checkSetObjects(s.objects) }))).map((p) => `${p.kind} ${p.name}`);
    expect(kinds(sets)).toEqual(['Instance tenant-john-doe/mydrive-info']);
    expect(kinds([...sets].reverse())).toEqual(['Instance tenant-john-doe/mydrive-info']);
  });

  it('between sets of one rank the later one is refused, in either order', () => {
    const tenant = (name: string) => ({
      apiVersion: 'crownlabs.polito.it/v1alpha2',
      kind: 'Tenant',
      metadata: { name, labels: { 'crownlabs.polito.it/operator-selector': 'production' } },
      spec: { firstName: 'A', lastName: 'B', email: `${name}@example.com`, workspaces: [] },
    });
    const parsed = parseInputText([tenant('ann.lee'), tenant('ann-lee')].map((t) => JSON.stringify(t)).join('\n---\n'), 'tenants.yaml');
    const sets = renderAll(compose(Inventory.fromObjects(parsed.objects).inventory, testConfig()));
    const names = (order: typeof sets) => renderedSetProblems(order.map((s) => ({ unit: s.unit, check: checkSetObjects(s.objects) }))).map((p) => p.name);
    expect(names(sets)).toEqual(['ann.lee']);
    expect(names([...sets].reverse())).toEqual(['ann-lee']);
  });

  it('an Instance that renders one object twice (environment a and a-oauth2-proxy behind per-instance proxies)', () => {
    const parsed = parseInputText(lab({ env: [{ name: 'a', environmentType: 'Container' }, { name: 'a-oauth2-proxy', environmentType: 'Container' }] }), 'lab.yaml');
    const { inventory } = Inventory.fromObjects(parsed.objects);
    const problems = checkRenderedSets(renderAll(compose(inventory, testConfig({ authMode: 'per-instance' }))), (p) => parentSource(inventory, p));
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatchObject({ file: 'lab.yaml', document: 5, kind: 'Instance' });
    expect(problems[0].message).toMatch(/^renders the same object twice: .*Deployment tenant-john-doe\/inst-one-a-oauth2-proxy/);
  });

  it('no problem for the example-sized generated lab', () => {
    const parsed = parseInputText(lab({ env: { environmentType: 'VirtualMachine' } }), 'lab.yaml');
    const { inventory } = Inventory.fromObjects(parsed.objects);
    expect(checkRenderedSets(renderAll(compose(inventory, testConfig())))).toEqual([]);
  });
});

describe('every sink refuses before writing', () => {
  const dir = mkdtempSync(join(tmpdir(), 'twins-cli-'));
  // Outputs beside the inputs, never inside them (an output inside an input folder is refused).
  const outs = mkdtempSync(join(tmpdir(), 'twins-out-'));
  const { first, second } = twinLab(dir);
  const config = join(mkdtempSync(join(tmpdir(), 'twins-config-')), 'config.yaml');
  writeFileSync(config, 'mydriveNfsServerName: nfs.example\ngitopsRepoUrl: https://git.example.org/lab.git\n');
  const expectRefused = (r: { code: number | null; stderr: string }) => {
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`${relative(ROOT, first)} (document 5, Instance tenant-john-doe/inst.one): error: renders 4 objects`);
    expect(r.stderr).toContain(`Instance/tenant-john-doe/inst-one (${relative(ROOT, second)}, document 1) renders too`);
  };
  it('synth: files and --stdout', () => {
    const out = join(outs, 'dist');
    expectRefused(crownlabs(['synth', '-f', dir, '--config', config, '-o', out]));
    expect(() => readFileSync(join(out, 'tenants', 'john.doe.yaml'))).toThrow();
    const s = crownlabs(['synth', '-f', dir, '--config', config, '--stdout']);
    expectRefused(s);
    expect(s.stdout).toBe('');
  });
  it('synth and gitops staging their files on a writer thread while they render (a first write): nothing in the folder or beside it', () => {
    const out = join(outs, 'staged');
    expectRefused(crownlabs(['synth', '-f', dir, '--config', config, '-o', out], ROOT, { CROWNLABS_PARALLEL_WRITES: '1' }));
    expectRefused(crownlabs(['gitops', '-f', dir, '--config', config, '-o', `${out}-gitops`], ROOT, { CROWNLABS_PARALLEL_WRITES: '1' }));
    expect(readdirSync(outs).filter((n) => n.includes('staged'))).toEqual([]);
  });
  it('gitops and validate', () => {
    const out = join(outs, 'gitops');
    expectRefused(crownlabs(['gitops', '-f', dir, '--config', config, '-o', out]));
    expect(() => readFileSync(join(out, 'SECRETS.md'))).toThrow();
    expectRefused(crownlabs(['validate', '-f', dir, '--config', config]));
  });
  it('cdk8s synth (main.ts)', () => {
    const out = join(outs, 'cdk8s-dist');
    const r = spawnSync(process.execPath, ['--import', 'tsx', join(ROOT, 'main.ts')], {
      cwd: ROOT,
      encoding: 'utf8',
      env: { ...process.env, CROWNLABS_INPUT: dir, CROWNLABS_CONFIG: config, CDK8S_OUTDIR: out },
    });
    expect(r.status).toBe(1);
    expect(r.stderr).toContain(`Instance/tenant-john-doe/inst-one (${relative(ROOT, second)}, document 1) renders too`);
    expect(() => readFileSync(join(out, 'platform.yaml'))).toThrow();
  });
  it.each([false, true])('gitops --watch (LabSession): an edit that makes a collision keeps the last good sets (objects released: %s)', (release) => {
    const d = mkdtempSync(join(tmpdir(), 'twins-watch-'));
    const { second: file } = twinLab(d, 'other');
    const session = new LabSession([d], testConfig(), d);
    expect(session.load().applied).toBe(true);
    // gitops --watch keeps the sets' files and releases their objects: the checks must not need them.
    if (release) session.releaseObjects();
    const before = session.renderedSets();
    writeFileSync(file, readFileSync(file, 'utf8').replace('"other"', '"inst-one"'));
    const update = session.update([file]);
    expect(update.applied).toBe(false);
    expect(update.problems.map((p) => p.message).join('\n')).toContain('renders too');
    expect(session.renderedSets()).toEqual(before);
  });
});

describe('the gitops tree keeps every object', () => {
  it('chunks of a namespace never share a name or folder with another namespace (tenant-x.1, not tenant-x-1)', () => {
    const docs: Any[] = [];
    const tenant = (name: string) => ({
      apiVersion: 'crownlabs.polito.it/v1alpha2',
      kind: 'Tenant',
      metadata: { name, labels: { 'crownlabs.polito.it/operator-selector': 'production' } },
      spec: { firstName: 'A', lastName: 'B', email: `${name}@example.com`, workspaces: [{ name: 'tea', role: 'user' }] },
    });
    const base = lab({ env: { environmentType: 'Container' } }).split('\n---\n').map((d) => JSON.parse(d));
    const [workspace, , , template, instance] = base;
    docs.push(workspace, template, tenant('x'), tenant('x-1'));
    for (const [ns, tn, n] of [['tenant-x', 'x', 4], ['tenant-x-1', 'x-1', 1]] as const) {
      for (let i = 0; i < n; i++) {
        docs.push({ ...instance, metadata: { name: `i${i}`, namespace: ns }, spec: { ...instance.spec, 'tenant.crownlabs.polito.it/TenantRef': { name: tn } } });
      }
    }
    const { inventory } = Inventory.fromObjects(parseInputText(docs.map((d) => JSON.stringify(d)).join('\n---\n'), 'lab.yaml').objects);
    const config = testConfig({ gitopsMaxObjectsPerApp: 4 });
    const composition = compose(inventory, { ...config, authMode: 'shared' });
    expect(composition.problems.filter((p) => p.severity === 'error').map(formatProblem)).toEqual([]);
    const sets = renderAll(composition);
    const files = gitopsFiles(sets, config);
    const apps = [...files.keys()].filter((f) => f.startsWith('apps/Application_')).map((f) => parse(files.get(f)!) as Any);
    const names = apps.map((a) => a.metadata.name);
    expect(new Set(names).size).toBe(names.length);
    expect(new Set(apps.map((a) => a.spec.source.path)).size).toBe(apps.length);
    // Every rendered object but the Secrets is listed in exactly one Application's kustomization.
    const listed: string[] = [];
    for (const [path, content] of files) {
      if (/^instances\/[^/]+\/kustomization\.yaml$/.test(path)) listed.push(...(parse(content) as Any).resources.map((r: string) => `${path.split('/')[1]}|${r}`));
    }
    const instanceObjects = sets.filter((s) => s.unit.parent.kind === 'Instance').flatMap((s) => s.objects).filter((o) => o.kind !== 'Secret');
    expect(listed).toHaveLength(instanceObjects.length);
    expect(names).toContain('crownlabs-instances-tenant-x-1');
    expect(names).toContain('crownlabs-instances-tenant-x.1');
  });
});

describe('what the API server would refuse is refused before writing (#14.15)', () => {
  const LONG = `inst-${'x'.repeat(60)}`; // 65 characters: a Service name and label values are at most 63
  const longLab = () => lab({ env: { environmentType: 'Container' }, instanceMeta: { name: LONG } });

  it('a long Instance name: every invalid name and label value, with its field and the input', () => {
    const parsed = parseInputText(longLab(), 'lab.yaml');
    const { inventory } = Inventory.fromObjects(parsed.objects);
    const problems = checkRenderedSets(renderAll(compose(inventory, testConfig())), (p) => parentSource(inventory, p));
    const lines = problems.map(formatProblem);
    expect(lines).toContain(
      `lab.yaml (document 5, Service tenant-john-doe/${LONG}): error: metadata.name: invalid name "${LONG}": must be a lowercase RFC 1123 label: at most 63 lower case alphanumeric characters or '-', starting and ending with an alphanumeric character (rendered for Instance/tenant-john-doe/${LONG})`,
    );
    expect(lines.some((l) => l.includes(`Deployment tenant-john-doe/${LONG}): error: spec.template.metadata.labels["crownlabs.polito.it/instance"]: invalid label value`))).toBe(true);
    expect(lines.some((l) => l.includes(`Deployment tenant-john-doe/${LONG}): error: spec.selector.matchLabels["crownlabs.polito.it/instance"]`))).toBe(true);
    expect(problems.every((p) => p.severity === 'error' && p.file === 'lab.yaml' && p.document === 5)).toBe(true);
  });

  it('the same objects pass `crownlabs validate`\'s metadata rules exactly when they pass these', () => {
    const parsed = parseInputText(longLab(), 'lab.yaml');
    const { inventory } = Inventory.fromObjects(parsed.objects);
    const sets = renderAll(compose(inventory, testConfig()));
    const cheap = new Set(checkRenderedSets(sets).map((p) => `${p.kind} ${p.name} ${p.field}`));
    const full = validateRenderedSets(sets).problems.filter((p) => /^metadata\.(name|namespace|labels)/.test(p.field ?? ''));
    expect(full.length).toBeGreaterThan(0);
    for (const p of full) expect(cheap, `${p.kind} ${p.name} ${p.field}`).toContain(`${p.kind} ${p.name} ${p.field}`);
  });

  it('render workers report the same issues', async () => {
    const { renderParallel } = await import('../../../src/sinks/parallel/render-pool.ts');
    const { checkSetObjects } = await import('../../../src/compose/prewrite.ts');
    const parsed = parseInputText(longLab(), 'lab.yaml');
    const { inventory } = Inventory.fromObjects(parsed.objects);
    const composition = compose(inventory, testConfig());
    const out = await renderParallel(composition.units, inventory.allObjects(), testConfig(), 'synth', undefined, { threads: 1, mainThreadRenders: false });
    const sets = renderAll(composition);
    out.forEach((o, i) => expect(o.check).toEqual(checkSetObjects(sets[i].objects)));
    expect(out.some((o) => o.check.issues.length > 0)).toBe(true);
  });

  it('synth and gitops exit 1 and write nothing: a long name, a URL as host, a negative cap', () => {
    const dir = mkdtempSync(join(tmpdir(), 'long-'));
    writeFileSync(join(dir, 'lab.yaml'), longLab());
    const outs = mkdtempSync(join(tmpdir(), 'long-out-'));
    const config = join(mkdtempSync(join(tmpdir(), 'long-config-')), 'config.yaml');
    writeFileSync(config, 'mydriveNfsServerName: nfs.example\ngitopsRepoUrl: https://git.example.org/lab.git\n');
    for (const [cmd, out] of [['synth', 'dist'], ['gitops', 'gitops']] as const) {
      const r = crownlabs([cmd, '-f', dir, '--config', config, '-o', join(outs, out)]);
      expect(r.code, r.stderr).toBe(1);
      // Refused at the Instance itself (src/model/instance-names.ts), before anything is rendered.
      expect(r.stderr).toContain(`(document 5, Instance tenant-john-doe/${LONG}): error: metadata.name: an Instance name is at most 50 characters`);
      expect(r.stderr).toMatch(/errors?: nothing was written/);
      expect(() => readFileSync(join(outs, out, cmd === 'synth' ? 'tenants/john.doe.yaml' : 'SECRETS.md'))).toThrow();
    }
    const good = join(mkdtempSync(join(tmpdir(), 'good-')), 'lab.yaml');
    writeFileSync(good, lab({ env: { environmentType: 'Container' } }));
    const url = crownlabs(['synth', '-f', good, '--config', config, '--website-base-url', 'http://x/y', '-o', join(outs, 'url')]);
    expect(url.code).toBe(1);
    expect(url.stderr).toContain('flag --website-base-url: error: websiteBaseUrl: must be a bare DNS name');
    const cap = crownlabs(['gitops', '-f', good, '--config', config, '--cap-cpu', '-5', '-o', join(dir, 'cap')]);
    expect(cap.code).toBe(1);
    expect(cap.stderr).toContain('flag --cap-cpu: error: capCpu: must not be negative, not "-5"');
    expect(() => readFileSync(join(outs, 'url', 'tenants', 'john.doe.yaml'))).toThrow();
    expect(() => readFileSync(join(dir, 'cap', 'SECRETS.md'))).toThrow();
  });
});

describe('container names (from Template environment names)', () => {
  it('an empty or non-DNS container name in a pod template is refused before writing', () => {
    const deployment = {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'inst', namespace: 'tenant-a' },
      spec: { template: { spec: { containers: [{ name: 'app' }, { name: '' }], initContainers: [{ name: 'Init_1' }] } } },
    };
    expect(objectIssues(deployment as never).map((i) => i.field)).toEqual(['spec.template.spec.initContainers[0].name', 'spec.template.spec.containers[1].name']);
  });
  it('a PVC of zero storage and requests over limits are refused before writing, as validate does', () => {
    const pvc = { apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name: 'disk', namespace: 'tenant-a' }, spec: { resources: { requests: { storage: '0' } } } };
    expect(objectIssues(pvc as never)).toEqual([{ field: 'spec.resources.requests.storage', message: '"0": must be greater than zero' }]);
    const deployment = {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'inst', namespace: 'tenant-a' },
      spec: { template: { spec: { containers: [{ name: 'app', resources: { requests: { cpu: '2' }, limits: { cpu: '1' } } }] } } },
    };
    expect(objectIssues(deployment as never).map((i) => i.field)).toEqual(['spec.template.spec.containers[0].resources.requests.cpu']);
    const quota = { apiVersion: 'v1', kind: 'ResourceQuota', metadata: { name: 'q', namespace: 'tenant-a' }, spec: { hard: { 'limits.cpu': '-4', pods: '2' } } };
    expect(objectIssues(quota as never)).toEqual([{ field: 'spec.hard["limits.cpu"]', message: '"-4": must be greater than or equal to 0' }]);
  });
});
