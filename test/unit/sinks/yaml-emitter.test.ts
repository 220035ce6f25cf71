import jsYaml from 'js-yaml';
import { describe, expect, it } from 'vitest';
import { parse, parseAllDocuments } from 'yaml';
import { Inventory } from '../../../src/api/inventory.ts';
import { loadInventory } from '../../../src/api/load.ts';
import { compose, renderAll } from '../../../src/compose/compose.ts';
import { loadConfig } from '../../../src/config/config.ts';
import { objectToYaml, objectsToYaml } from '../../../src/sinks/yaml-emitter.ts';
import { generateLab } from '../../support/generate-lab.ts';
import { testConfig } from '../../support/lab.ts';

/** Every reader must see the same data: YAML 1.2 (yaml, js-yaml) and YAML 1.1 (Go's yaml.v2 rules). */
function expectRoundTrip(value: unknown) {
  const text = objectToYaml(value);
  expect(parse(text), text).toEqual(value);
  expect(parse(text, { version: '1.1' }), text).toEqual(value);
  expect(jsYaml.load(text), text).toEqual(value);
}

describe('the YAML emitter', () => {
  it('quotes every string a YAML 1.1 or 1.2 reader would take for something else', () => {
    const tricky = [
      '0', '1', '-1', '+1', '1.5', '.5', '1e3', '0x1F', '0o17', '017', '1_000', '1:30', '12:30:45', '2024-01-01', '2001-12-14t21:59:43.10-05:00',
      'true', 'False', 'yes', 'No', 'on', 'OFF', 'y', 'N', 'null', '~', '', ' ', ' lead', 'trail ', 'a: b', 'a #b', 'a:', '- x', '-x', ':x', '?x', '&a', '*a', '!t', '|', '>', '%x', '@x',
      '`x', '"q"', "'q'", '#c', '=', '<<', '[a]', '{a}', 'a,b', 'multi\nline', 'tab\tbed', 'é', '.inf', '-.INF', '.nan', '2500M', '500m', '2Gi', '$(POD_NAME)',
      'ALL=(ALL) NOPASSWD:ALL', 'https://h/p?rd=$escaped_request_uri', '/instance/x/app(/|$)(.*)', 'a  b', 'key: value', 'c:\\dir',
    ];
    for (const s of tricky) expectRoundTrip({ v: s, [s || 'empty']: 1, list: [s] });
  });

  it('writes nested maps, lists, empty collections, numbers, booleans and null', () => {
    expectRoundTrip({ a: { b: [{ c: 1, d: [] }, [], {}, [1, [2, 3]], { e: {} }], f: true, g: null, h: -2.5 } });
  });

  it('puts apiVersion, kind and metadata first and sorts every other key', () => {
    expect(objectToYaml({ spec: { z: 1, a: 2 }, metadata: { name: 'demo' }, kind: 'K', apiVersion: 'v1' })).toBe('apiVersion: v1\nkind: K\nmetadata:\n  name: demo\nspec:\n  a: 2\n  z: 1\n');
  });

  it('round-trips every object of the example lab and of a generated lab of every environment type', () => {
    const { config } = loadConfig({ file: 'examples/crownlabs.config.yaml' });
    const { inventory } = loadInventory(['examples/lab']);
    const generated = Inventory.fromObjects(generateLab({ instances: 70, tenants: 10, workspaces: 2 }).map((object) => ({ object, source: { file: 'g', document: 0 } }))).inventory;
    const objects = [
      ...renderAll(compose(inventory, config)).flatMap((s) => s.objects),
      ...renderAll(compose(generated, testConfig({ authMode: 'per-instance' }))).flatMap((s) => s.objects),
    ];
    expect(objects.length).toBeGreaterThan(300);
    const stream = objectsToYaml(objects);
    expect(parseAllDocuments(stream).map((d) => d.toJS())).toEqual(JSON.parse(JSON.stringify(objects)));
    expect(parseAllDocuments(stream, { version: '1.1' }).map((d) => d.toJS())).toEqual(JSON.parse(JSON.stringify(objects)));
  });
});
