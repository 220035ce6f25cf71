// The vendored CRDs are read with js-yaml (src/inputs/crd-schemas.ts, ~10× faster on KubeVirt's);
// the `yaml` package, which reads the inputs' positions, must see the very same documents.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { parseCrdFile } from '../../../src/inputs/crd-schemas.ts';
import { crdsDir } from '../../../src/paths.ts';

describe('reading the vendored CRD files', () => {
  const files = readdirSync(crdsDir()).filter((f) => f.endsWith('.yaml'));

  it('finds them all', () => {
    expect(files.length).toBeGreaterThanOrEqual(12);
  });

  it.each(files)('%s: js-yaml reads what the yaml package reads', (file) => {
    const text = readFileSync(join(crdsDir(), file), 'utf8');
    const expected = parseAllDocuments(text).map((d) => d.toJS({ maxAliasCount: -1 }) as unknown);
    expect(parseCrdFile(text)).toStrictEqual(expected);
  });
});
