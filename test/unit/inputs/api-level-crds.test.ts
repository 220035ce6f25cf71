// Level detection from installed CRDs (docs/behaviour.md §16.2): the vendored CRDs of each level
// give that level; a mix names each CRD's level; a missing one is named.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { describe, expect, it } from 'vitest';
import { crdsLevelProblem, crownlabsCrdsDir, levelOfCrds, LEVEL_MARKS, type ApiLevel, type CrdLike } from '../../../src/inputs/api-level.ts';
import { crdProjection } from '../../../src/controller/api-level-watch.ts';

function crdsOf(level: ApiLevel): CrdLike[] {
  const dir = crownlabsCrdsDir(level);
  return readdirSync(dir)
    .filter((f) => f.startsWith('crownlabs.polito.it_') && f.endsWith('.yaml'))
    .flatMap((f) => parseAllDocuments(readFileSync(join(dir, f), 'utf8')).map((d) => d.toJS() as CrdLike));
}

describe('levelOfCrds', () => {
  it.each(['2e8aeb9', 'e62be9e'] as const)('the vendored CRDs of %s give that level', (level) => {
    const got = levelOfCrds(crdsOf(level));
    expect(got).toEqual({ kind: 'level', level, crds: LEVEL_MARKS.map((m) => ({ crd: m.crd, level })) });
    expect(crdsLevelProblem(got)).toBeUndefined();
  });

  it('what the controller caches of a CRD (its projection) gives the same level', () => {
    for (const level of ['2e8aeb9', 'e62be9e'] as const) {
      const projected = crdsOf(level).map((c) => crdProjection({ apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition', ...c } as never) as unknown as CrdLike);
      expect(levelOfCrds(projected)).toMatchObject({ kind: 'level', level });
      expect(JSON.stringify(projected).length).toBeLessThan(4000);
    }
  });

  it('a mixed set names every CRD with its level, in one line', () => {
    const old = crdsOf('2e8aeb9');
    const mixed = crdsOf('e62be9e').map((c) => (c.metadata.name === 'instances.crownlabs.polito.it' ? old.find((o) => o.metadata.name === c.metadata.name)! : c));
    const got = levelOfCrds(mixed);
    expect(got.kind).toBe('mixed');
    expect(got.crds).toContainEqual({ crd: 'instances.crownlabs.polito.it', level: '2e8aeb9' });
    expect(got.crds).toContainEqual({ crd: 'tenants.crownlabs.polito.it', level: 'e62be9e' });
    const line = crdsLevelProblem(got)!;
    expect(line).toBe(
      'the installed CrownLabs CRDs mix API levels: templates.crownlabs.polito.it at e62be9e, instances.crownlabs.polito.it at 2e8aeb9, tenants.crownlabs.polito.it at e62be9e, workspaces.crownlabs.polito.it at e62be9e, imagelists.crownlabs.polito.it at e62be9e',
    );
    expect(line).not.toContain('\n');
  });

  it('reads the storage version: a served non-storage version at the other level does not count', () => {
    const crds = crdsOf('2e8aeb9').map((c) => {
      if (c.metadata.name !== 'tenants.crownlabs.polito.it') return c;
      const e62 = crdsOf('e62be9e').find((o) => o.metadata.name === c.metadata.name)!;
      const newer = { ...e62.spec!.versions!.find((v) => v.storage)!, name: 'v9', storage: false };
      return { ...c, spec: { versions: [...c.spec!.versions!, newer] } };
    });
    expect(levelOfCrds(crds)).toMatchObject({ kind: 'level', level: '2e8aeb9' });
  });

  it('a CRD not installed is named, with what is installed', () => {
    const got = levelOfCrds(crdsOf('e62be9e').filter((c) => c.metadata.name !== 'workspaces.crownlabs.polito.it'));
    expect(got).toMatchObject({ kind: 'missing', missing: ['workspaces.crownlabs.polito.it'] });
    expect(crdsLevelProblem(got)).toMatch(/^CrownLabs CRDs not installed: workspaces\.crownlabs\.polito\.it \(installed: templates\.crownlabs\.polito\.it at e62be9e, /);
    expect(levelOfCrds([])).toMatchObject({ kind: 'missing', missing: LEVEL_MARKS.map((m) => m.crd) });
  });
});
