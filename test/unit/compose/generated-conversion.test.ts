import { ApiObject, App } from 'cdk8s';
import * as k8s from 'cdk8s-plus-27/lib/imports/k8s.js';
import { describe, expect, it } from 'vitest';
import { loadInventory } from '../../../src/inputs/load.ts';
import { compose } from '../../../src/compose/compose.ts';
import { compiledConversion } from '../../../src/compose/generated-conversion.ts';
import { loadConfig } from '../../../src/config/config.ts';

const ns = k8s as unknown as Record<string, (obj: unknown) => unknown>;
// JSON with key order, and with the keys whose value is undefined (JSON.stringify would drop them).
const text = (v: unknown) => JSON.stringify(v, (_k, x: unknown) => (x === undefined ? '<undefined>' : x));
const same = (name: string, input: unknown) => {
  const conv = compiledConversion(ns, name)!;
  expect(text(conv(input)), name).toBe(text(ns[name](input)));
};

describe('compiledConversion: the generated toJson_* conversions by table', () => {
  it("compiles every conversion of cdk8s-plus-27's k8s module (a new generated shape would show here)", () => {
    const names = Object.keys(ns).filter((n) => n.startsWith('toJson_'));
    expect(names.length).toBeGreaterThan(400);
    expect(names.filter((n) => compiledConversion(ns, n) === undefined)).toEqual([]);
  });

  it('gives the props of every core object the example lab renders the same JSON as the generated code, key order included', () => {
    const { config } = loadConfig({ file: 'examples/crownlabs.config.yaml' });
    const { inventory } = loadInventory(['examples/lab']);
    const kinds = new Set<string>();
    for (const unit of compose(inventory, config).units) {
      for (const obj of unit.build(new App()).node.findAll().filter((c): c is ApiObject => ApiObject.isApiObject(c))) {
        const m = /\.\.\.(toJson_\w+)\(props\)/.exec(String((obj.constructor as { manifest?: unknown }).manifest));
        if (!m || ns[m[1]] === undefined) continue;
        // The props as objectJson hands them over: resolved plain JSON.
        const resolved = JSON.parse(JSON.stringify(obj.toJson()));
        same(m[1], resolved);
        kinds.add(obj.kind);
      }
    }
    expect([...kinds]).toEqual(expect.arrayContaining(['Deployment', 'Ingress', 'LimitRange', 'Namespace', 'NetworkPolicy', 'PersistentVolumeClaim', 'ResourceQuota', 'RoleBinding', 'Secret', 'Service']));
  });

  it('keeps the edge cases: undefined fields and map values, "__proto__" map keys, Quantity/IntOrString values, dates, copies of lists', () => {
    const data = JSON.parse('{"__proto__": "own key", "a": "1"}');
    same('toJson_KubeConfigMapProps', { metadata: { name: 'x', labels: { b: '2', a: undefined }, annotations: undefined }, data, binaryData: {} });
    same('toJson_ObjectMeta', { name: 'n', creationTimestamp: new Date(0), finalizers: ['f'], ownerReferences: [{ apiVersion: 'v1', kind: 'K', name: 'o', uid: 'u' }] });
    same('toJson_ResourceRequirements', { limits: { cpu: { value: '2' }, memory: { value: 3 } }, requests: undefined });
    same('toJson_ServicePort', { port: 80, targetPort: { value: 'http' }, name: undefined });
    same('toJson_PodSpec', { containers: [{ name: 'c', env: [{ name: 'A', value: 'b' }], ports: [] }], volumes: undefined, nodeSelector: { z: 'z', a: 'a' } });
    const conv = compiledConversion(ns, 'toJson_PodSpec')!;
    const list = ['x'];
    expect((conv({ containers: [], imagePullSecrets: undefined, hostAliases: [{ hostnames: list }] }) as { hostAliases: { hostnames: string[] }[] }).hostAliases[0].hostnames).not.toBe(list);
    // Where the generated code throws (null where an object must be), so does the table.
    expect(() => ns.toJson_PodSpec({ affinity: null })).toThrow(TypeError);
    expect(() => conv({ affinity: null })).toThrow(TypeError);
  });

  it('compiles nothing whose shape it does not know, nor anything that reaches it', () => {
    const fake: Record<string, unknown> = {
      toJson_Odd: function toJson_Odd(obj: { a: string }) {
        return { a: obj.a.toUpperCase() };
      },
      toJson_Uses: ns.toJson_PodSpec,
    };
    expect(compiledConversion(fake, 'toJson_Odd')).toBeUndefined();
    // toJson_PodSpec calls conversions this namespace does not hold.
    expect(compiledConversion(fake, 'toJson_Uses')).toBeUndefined();
    expect(compiledConversion(fake, 'toJson_Missing')).toBeUndefined();
  });
});
