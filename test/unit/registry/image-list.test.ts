import { describe, expect, it } from 'vitest';
import { nextLink } from '../../../src/integrations/registry/client.ts';
import { buildImageListSpec, compareVersions, imageListObject, withoutFirstLatest } from '../../../src/integrations/registry/image-list.ts';

describe('§10 step 3: versions of an image', () => {
  it('removes only the first "latest"', () => {
    expect(withoutFirstLatest(['latest', '1', 'latest'])).toEqual(['1', 'latest']);
    expect(withoutFirstLatest(['1', '2'])).toEqual(['1', '2']);
  });
  it('drops an image whose only tag was latest, or that has no tags (null answer)', () => {
    const spec = buildImageListSpec('reg.example', [
      { name: 'only-latest', tags: ['latest'] },
      { name: 'none', tags: null },
      { name: 'empty', tags: [] },
      { name: 'kept', tags: ['latest', '1.0'] },
    ]);
    expect(spec).toEqual({ registryName: 'reg.example', images: [{ name: 'kept', versions: ['1.0'] }] });
  });
});

describe('§16.3 the ImageList at e62be9e', () => {
  const repos = [{ name: 'img', tags: ['latest', '1.0', 'latest', '1.0'] }];
  it('drops every latest and repeated tags, and writes projectBaseName when given', () => {
    expect(buildImageListSpec('reg.example', repos, 'e62be9e', 'crownlabs-containerdisks')).toEqual({
      registryName: 'reg.example',
      projectBaseName: 'crownlabs-containerdisks',
      images: [{ name: 'img', versions: ['1.0'] }],
    });
    expect(buildImageListSpec('reg.example', repos, 'e62be9e')).not.toHaveProperty('projectBaseName');
  });
  it('2e8aeb9 keeps its shape: the second latest stays, no projectBaseName', () => {
    expect(buildImageListSpec('reg.example', repos, '2e8aeb9', 'ignored')).toEqual({ registryName: 'reg.example', images: [{ name: 'img', versions: ['1.0', '1.0', 'latest'] }] });
  });
});

describe('§10 (Decision 8): deterministic order', () => {
  it('sorts images by name whatever order the registry answered in', () => {
    const a = buildImageListSpec('r', [{ name: 'b/x', tags: ['1'] }, { name: 'a', tags: ['1'] }, { name: 'b', tags: ['1'] }]);
    const b = buildImageListSpec('r', [{ name: 'b', tags: ['1'] }, { name: 'b/x', tags: ['1'] }, { name: 'a', tags: ['1'] }]);
    expect(a.images.map((i) => i.name)).toEqual(['a', 'b', 'b/x']);
    expect(b).toEqual(a);
  });
  it.each([
    [['1.10', '1.9', '1.2.3', '1.2'], ['1.2', '1.2.3', '1.9', '1.10']],
    [['v2', 'v10', 'v1'], ['v1', 'v2', 'v10']],
    [['1.0.0', '1.0.0-rc.2', '1.0.0-rc.10', '0.9'], ['0.9', '1.0.0-rc.2', '1.0.0-rc.10', '1.0.0']],
    [['20230714t153012', '20230102t000000', '20221231t235959'], ['20221231t235959', '20230102t000000', '20230714t153012']],
    [['ubuntu-22.04', 'ubuntu-9.10', 'ubuntu-20.04'], ['ubuntu-9.10', 'ubuntu-20.04', 'ubuntu-22.04']],
    [['stable', '2', 'edge', '10'], ['2', '10', 'edge', 'stable']],
    [['1.01', '1.1'], ['1.01', '1.1']],
  ])('sorts versions semver-aware and naturally: %j', (input, sorted) => {
    expect([...input].sort(compareVersions)).toEqual(sorted);
    expect([...input].reverse().sort(compareVersions)).toEqual(sorted);
  });
});

describe('§10 step 4: the ImageList object', () => {
  it('is the cluster-scoped crownlabs.polito.it/v1alpha1 ImageList with only name and spec', () => {
    expect(imageListObject('vm-images', { registryName: 'r', images: [] })).toEqual({
      apiVersion: 'crownlabs.polito.it/v1alpha1',
      kind: 'ImageList',
      metadata: { name: 'vm-images' },
      spec: { registryName: 'r', images: [] },
    });
  });
});

describe('registry pagination (Link header)', () => {
  it.each([
    ['</v2/_catalog?last=b&n=2>; rel="next"', '/v2/_catalog?last=b&n=2'],
    ['<http://r:5000/v2/_catalog?last=b&n=2>; rel=next', 'http://r:5000/v2/_catalog?last=b&n=2'],
    ['</prev>; rel="prev", </next>; rel="next"', '/next'],
    ['</x>; rel="prev"', undefined],
    ['', undefined],
  ])('%j → %j', (header, target) => {
    expect(nextLink(header)).toBe(target);
  });
});
