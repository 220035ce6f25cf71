// Templates and Instances at API level e62be9e (docs/behaviour.md §16.3): inputs → plan → objects.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { load as loadYaml } from 'js-yaml';
import type { ApiLevel } from '../../../src/inputs/api-level.ts';
import { Inventory } from '../../../src/inputs/inventory.ts';
import { parseInputText } from '../../../src/inputs/parse.ts';
import type { Instance, Template } from '../../../src/inputs/types.ts';
import { compose, renderAll, type ComposeOptions } from '../../../src/compose/compose.ts';
import { contentDestination, contentOrigin, statusCheckUrl } from '../../../src/model/customization-urls.ts';
import { instanceOwnLabels, nodeSelectorOf, observedMacAddress } from '../../../src/model/instance-plan.ts';
import { SNAPSHOT_PHASES } from '../../../src/model/snapshot.ts';
import { parseLifespan, templateLifespan } from '../../../src/model/automation.ts';
import { crdsDir } from '../../../src/paths.ts';
import { lab, render, testConfig } from '../../support/lab.ts';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Any = any;

function parsedAt(text: string, level: ApiLevel) {
  const parsed = parseInputText(text, 'test.yaml', level);
  const { inventory, problems } = Inventory.fromObjects(parsed.objects, undefined, level);
  return { inventory, problems: [...parsed.problems, ...problems] };
}

function renderAt(text: string, level: ApiLevel, options: ComposeOptions = {}) {
  const r = render(text, testConfig({ apiLevel: level }), { compose: options, schemas: true });
  return { ...r, objects: r.objects as Any[], get: (kind: string, name: string) => r.get(kind, name) as Any };
}

const N = 'inst-one';
/** The children of the Instance's one environment (`env0`): `N` at 2e8aeb9, `N-env0` at e62be9e (§16.3). */
const child = (level: ApiLevel) => (level === 'e62be9e' ? `${N}-env0` : N);

describe('§16.3 upstream samples of e62be9e render', () => {
  const dir = join(import.meta.dirname, '../../fixtures/upstream-e62be9e');
  // Their Workspaces give quota.cpu as a string, which e62be9e's CRD refuses (another change reads
  // it); here only, the string becomes the number so the Templates and Instances can be checked.
  const text = readdirSync(dir)
    .filter((f) => /\.ya?ml$/.test(f))
    .sort()
    .map((f) => readFileSync(join(dir, f), 'utf8').replace(/cpu: "(\d+)"/g, 'cpu: $1'))
    .join('\n---\n');
  const label = { key: 'crownlabs.polito.it/operator-selector', value: 'local' };
  const config = testConfig({ apiLevel: 'e62be9e', targetLabel: label, namespaceWhitelist: { [label.key]: label.value } });

  it('with no error, each sample Instance rendering its workload', () => {
    const parsed = parseInputText(text, 'samples.yaml', 'e62be9e');
    const { inventory, problems } = Inventory.fromObjects(parsed.objects, undefined, 'e62be9e');
    const composition = compose(inventory, config);
    expect([...parsed.problems, ...problems, ...composition.problems].filter((p) => p.severity === 'error')).toEqual([]);
    const objects = renderAll(composition).flatMap((s) => s.objects);
    const workloads = objects.filter((o) => ['VirtualMachineInstance', 'VirtualMachine', 'Deployment'].includes(o.kind)).map((o) => `${o.kind}/${o.metadata.name}`);
    expect(workloads.sort()).toEqual([
      'Deployment/instance-jupyterlab-jupyter-env',
      'Deployment/instance-vscode-c-cpp-persistent-vscode-env',
      'Deployment/instance-vscode-python-proxyenabled-vscode-env',
      'VirtualMachineInstance/green-tea-6831-green-tea-1',
    ]);
  });
});

