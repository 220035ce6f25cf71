// The instance constructs used on their own in cdk8s' test chart (Testing.chart()), each given an
// environment plan from the model (planInstance) rather than through InstanceChart: what the
// optional props change. instance.test.ts covers the same objects through compose.
import { Testing } from 'cdk8s';
import { describe, expect, it } from 'vitest';
import { ContainerEnvironment } from '../../../constructs/instance/container-environment.ts';
import { Exposition } from '../../../constructs/instance/exposition.ts';
import { VirtualMachineEnvironment } from '../../../constructs/instance/virtual-machine.ts';
import { planInstance, type EnvironmentPlan } from '../../../src/model/instance-plan.ts';
import { inventoryFrom, lab, testConfig } from '../../support/lab.ts';
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Any = any;

function environment(env: Record<string, unknown>, instance: Record<string, unknown> = {}): EnvironmentPlan {
  const inventory = inventoryFrom(lab({ env, instance }));
  const result = planInstance([...inventory.instances.values()][0], inventory, testConfig());
  if (!result.plan) throw new Error(result.problems.map((p) => p.message).join('; '));
  return result.plan.environments[0];
}
function synth(build: (chart: ReturnType<typeof Testing.chart>) => void): Any[] {
  const chart = Testing.chart();
  build(chart);
  return Testing.synth(chart);
}
const labels = { l: '1' };
const selectorLabels = { s: '1' };
const config = testConfig();

describe('Exposition on its own', () => {
  const gui = environment({ environmentType: 'VirtualMachine', guiEnabled: true });
  it('left to its defaults: the Ingress routes to the environment\'s own Service, port gui, with only its own annotations', () => {
    const objects = synth((c) => new Exposition(c, 'e', { environment: gui, labels, selectorLabels }));
    expect(objects.map((o) => o.kind)).toEqual(['Service', 'Ingress']);
    const ingress = objects[1];
    expect(ingress.spec.rules[0].http.paths[0].backend).toEqual({ service: { name: gui.name, port: { name: 'gui' } } });
    expect(ingress.metadata.annotations).toEqual({ 'nginx.ingress.kubernetes.io/proxy-read-timeout': '3600', 'nginx.ingress.kubernetes.io/proxy-send-timeout': '3600' });
    expect(objects[0].spec.selector).toEqual(selectorLabels);
  });
  it('authAnnotations join the Ingress\'s, backendOverride replaces its backend', () => {
    const objects = synth((c) =>
      new Exposition(c, 'e', { environment: gui, labels, selectorLabels, authAnnotations: { 'nginx.ingress.kubernetes.io/auth-url': 'https://auth.example' }, backendOverride: { serviceName: 'proxy', portName: 'http', port: 4180 } }),
    );
    expect(objects[1].metadata.annotations['nginx.ingress.kubernetes.io/auth-url']).toBe('https://auth.example');
    expect(objects[1].spec.rules[0].http.paths[0].backend).toEqual({ service: { name: 'proxy', port: { name: 'http' } } });
  });
  it('without a GUI: the Service alone', () => {
    const objects = synth((c) => new Exposition(c, 'e', { environment: environment({ environmentType: 'VirtualMachine', guiEnabled: false }), labels, selectorLabels }));
    expect(objects.map((o) => o.kind)).toEqual(['Service']);
  });
});

describe('VirtualMachineEnvironment on its own', () => {
  const vm = environment({ environmentType: 'VirtualMachine', mode: 'Standard' });
  const volumes = (objects: Any[]) => objects[0].spec.volumes.map((v: Any) => v.name);
  it('with cloudInitSecretName: a cloudInitNoCloud disk from that Secret', () => {
    const objects = synth((c) => new VirtualMachineEnvironment(c, 'vm', { environment: vm, running: true, labels, selectorLabels, cloudInitSecretName: 'ci-secret' }));
    expect(objects[0].kind).toBe('VirtualMachineInstance');
    expect(objects[0].spec.volumes.find((v: Any) => v.name === 'cloud-init')).toEqual({ name: 'cloud-init', cloudInitNoCloud: { secretRef: { name: 'ci-secret' } } });
  });
  it('left out: no cloud-init disk', () => {
    const objects = synth((c) => new VirtualMachineEnvironment(c, 'vm', { environment: vm, running: true, labels, selectorLabels }));
    expect(volumes(objects)).not.toContain('cloud-init');
  });
});

describe('ContainerEnvironment on its own', () => {
  const initNames = (objects: Any[]) => (objects.find((o) => o.kind === 'Deployment').spec.template.spec.initContainers ?? []).map((c: Any) => c.name);
  const source = (objects: Any[]) => objects.find((o) => o.kind === 'Deployment').spec.template.spec.initContainers[0].env.find((e: Any) => e.name === 'SOURCE_ARCHIVE').value;
  it('without contentOrigin and without a Template archive: no content-downloader', () => {
    const objects = synth((c) => new ContainerEnvironment(c, 'ce', { environment: environment({ environmentType: 'Container' }), labels, selectorLabels, config }));
    expect(initNames(objects)).toEqual([]);
  });
  it('without contentOrigin: the Template\'s sourceArchiveURL is downloaded; contentOrigin wins over it', () => {
    const env = environment({ environmentType: 'Container', containerStartupOptions: { sourceArchiveURL: 'https://archive.example/t.tar' } });
    const byTemplate = synth((c) => new ContainerEnvironment(c, 'ce', { environment: env, labels, selectorLabels, config }));
    expect(initNames(byTemplate)).toEqual(['content-downloader']);
    expect(source(byTemplate)).toBe('https://archive.example/t.tar');
    const byInstance = synth((c) => new ContainerEnvironment(c, 'ce', { environment: env, labels, selectorLabels, config, contentOrigin: 'https://archive.example/i.tar' }));
    expect(source(byInstance)).toBe('https://archive.example/i.tar');
  });
});
