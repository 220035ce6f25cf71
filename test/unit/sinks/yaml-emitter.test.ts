import fc from 'fast-check';
import jsYaml from 'js-yaml';
import { describe, expect, it } from 'vitest';
import { parse, parseAllDocuments } from 'yaml';
import { Inventory } from '../../../src/inputs/inventory.ts';
import { loadInventory } from '../../../src/inputs/load.ts';
import { compose, renderAll } from '../../../src/compose/compose.ts';
import { loadConfig } from '../../../src/config/config.ts';
import { objectToYaml, objectsToYaml } from '../../../src/sinks/yaml-emitter.ts';
import { generateLab } from '../../support/generate-lab.ts';
import { testConfig } from '../../support/lab.ts';
import { pyyamlLoad } from '../../support/pyyaml.ts';
import { asJson, PROPERTY_SEED, sample, yamlMap, yamlString, yamlValue } from '../../support/yaml-strings.ts';

/** Every reader must see the same data: YAML 1.2 (yaml, js-yaml) and YAML 1.1 (yaml in 1.1 mode; PyYAML, in batches). */
function expectRoundTrip(value: unknown) {
  const text = objectToYaml(value);
  const want = asJson(value);
  expect(parse(text), text).toEqual(want);
  expect(parse(text, { version: '1.1' }), text).toEqual(want);
  expect(jsYaml.load(text), text).toEqual(want);
}

/** The same values through PyYAML (the YAML 1.1 reader cloud-init uses), one process for them all. */
function expectPyYamlRoundTrip(values: readonly unknown[], what: (i: number) => string) {
  const texts = values.map((v) => objectToYaml(v));
  const read = pyyamlLoad(texts);
  values.forEach((v, i) => expect(read[i], `${what(i)} written as\n${texts[i]}`).toEqual({ ok: asJson(v) }));
}

const RUNS = 3000;
// Top-level values are maps (rendered objects) or a lone scalar; keys over 1,024 characters now and then.
const longKey = fc.string({ unit: 'grapheme-ascii', minLength: 990, maxLength: 1100 });
const document = fc.oneof(
  { weight: 8, arbitrary: yamlMap(yamlValue) },
  { weight: 1, arbitrary: yamlString },
  { weight: 1, arbitrary: fc.dictionary(longKey, yamlValue, { maxKeys: 2, noNullPrototype: true }).map((m) => ({ list: [m], map: m })) },
);

describe('the YAML emitter', () => {
  it('quotes every string a YAML 1.1 or 1.2 reader would take for something else', () => {
    const tricky = [
      '0', '1', '-1', '+1', '1.5', '.5', '1e3', '0x1F', '0o17', '017', '1_000', '1:30', '12:30:45', '2024-01-01', '2001-12-14t21:59:43.10-05:00',
      'true', 'False', 'yes', 'No', 'on', 'OFF', 'y', 'N', 'null', '~', '', ' ', ' lead', 'trail ', 'a: b', 'a #b', 'a:', '- x', '-x', ':x', '?x', '&a', '*a', '!t', '|', '>', '%x', '@x',
      '`x', '"q"', "'q'", '#c', '=', '<<', '[a]', '{a}', 'a,b', 'multi\nline', 'tab\tbed', 'é', '.inf', '-.INF', '.nan', '2500M', '500m', '2Gi', '$(POD_NAME)',
      'ALL=(ALL) NOPASSWD:ALL', 'https://h/p?rd=$escaped_request_uri', '/instance/x/app(/|$)(.*)', 'a  b', 'key: value', 'c:\\dir',
    ];
    for (const s of tricky) expectRoundTrip({ v: s, [s || 'empty']: 1, list: [s] });
    expectPyYamlRoundTrip(tricky.map((s) => ({ v: s, [s || 'empty']: 1, list: [s] })), (i) => JSON.stringify(tricky[i]));
  });

  it('escapes NEL, LS, PS, the BOM and control characters in quoted strings, which YAML 1.1 reads as line breaks or refuses (#14.5)', () => {
    const values = ['a\u0085b', 'a\u2028b', 'a\u2029b', 'x: 1\u0085y: 2', 'k\u0085- item', '\ufeffbom', 'del\u007f', 'c1\u0080\u009f', '\ufffe\uffff'];
    const objects = values.map((v) => ({ v, [v]: 'key', list: [v, 'end'] }));
    for (const o of objects) {
      expectRoundTrip(o);
      expect(objectToYaml(o)).not.toMatch(/[\u007f-\u009f\u2028\u2029\ufeff\ufffe\uffff]/);
    }
    expectPyYamlRoundTrip(objects, (i) => JSON.stringify(values[i]));
  });

  it('quotes the strings YAML 1.1 readers take for floats with their digits left out (., ._, +.5, e5, .e5) and a lone ...', () => {
    const values = ['.', '._', '+.5', '-.5', 'e5', 'E5', '+e5', '.e5', '...'];
    for (const v of values) expectRoundTrip({ v, [v]: 1, list: [v] });
    expect(objectToYaml('...')).toBe('"..."\n');
    expectPyYamlRoundTrip([...values.map((v) => ({ v, [v]: 1 })), '...'], (i) => JSON.stringify(values[i] ?? '...'));
  });

  it('writes numbers YAML 1.1 reads back as the same numbers (1e+21 as 1.0e+21)', () => {
    const numbers = [1e21, -1e21, 1e-7, 5e-324, 1.7976931348623157e308, 123.456, -0.5, 2 ** 53, 0];
    const value = { numbers };
    expect(objectToYaml({ x: 1e21 })).toBe('x: 1.0e+21\n');
    expectRoundTrip(value);
    expectPyYamlRoundTrip([value], () => 'numbers');
  });

  it('writes a key over 1,024 characters as an explicit key (readers refuse longer implicit keys)', () => {
    const long = 'k'.repeat(1500);
    const value = { [long]: { a: [1, { [long]: 'v', b: 2 }] }, list: [{ [long]: [], c: 1 }], short: 1 };
    expect(objectToYaml({ [long]: 1 })).toBe(`? ${long}\n: 1\n`);
    expectRoundTrip(value);
    expectPyYamlRoundTrip([value], () => 'long keys');
  });

  it('refuses a string with a lone surrogate, naming it', () => {
    expect(() => objectToYaml({ metadata: { name: 'x\ud800' } })).toThrow('cannot write the string "x\\ud800" as YAML: it holds a lone UTF-16 surrogate');
  });

  it('property: random objects read back the same through yaml (1.1 and 1.2) and js-yaml', () => {
    fc.assert(
      fc.property(document, (value) => expectRoundTrip(value)),
      { seed: PROPERTY_SEED, numRuns: RUNS },
    );
  });

  it('property: random objects read back the same through PyYAML', () => {
    const values = sample(document, RUNS);
    expectPyYamlRoundTrip(values, (i) => `seed ${PROPERTY_SEED}, case ${i}: ${JSON.stringify(values[i])}`);
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
    expectPyYamlRoundTrip(objects, (i) => `${objects[i].kind} ${objects[i].metadata.name}`);
  });
});
