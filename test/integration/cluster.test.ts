// Proves the integration cluster is a real Kubernetes control plane: CRD schemas are enforced,
// RBAC is enforced, and the garbage collector (kube-controller-manager) deletes dependents.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  adminKubeConfig,
  apiError,
  createNamespace,
  createObject,
  deleteNamespace,
  deleteObject,
  dryRunCreate,
  getObject,
  isSchemaRejection,
  kubeConfigFor,
  rest,
  serverSideApply,
  uniqueName,
  waitFor,
  type KubeObject,
} from './cluster.ts';

const CRDS = [
  'templates.crownlabs.polito.it',
  'instances.crownlabs.polito.it',
  'tenants.crownlabs.polito.it',
  'workspaces.crownlabs.polito.it',
  'virtualmachineinstances.kubevirt.io',
  'virtualmachines.kubevirt.io',
  'datavolumes.cdi.kubevirt.io',
  'applications.argoproj.io',
  'appprojects.argoproj.io',
];

let ns: string;
beforeAll(async () => {
  ns = await createNamespace('cluster-test');
});
afterAll(async () => {
  if (ns) await deleteNamespace(ns);
});

function template(environmentType: string): KubeObject {
  return {
    apiVersion: 'crownlabs.polito.it/v1alpha2',
    kind: 'Template',
    metadata: { name: 'ubuntu', namespace: ns },
    spec: {
      prettyName: 'Ubuntu',
      description: 'A desktop VM',
      'workspace.crownlabs.polito.it/WorkspaceRef': { name: 'netlab' },
      environmentList: [
        {
          name: 'vm',
          environmentType,
          image: 'registry.example/ubuntu:22.04',
          mountMyDriveVolume: false,
          resources: { cpu: 2, memory: '2G', reservedCPUPercentage: 50 },
        },
      ],
    },
  };
}

function vmi(cores: unknown): KubeObject {
  return {
    apiVersion: 'kubevirt.io/v1',
    kind: 'VirtualMachineInstance',
    metadata: { name: 'vmi', namespace: ns },
    spec: {
      domain: {
        cpu: { cores },
        memory: { guest: '1Gi' },
        devices: { disks: [{ name: 'root', disk: { bus: 'virtio' } }] },
      },
      volumes: [{ name: 'root', containerDisk: { image: 'registry.example/vm:1' } }],
    },
  };
}