describe('§16.3 several environments: the e62be9e schema keys them by name, at most 10', () => {
  const env = (name: string) => ({ name, environmentType: 'Container' });
  it('two environments render one Deployment each, named N-<env>', () => {
    const r = renderAt(lab({ env: [env('first'), env('second')] }), 'e62be9e');
    expect(r.objects.filter((o) => o.kind === 'Deployment').map((o) => o.metadata.name)).toEqual([`${N}-first`, `${N}-second`]);
  });
  it('eleven environments, or a name outside the pattern, are refused at input', () => {
    const eleven = Array.from({ length: 11 }, (_, i) => env(`env-${i}`));
    expect(parsedAt(lab({ env: eleven }), 'e62be9e').problems.some((p) => p.severity === 'error' && /environmentList/.test(p.field ?? p.message))).toBe(true);
    expect(parsedAt(lab({ env: [env('Bad_Name')] }), 'e62be9e').problems.some((p) => p.severity === 'error')).toBe(true);
  });
});

describe("§16.3 children's names, labels and routes as upstream's e62be9e operators render them", () => {
  const BASE = '/instance/00000000-0000-4000-8000-000000000001/env0';
  const ingressOf = (r: ReturnType<typeof renderAt>) => r.objects.find((o) => o.kind === 'Ingress');
  const ENV_LABEL = 'crownlabs.polito.it/environment';
  it('one environment: every child is N-<env>, labelled and selected by the environment', () => {
    const r = renderAt(lab({ env: { environmentType: 'Container', guiEnabled: true } }), 'e62be9e');
    const dep = r.get('Deployment', child('e62be9e'));
    const svc = r.get('Service', child('e62be9e'));
    for (const o of [dep, svc, dep.spec.template]) expect(o.metadata.labels[ENV_LABEL]).toBe('env0');
    expect(dep.spec.selector.matchLabels[ENV_LABEL]).toBe('env0');
    expect(svc.spec.selector[ENV_LABEL]).toBe('env0');
    const children = r.objects.filter((o) => ['Deployment', 'Service', 'Ingress'].includes(o.kind));
    expect(children.map((o) => [o.metadata.name, o.metadata.labels[ENV_LABEL]])).toEqual(children.map(() => [child('e62be9e'), 'env0']));
  });
  it.each([
    ['VirtualMachine', { guiEnabled: true }, `${BASE}/(.*)`, '/$1'],
    ['Container', { guiEnabled: true }, BASE, undefined],
    ['Container', { guiEnabled: false }, BASE, undefined],
    ['Container', { rewriteURL: true }, `${BASE}(/|$)(.*)`, undefined],
    ['Standalone', { rewriteURL: true }, `${BASE}(/|$)(.*)`, '/$2'],
    ['Standalone', { guiEnabled: false }, BASE, undefined],
  ] as const)('%s %j: an Ingress named as its Service, its path and rewrite', (environmentType, env, path, rewrite) => {
    const ing = ingressOf(renderAt(lab({ env: { environmentType, ...env } }), 'e62be9e'))!;
    expect(ing.metadata.name).toBe(child('e62be9e'));
    expect(ing.spec.rules[0].http.paths[0].path).toBe(path);
    expect(ing.metadata.annotations['nginx.ingress.kubernetes.io/rewrite-target']).toBe(rewrite);
  });
  it('a VM without GUI has no Ingress', () => {
    expect(ingressOf(renderAt(lab({ env: { environmentType: 'VirtualMachine', guiEnabled: false } }), 'e62be9e'))).toBeUndefined();
  });
  it('the annotation children-level: 2e8aeb9 renders the children as 2e8aeb9 names them, at e62be9e', () => {
    const text = lab({ env: { environmentType: 'Container', guiEnabled: true } });
    const at2e8 = renderAt(text, '2e8aeb9');
    const kept = renderAt(lab({ env: { environmentType: 'Container', guiEnabled: true }, instanceMeta: { annotations: { 'composer.crownlabs.polito.it/children-level': '2e8aeb9' } } }), 'e62be9e');
    const ofInstance = (o: { metadata: { labels?: Record<string, string> } }) => o.metadata.labels?.['composer.crownlabs.polito.it/parent-kind'] === 'Instance';
    const names = (r: ReturnType<typeof renderAt>) =>
      r.objects
        .filter((o) => ofInstance(o) && ['Deployment', 'Service', 'Ingress', 'PersistentVolumeClaim'].includes(o.kind))
        .map((o) => `${o.kind}/${o.metadata.name}`)
        .sort();
    expect(names(kept)).toEqual(names(at2e8));
    expect(kept.get('Deployment', N).spec).toEqual(at2e8.get('Deployment', N).spec);
    expect(kept.get('Service', N).spec).toEqual(at2e8.get('Service', N).spec);
  });
  it('an annotation naming no level is an error at the annotation, and nothing of the Instance renders', () => {
    const r = renderAt(lab({ env: { environmentType: 'Container' }, instanceMeta: { annotations: { 'composer.crownlabs.polito.it/children-level': '2024' } } }), 'e62be9e');
    expect(r.problems).toContainEqual(expect.objectContaining({ severity: 'error', field: 'metadata.annotations.composer.crownlabs.polito.it/children-level' }));
    expect(r.objects.some((o) => o.kind === 'Deployment')).toBe(false);
  });
});

