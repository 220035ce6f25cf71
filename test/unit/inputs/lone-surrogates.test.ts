import { mkdtempSync, writeFileSync, existsSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseInputText } from '../../../src/inputs/parse.ts';
import { formatProblem } from '../../../src/inputs/problems.ts';
import { CONFIG, crownlabs, LAB } from '../../support/cli.ts';

const TENANT = (key: string) => `apiVersion: crownlabs.polito.it/v1alpha2
kind: Tenant
metadata: {name: john.doe}
spec:
  firstName: John
  lastName: Doe
  email: john@example.com
  publicKeys:
    - ssh-ed25519 AAAAok john@pc
    - ${key}
`;

describe('input strings with a lone surrogate (#14.5)', () => {
  it('are an input error naming file, document, line and field, and the object is left out', () => {
    const { objects, problems } = parseInputText(`---\n${TENANT('"ssh-ed25519 AAAA john\\ud800"')}`, 'tenants.yaml');
    expect(objects).toEqual([]);
    expect(problems.map(formatProblem)).toEqual([
      'tenants.yaml:11:7 (document 1, Tenant john.doe): error: spec.publicKeys[1]: "ssh-ed25519 AAAA john\\ud800" holds a lone UTF-16 surrogate (U+D800), which no UTF-8 output can carry',
    ]);
  });

  it('in a key or a JSON document too; a valid surrogate pair escape is fine', () => {
    const json = JSON.stringify({ apiVersion: 'v1', kind: 'List', items: [{ kind: 'Tenant', metadata: { name: 'x', labels: { 'a\udc00': 'b' } } }] });
    expect(json).toContain('\\udc00');
    expect(parseInputText(json, 'l.json').problems.map((p) => [p.field, p.message])).toEqual([
      ['items[0].metadata.labels["a\\udc00"]', 'the key "a\\udc00" holds a lone UTF-16 surrogate (U+DC00), which no UTF-8 output can carry'],
    ]);
    const ok = parseInputText(TENANT('"ssh-ed25519 AAAA john \\ud83d\\ude00"'), 't.yaml');
    expect(ok.problems).toEqual([]);
    expect((ok.objects[0].object.spec as { publicKeys: string[] }).publicKeys[1]).toBe('ssh-ed25519 AAAA john \ud83d\ude00');
  });

  it('make synth exit 1 with that error, not an internal error, and write nothing', () => {
    const dir = mkdtempSync(join(tmpdir(), 'lone-surrogate-'));
    const lab = readFileSync(join(LAB, 'tenants.yaml'), 'utf8');
    const bad = lab.replace(/^(\s+- )(ssh-ed25519 \S+ john@laptop)$/m, '$1"$2\\ud800"');
    expect(bad).not.toBe(lab);
    writeFileSync(join(dir, 'tenants.yaml'), bad);
    const out = join(mkdtempSync(join(tmpdir(), 'lone-surrogate-out-')), 'dist');
    const r = crownlabs(['synth', '-f', dir, '--config', CONFIG, '-o', out]);
    expect(r.stderr).toMatch(/tenants\.yaml:\d+:\d+ \(document 1, Tenant john\.doe\): error: spec\.publicKeys\[0\]: .* holds a lone UTF-16 surrogate/);
    expect(r.stderr).not.toMatch(/internal error/);
    expect(r.code).toBe(1);
    expect(existsSync(out)).toBe(false);
  });
});
