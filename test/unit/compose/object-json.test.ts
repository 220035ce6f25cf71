import { ApiObject, App, Chart, JsonPatch, Lazy, type IResolver, type ResolutionContext } from 'cdk8s';
import * as k8s from 'cdk8s-plus-27/lib/imports/k8s.js';
import { describe, expect, it } from 'vitest';
import { Inventory } from '../../../src/inputs/inventory.ts';
import { loadInventory } from '../../../src/inputs/load.ts';
import { compose, type RenderUnit } from '../../../src/compose/compose.ts';
import { hasOnePassJson, objectJson } from '../../../src/compose/object-json.ts';
import { loadConfig } from '../../../src/config/config.ts';
import { generateLab } from '../../support/generate-lab.ts';
import { TEST_SEED, testConfig } from '../../support/lab.ts';

function apiObjects(units: readonly RenderUnit[]): ApiObject[] {
  return units.flatMap((u) => u.build(new App()).node.findAll().filter((c): c is ApiObject => ApiObject.isApiObject(c)));
}

describe('objectJson: ApiObject.toJson in one pass', () => {
  it('gives every object of the example lab and of a generated lab, in both auth modes, the same JSON as toJson (key order included)', () => {
    const { config } = loadConfig({ file: 'examples/crownlabs.config.yaml' });
    const example = loadInventory(['examples/lab']).inventory;
    const generated = Inventory.fromObjects(generateLab({ instances: 40, tenants: 8, workspaces: 3 }).map((object) => ({ object, source: { file: 'g', document: 0 } }))).inventory;
    const kinds = new Set<string>();
    for (const authMode of ['shared', 'per-instance'] as const) {
      for (const [inventory, cfg] of [[example, { ...config, authMode, cookieSecretSeed: TEST_SEED }], [generated, testConfig({ authMode })]] as const) {
        for (const obj of apiObjects(compose(inventory, cfg).units)) {
          expect(hasOnePassJson(obj), `${obj.constructor.name} takes the one-pass path`).toBe(true);
          expect(JSON.stringify(objectJson(obj))).toBe(JSON.stringify(obj.toJson()));
          kinds.add(obj.kind);
        }
      }
    }
    expect([...kinds].sort()).toEqual(expect.arrayContaining(['ConfigMap', 'Deployment', 'Ingress', 'Namespace', 'PersistentVolumeClaim', 'ResourceQuota', 'Secret', 'Service', 'VirtualMachine', 'VirtualMachineInstance']));
  });

  it('resolves Lazy values, tokens, Quantity and IntOrString and drops null and undefined like cdk8s', () => {
    const chart = new Chart(new App(), 'c');
    const objects = [
      new k8s.KubeService(chart, 's', {
        metadata: { name: 's', labels: { b: '2', a: '1' }, annotations: {} },
        spec: { ports: [{ port: 80, targetPort: k8s.IntOrString.fromString('http') }], selector: Lazy.any({ produce: () => ({ z: 'z', y: undefined }) }) as never, clusterIp: undefined },
      }),
      new k8s.KubeResourceQuota(chart, 'q', { spec: { hard: { cpu: k8s.Quantity.fromString('2'), memory: k8s.Quantity.fromNumber(3) } } }),
      new ApiObject(chart, 'plain', { apiVersion: 'x/v1', kind: 'X', spec: { list: [null, 1, { resolve: () => 'token' }], nested: { empty: {}, none: null } } }),
      new ApiObject(chart, 'meta', {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name: 'm', finalizers: [], ownerReferences: [{ apiVersion: 'v1', kind: 'K', name: 'o', uid: Lazy.any({ produce: () => 'u' }) as never }], annotations: {}, generateName: 'g-', extra: { a: [], b: {} } },
      }),
    ];
    objects[3].metadata.addLabel('z', 'last');
    objects[3].metadata.add('late', { keep: [1], drop: [] });
    for (const obj of objects) {
      expect(hasOnePassJson(obj)).toBe(true);
      expect(JSON.stringify(objectJson(obj))).toBe(JSON.stringify(obj.toJson()));
    }
  });

  it('leaves JSON patches, custom resolvers and values cdk8s rejects to toJson', () => {
    const patched = new ApiObject(new Chart(new App(), 'c'), 'p', { apiVersion: 'v1', kind: 'ConfigMap', data: { a: 'b' } });
    patched.addJsonPatch(JsonPatch.add('/data/c', 'd'));
    expect(hasOnePassJson(patched)).toBe(false);
    expect(objectJson(patched)).toEqual(patched.toJson());
    expect((objectJson(patched).data as Record<string, string>).c).toBe('d');

    const upper: IResolver = { resolve: (ctx: ResolutionContext) => (typeof ctx.value === 'string' && ctx.value !== ctx.value.toUpperCase() ? ctx.replaceValue(ctx.value.toUpperCase()) : undefined) };
    const custom = new ApiObject(new Chart(new App({ resolvers: [upper] }), 'c'), 'r', { apiVersion: 'v1', kind: 'ConfigMap', data: { a: 'b' } });
    expect(hasOnePassJson(custom)).toBe(false);
    expect(objectJson(custom)).toEqual(custom.toJson());

    class Thing {}
    const bad = new ApiObject(new Chart(new App(), 'c'), 'b', { apiVersion: 'v1', kind: 'ConfigMap', data: { a: new Thing() } });
    expect(() => objectJson(bad)).toThrow(/Failed serializing construct at path 'c\/b'.*non-simple object of type 'Thing'/);
  });
});