describe('§16.3 Services are headless, with the ports of e62be9e', () => {
  it.each([
    ['VirtualMachine', true, ['ssh', 'gui']],
    ['VirtualMachine', false, ['ssh']],
    ['Container', true, ['gui']],
    ['Standalone', false, ['metrics']],
  ] as const)('%s, GUI %s: ports %j, clusterIP None', (environmentType, guiEnabled, ports) => {
    const svc = renderAt(lab({ env: { environmentType, guiEnabled } }), 'e62be9e').get('Service', child('e62be9e'));
    expect(svc.spec.clusterIP).toBe('None');
    expect(svc.spec.ports.map((p: Any) => p.name)).toEqual(ports);
  });
  it('2e8aeb9 Services keep their cluster IP and ports', () => {
    const svc = renderAt(lab({ env: { environmentType: 'Container', guiEnabled: true } }), '2e8aeb9').get('Service', N);
    expect(svc.spec.clusterIP).toBeUndefined();
    expect(svc.spec.ports.map((p: Any) => p.name)).toEqual(['gui', 'mydrive', 'metrics']);
  });
});

describe('§16.3 customization URLs: one accessor for either shape', () => {
  const inst = (spec: Partial<Instance['spec']>) => ({ spec }) as Instance;
  it.each([
    ['2e8aeb9 customizationUrls', { customizationUrls: { statusCheck: 's', contentOrigin: 'o', contentDestination: 'd' } }, ['s', 'o', 'd', 'o']],
    ['e62be9e statusCheckUrl / contentUrls', { statusCheckUrl: 's', contentUrls: { env0: { origin: 'o', destination: 'd' } } }, ['s', 'o', 'd', undefined]],
    ['neither', {}, [undefined, undefined, undefined, undefined]],
  ])('%s', (_, spec, [check, origin, destination, otherOrigin]) => {
    const i = inst(spec as Partial<Instance['spec']>);
    expect([statusCheckUrl(i), contentOrigin(i, 'env0'), contentDestination(i, 'env0'), contentOrigin(i, 'other')]).toEqual([check, origin, destination, otherOrigin]);
  });
  it("an environment's contentUrls origin is the content-downloader's SOURCE_ARCHIVE", () => {
    const r = renderAt(lab({ env: { environmentType: 'Container' }, instance: { contentUrls: { env0: { origin: 'https://content.example/a.zip' } } } }), 'e62be9e');
    const init = r.get('Deployment', child('e62be9e')).spec.template.spec.initContainers[0];
    expect(init.env).toContainEqual({ name: 'SOURCE_ARCHIVE', value: 'https://content.example/a.zip' });
  });
  it('statusCheckUrl marks the Instance for the termination step', () => {
    const { inventory } = parsedAt(lab({ env: {}, instance: { statusCheckUrl: 'https://exam.example/status' } }), 'e62be9e');
    const instance = [...inventory.instances.values()][0];
    expect(instanceOwnLabels(instance, inventory.templateOf(instance)!, 'e62be9e')['crownlabs.polito.it/watch-for-instance-termination']).toBe('true');
  });
});

