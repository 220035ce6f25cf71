import fc from 'fast-check';
import jsYaml from 'js-yaml';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { doubleQuoted, isPlainSafe, yamlString, YamlScalarError } from '../../../src/model/yaml-scalar.ts';
import { pyyamlLoad } from '../../support/pyyaml.ts';
import { PROPERTY_SEED, sample, yamlString as anyString } from '../../support/yaml-strings.ts';

const RUNS = 3000;

/** A document holding the scalar as a map value, a sequence item and (alone) the whole document. */
function documents(s: string): string[] {
  const f = yamlString(s);
  return [`v: ${f}\nlist:\n  - ${f}\n  - end\n`, `${f}\n`];
}
const expected = (s: string) => [{ v: s, list: [s, 'end'] }, s];

describe('safe YAML scalars (#14.5)', () => {
  it('double-quotes exactly as JSON does for strings JSON already writes safely (output bytes unchanged)', () => {
    for (const s of ['', 'yes', 'a: b', 'multi\nline', 'tab\tbed', 'é', '"q"', 'back\\slash', '\u0000\u001b', 'ssh-rsa AAAA x@y', '日本語', '\ud83d\ude00']) {
      expect(doubleQuoted(s)).toBe(JSON.stringify(s));
    }
  });

  it('escapes what JSON leaves raw but YAML reads as a line break or refuses: NEL, LS, PS, DEL, C1, BOM, U+FFFE/U+FFFF', () => {
    expect(doubleQuoted('a\u0085b\u2028c\u2029d')).toBe('"a\\u0085b\\u2028c\\u2029d"');
    expect(doubleQuoted('\u007f\u0080\u009f\ufeff\ufffe\uffff')).toBe('"\\u007f\\u0080\\u009f\\ufeff\\ufffe\\uffff"');
    // A surrogate pair is a valid character and stays as it is.
    expect(doubleQuoted('\u2028\ud83d\ude00')).toBe('"\\u2028\ud83d\ude00"');
  });

  it('refuses a lone surrogate with an error naming the value, since no UTF-8 text can carry it', () => {
    for (const [s, code, at] of [['key\ud800', 'D800', 3], ['\udc00x', 'DC00', 0], ['a\udc00\ud800', 'DC00', 1]] as const) {
      expect(() => doubleQuoted(s)).toThrow(YamlScalarError);
      expect(() => yamlString(s)).toThrow(`cannot write the string ${JSON.stringify(s)} as YAML: it holds a lone UTF-16 surrogate (U+${code} at index ${at})`);
    }
  });

  it('keeps names, labels, paths and ordinary keys plain, and quotes every look-alike of another type or structure', () => {
    for (const s of ['demo', 'crownlabs.polito.it/instance', 'tenant-john-doe', '.dockerconfigjson', 'ALL=(ALL) NOPASSWD:ALL', 'nfs.example:/export/x', 'ssh-ed25519 AAAA+/= john@pc', '2Gi', '500m']) {
      expect(isPlainSafe(s), s).toBe(true);
    }
    for (const s of ['', 'yes', 'Off', 'y', '~', 'null', '1', '+.5', '.5', '.', '._', 'e5', '.e5', '1:20', '2001-12-14', '.inf', '...', '---', '<<', '=', '- a', 'a: b', 'a #b', 'a:', ' a', 'a ', '#a', 'a\u0085b', 'a\u2028b', 'é']) {
      expect(isPlainSafe(s), s).toBe(false);
    }
  });

  it('every string reads back the same through yaml (1.1 and 1.2) and js-yaml', () => {
    fc.assert(
      fc.property(anyString, (s) => {
        documents(s).forEach((doc, i) => {
          const want = expected(s)[i];
          expect(parse(doc), doc).toEqual(want);
          expect(parse(doc, { version: '1.1' }), doc).toEqual(want);
          expect(jsYaml.load(doc), doc).toEqual(want);
        });
      }),
      { seed: PROPERTY_SEED, numRuns: RUNS },
    );
  });

  it('every string reads back the same through PyYAML, the YAML 1.1 reader cloud-init uses', () => {
    const strings = sample(anyString, RUNS);
    const docs = strings.flatMap(documents);
    const read = pyyamlLoad(docs);
    strings.forEach((s, n) => {
      expected(s).forEach((want, i) => {
        const k = n * 2 + i;
        expect(read[k], `seed ${PROPERTY_SEED}, case ${n}: ${JSON.stringify(s)} written as\n${docs[k]}`).toEqual({ ok: want });
      });
    });
  });
});