describe('test cluster', () => {
  it('serves the vendored CRDs, Established', async () => {
    const c = rest();
    for (const name of CRDS) {
      const crd = await c.request('GET', `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${name}`);
      expect(crd.status.conditions.find((x: any) => x.type === 'Established')?.status, name).toBe('True');
    }
  });

  it('accepts valid Template, Instance and VirtualMachineInstance objects (server-side dry run)', async () => {
    const instance: KubeObject = {
      apiVersion: 'crownlabs.polito.it/v1alpha2',
      kind: 'Instance',
      metadata: { name: 'ubuntu-1', namespace: ns },
      spec: {
        'template.crownlabs.polito.it/TemplateRef': { name: 'ubuntu', namespace: ns },
        'tenant.crownlabs.polito.it/TenantRef': { name: 'alice' },
      },
    };
    const [t, i, v] = await serverSideApply([template('VirtualMachine'), instance, vmi(2)], { dryRun: true });
    // Defaults from the CRD schema were applied by the API server.
    expect((t!.spec as any).deleteAfter).toBe('never');
    expect((t!.spec as any).environmentList[0].mode).toBe('Standard');
    expect((i!.spec as any).running).toBe(true);
    expect((v!.spec as any).domain.cpu.cores).toBe(2);
    // Dry run: nothing persisted.
    expect(await getObject(instance)).toBeUndefined();
  });

  it('rejects objects that violate the CRD schemas with 422', async () => {
    const bad = await apiError(serverSideApply(template('Banana'), { dryRun: true }));
    expect(bad.code).toBe(422);
    expect(bad.body.message).toMatch(/environmentType/);
    expect(bad.body.message).toMatch(/Banana/);

    const noImage = template('Container');
    delete (noImage.spec as any).environmentList[0].image;
    const missing = await apiError(serverSideApply(noImage, { dryRun: true }));
    expect(missing.code).toBe(422);
    expect(missing.body.message).toMatch(/image/);

    // A value of the wrong type: a create (dry run) answers 422 with the field path...
    const badVmi = await apiError(dryRunCreate(vmi('two')));
    expect(badVmi.code).toBe(422);
    expect(badVmi.body.details.causes.map((c: any) => c.field)).toContain('spec.domain.cpu.cores');
  });

  it('server-side apply rejects wrong types and undeclared fields (with a 500, upstream #139253)', async () => {
    // Server-side apply converts the patch to the schema's types before validation; that
    // conversion error is still surfaced as 500. isSchemaRejection() accepts it.
    const badVmi = await apiError(serverSideApply(vmi('two'), { dryRun: true }));
    expect(isSchemaRejection(badVmi)).toBe(true);
    expect(badVmi.body.message).toMatch(/\.spec\.domain\.cpu\.cores: expected numeric/);

    const typo = template('Container');
    (typo.spec as any).environmentLsit = [];
    const undeclared = await apiError(serverSideApply(typo, { dryRun: true }));
    expect(isSchemaRejection(undeclared)).toBe(true);
    expect(undeclared.body.message).toMatch(/\.spec\.environmentLsit: field not declared in schema/);
  });

  it('enforces RBAC: no bindings -> 403, after a RoleBinding -> allowed', async () => {
    const user = uniqueName('user');
    const kc = await kubeConfigFor(user, ['crownlabs:testers']);
    const asUser = rest(kc);

    const denied = await apiError(asUser.request('GET', '/api/v1/namespaces'));
    expect(denied.code).toBe(403);
    expect(denied.body.message).toContain(user);
    expect((await apiError(asUser.request('GET', `/api/v1/namespaces/${ns}/configmaps`))).code).toBe(403);

    // Cluster-wide read of namespaces via ClusterRole + ClusterRoleBinding to the user...
    const crName = uniqueName('ns-reader');
    await serverSideApply([
      {
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'ClusterRole',
        metadata: { name: crName },
        rules: [{ apiGroups: [''], resources: ['namespaces'], verbs: ['get', 'list'] }],
      },
      {
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'ClusterRoleBinding',
        metadata: { name: crName },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: crName },
        subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: user }],
      },
      // ...and namespaced access to ConfigMaps via a RoleBinding to the user's group.
      {
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'Role',
        metadata: { name: 'cm-reader', namespace: ns },
        rules: [{ apiGroups: [''], resources: ['configmaps'], verbs: ['get', 'list'] }],
      },
      {
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'RoleBinding',
        metadata: { name: 'cm-reader', namespace: ns },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'cm-reader' },
        subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'Group', name: 'crownlabs:testers' }],
      },
    ]);
    try {
      // RBAC authorizer caches are informer-based: allow a moment for the bindings to arrive.
      const list = await waitFor(() => asUser.request('GET', '/api/v1/namespaces'), { message: 'namespaces list allowed' });
      expect(list.items.map((n: any) => n.metadata.name)).toContain(ns);
      await waitFor(() => asUser.request('GET', `/api/v1/namespaces/${ns}/configmaps`), { message: 'configmaps list allowed' });
      // Still no write access, and nothing outside the bound namespace.
      const write = await apiError(
        createObject({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'x', namespace: ns } }, kc),
      );
      expect(write.code).toBe(403);
      expect((await apiError(asUser.request('GET', '/api/v1/namespaces/default/configmaps'))).code).toBe(403);
    } finally {
      await deleteObject({ apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRoleBinding', metadata: { name: crName } });
      await deleteObject({ apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', metadata: { name: crName } });
    }
  });

  it('garbage-collects dependents when their owner is deleted (kube-controller-manager)', async () => {
    const owner = await createObject({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: uniqueName('owner'), namespace: ns },
      data: { role: 'owner' },
    });
    const child: KubeObject = {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: {
        name: uniqueName('child'),
        namespace: ns,
        ownerReferences: [{ apiVersion: 'v1', kind: 'ConfigMap', name: owner.metadata.name, uid: (owner.metadata as any).uid }],
      },
      data: { role: 'child' },
    };
    await createObject(child);
    await deleteObject(owner);
    await waitFor(async () => (await getObject(child)) === undefined, { timeoutMs: 60_000, message: 'child ConfigMap GC' });
  });

  it('garbage-collects dependents of a custom resource owner (CrownLabs Template)', async () => {
    const [owner] = await serverSideApply(template('Container'));
    const child: KubeObject = {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: {
        name: uniqueName('tmpl-child'),
        namespace: ns,
        ownerReferences: [
          { apiVersion: 'crownlabs.polito.it/v1alpha2', kind: 'Template', name: owner!.metadata.name, uid: (owner!.metadata as any).uid },
        ],
      },
    };
    await createObject(child);
    // The GC re-reads discovery every 30s, so a CRD installed just before may take that long.
    await deleteObject(owner!);
    await waitFor(async () => (await getObject(child)) === undefined, { timeoutMs: 90_000, message: 'child of Template GC' });
  });

  it('the admin kubeconfig is exposed to tests', () => {
    expect(process.env.KUBECONFIG ?? '').not.toBe('');
    expect(adminKubeConfig().getCurrentCluster()?.server).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
  });
});