describe('§16.3 node selection (Template nodeSelector, else the Instance’s)', () => {
  const tpl = (nodeSelector?: Record<string, string>) => ({ spec: { nodeSelector } }) as Template;
  const inst = (nodeSelector?: Record<string, string>) => ({ spec: { nodeSelector } }) as Instance;
  it.each([
    ['Template without nodeSelector: none, whatever the Instance asks', undefined, { gpu: 'yes' }, undefined],
    ['Template {}: the Instance’s', {}, { gpu: 'yes' }, { gpu: 'yes' }],
    ['Template {} and Instance none: none', {}, undefined, undefined],
    ['Template labels: those, not the Instance’s', { zone: 'a' }, { gpu: 'yes' }, { zone: 'a' }],
  ])('%s', (_, template, instance, expected) => {
    expect(nodeSelectorOf(inst(instance), tpl(template))).toEqual(expected);
  });

  const withSelector = (type: string, persistent = false) => {
    const text = lab({ env: { environmentType: type, persistent, ...(persistent ? { resources: { cpu: 2, reservedCPUPercentage: 25, memory: '2G', disk: '10G' } } : {}) }, instance: { nodeSelector: { gpu: 'yes' } } });
    // The Template's nodeSelector is present and empty: the Instance's labels apply.
    return text.replace('"environmentList"', '"nodeSelector":{},"environmentList"');
  };
  it('reaches the VMI, the VM template and the Pod template', () => {
    expect(renderAt(withSelector('VirtualMachine'), 'e62be9e').get('VirtualMachineInstance', child('e62be9e')).spec.nodeSelector).toEqual({ gpu: 'yes' });
    expect(renderAt(withSelector('VirtualMachine', true), 'e62be9e').get('VirtualMachine', child('e62be9e')).spec.template.spec.nodeSelector).toEqual({ gpu: 'yes' });
    expect(renderAt(withSelector('Standalone'), 'e62be9e').get('Deployment', child('e62be9e')).spec.template.spec.nodeSelector).toEqual({ gpu: 'yes' });
    expect(renderAt(lab({ env: { environmentType: 'Standalone' } }), 'e62be9e').get('Deployment', child('e62be9e')).spec.template.spec.nodeSelector).toBeUndefined();
  });
  it('the Instance carries has-node-selector at e62be9e only', () => {
    for (const [level, expected] of [['e62be9e', 'true'], ['2e8aeb9', undefined]] as const) {
      const { inventory } = parsedAt(level === 'e62be9e' ? withSelector('Container') : lab({ env: { environmentType: 'Container' } }), level);
      const instance = [...inventory.instances.values()][0];
      expect(instanceOwnLabels(instance, inventory.templateOf(instance)!, level)['crownlabs.polito.it/has-node-selector']).toBe(expected);
    }
  });
});

