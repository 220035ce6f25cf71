// The `integration` project's cluster is at API level 2e8aeb9, and its workers talk to it, also
// when `integration-e62be9e` (a second cluster, at e62be9e) runs in the same vitest process.
import { describe, expect, inject, it } from 'vitest';
import { LEVEL_MARKS } from '../../src/inputs/api-level.ts';
import { adminKubeConfigPath, rest } from './cluster.ts';

describe('the integration project’s test cluster', () => {
  it('serves the 2e8aeb9 CrownLabs CRDs: no CRD carries the field that marks e62be9e', async () => {
    for (const mark of LEVEL_MARKS) {
      const crd = await rest().request<any>('GET', `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${mark.crd}`);
      let node = crd.spec.versions.find((v: any) => v.storage).schema.openAPIV3Schema;
      for (const k of mark.path) node = node?.properties?.[k];
      expect(node === undefined ? mark.absent : mark.present, `${mark.crd} ${mark.path.join('.')}`).toBe('2e8aeb9');
    }
    expect(await rest().request<any>('GET', '/apis/crownlabs.polito.it/v1alpha2')).not.toMatchObject({
      resources: expect.arrayContaining([expect.objectContaining({ kind: 'SharedVolume' })]),
    });
  });

  it('its workers and what they spawn see that cluster: KUBECONFIG is the injected admin kubeconfig', () => {
    expect(process.env.KUBECONFIG).toBe(inject('testClusterKubeconfig'));
    expect(process.env.TEST_CLUSTER_KUBECONFIG).toBe(adminKubeConfigPath());
  });
});