describe('§16.3 persistent VM root disks', () => {
  const vm = (type: string, image = 'registry.example/img:1') => lab({ env: { environmentType: type, image, persistent: true, resources: { cpu: 2, reservedCPUPercentage: 25, memory: '2G', disk: '20Gi' } } });
  const disk = (text: string, level: ApiLevel) => renderAt(text, level).get('VirtualMachine', child(level)).spec.dataVolumeTemplates[0].spec;
  it.each([
    ['VirtualMachine', 'e62be9e', 'registry.example/img:1', { registry: { url: 'docker://registry.example/img:1', secretRef: 'registry-credentials-cdi' } }, 'Filesystem'],
    ['CloudVM', 'e62be9e', 'https://images.example/x.qcow2', { http: { url: 'https://images.example/x.qcow2' } }, 'Block'],
    ['LocalVM', 'e62be9e', 'golden-images/ubuntu-24', { pvc: { namespace: 'golden-images', name: 'ubuntu-24' } }, 'Block'],
    ['CloudVM', '2e8aeb9', 'https://images.example/x.qcow2', { http: { url: 'https://images.example/x.qcow2' } }, undefined],
  ] as const)('%s at %s: source and volumeMode', (type, level, image, source, volumeMode) => {
    const spec = disk(vm(type, image), level);
    expect(spec.source).toEqual(source);
    expect(spec.pvc.volumeMode).toBe(volumeMode);
  });
  it('a LocalVM image that is not <namespace>/<pvc>, or an ephemeral LocalVM, is an error and renders nothing', () => {
    const bad = renderAt(vm('LocalVM', 'ubuntu-24'), 'e62be9e');
    expect(bad.problems.map((p) => p.message).join()).toMatch(/<namespace>\/<name>/);
    expect(bad.objects.some((o) => o.kind === 'VirtualMachine')).toBe(false);
    const ephemeral = renderAt(lab({ env: { environmentType: 'LocalVM', image: 'golden-images/ubuntu-24' } }), 'e62be9e');
    expect(ephemeral.problems.map((p) => p.message).join()).toMatch(/must be persistent/);
  });
});

describe('§16.3 a persistent VM keeps its MAC address', () => {
  const text = lab({ env: { environmentType: 'VirtualMachine', persistent: true, resources: { cpu: 2, reservedCPUPercentage: 25, memory: '2G', disk: '20Gi' } } });
  const mac = (ns: string, name: string) => (ns === 'tenant-john-doe' && (name === N || name === child('e62be9e')) ? '02:00:00:aa:bb:cc' : undefined);
  const iface = (level: ApiLevel) => renderAt(text, level, { vmMacAddress: mac }).get('VirtualMachine', child(level)).spec.template.spec.domain.devices.interfaces[0];
  it('the observed MAC is written into the first interface at e62be9e, not at 2e8aeb9', () => {
    expect(iface('e62be9e')).toEqual({ name: 'default', bridge: {}, macAddress: '02:00:00:aa:bb:cc' });
    expect(iface('2e8aeb9')).toEqual({ name: 'default', bridge: {} });
  });
  it("the VM's own MAC wins over the one its VMI reports; none without either", () => {
    const vmWith = (m?: string) => ({ spec: { template: { spec: { domain: { devices: { interfaces: [{ name: 'default', ...(m ? { macAddress: m } : {}) }] } } } } } });
    const vmi = { status: { interfaces: [{ mac: '02:00:00:00:00:02' }] } };
    expect(observedMacAddress(vmWith('02:00:00:00:00:01'), vmi)).toBe('02:00:00:00:00:01');
    expect(observedMacAddress(vmWith(), vmi)).toBe('02:00:00:00:00:02');
    expect(observedMacAddress(undefined, undefined)).toBeUndefined();
  });
});

describe('§16.3 cleanup.deleteAfterCreation is the lifespan at e62be9e', () => {
  it('read from cleanup when present, deleteAfter otherwise; seconds count', () => {
    const e62 = { spec: { cleanup: { deleteAfterCreation: '90s', stopAfterInactivity: 'never', deleteAfterInactivity: 'never' } } } as Template;
    expect(templateLifespan(e62)).toEqual({ field: 'cleanup.deleteAfterCreation', value: '90s' });
    expect(parseLifespan(templateLifespan(e62).value)).toEqual({ never: false, ms: 90_000 });
    expect(templateLifespan({ spec: { deleteAfter: '2h' } } as Template)).toEqual({ field: 'deleteAfter', value: '2h' });
  });
});

describe('§16.3 InstanceSnapshot phases', () => {
  it("every phase the controller writes is in e62be9e's status enum", () => {
    const crd = loadYaml(readFileSync(join(crdsDir(), 'e62be9e', 'crownlabs.polito.it_instancesnapshots.yaml'), 'utf8')) as Any;
    const enumValues: string[] = crd.spec.versions[0].schema.openAPIV3Schema.properties.status.properties.phase.enum;
    expect(SNAPSHOT_PHASES.filter((p) => !enumValues.includes(p))).toEqual([]);
  });
});
