import { describe, expect, it } from 'vitest';
import { renderStartObjects, renderTokenSecret, renderUserPod, USER_STORAGE_SIZE, type UserPodRequest } from '../../../src/compose/user-pods.ts';
import fc from 'fast-check';
import { legacyUserStorageName, ownerFromLabels, podAge, podNameCandidates, podNameProblem, userIdProblem, userPodSelector, userStorageName } from '../../../src/model/user-pods.ts';
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Any = any;

const manifest = {
  metadata: { name: 'jupyter', annotations: { 'sciencedata.dk/copy-token': 'token', 'sciencedata.dk/ingress-port': '8888' } },
  spec: {
    containers: [
      {
        name: 'jupyter',
        image: 'LOCALREGISTRY/jupyter:latest',
        ports: [{ containerPort: 22 }, { containerPort: 8888 }],
        env: [{ name: 'FILE', value: 'x' }, { name: 'SSH_PUBLIC_KEY', value: '' }],
        volumeMounts: [{ name: 'sciencedata', mountPath: '/root/data' }, { name: 'software', mountPath: '/opt/software' }],
        resources: { limits: { cpu: '2', memory: '4Gi' } },
      },
      { name: 'sidecar', image: 'busybox', volumeMounts: [{ name: 'software', mountPath: '/opt' }] },
    ],
    volumes: [{ name: 'software', persistentVolumeClaim: { claimName: 'software-ro' } }],
    hostIPC: false,
  },
};

const request = (over: Partial<UserPodRequest> = {}): UserPodRequest => ({
  podName: 'jupyter-fred-dtu-dk',
  namespace: 'sciencedata',
  userId: 'fred@dtu.dk',
  manifest,
  settings: { jupyter: { SSH_PUBLIC_KEY: 'ssh-ed25519 AAAA', NEW_VAR: 'n' }, nosuch: { X: 'y' } },
  siloIp: '10.0.0.20',
  siloHostname: 'silo7.sciencedata.dk',
  createDeadline: '2026-01-01T00:01:30.000Z',
  defaultRestartPolicy: 'Never',
  localRegistryUrl: 'registry.local:5000',
  localRegistrySecret: 'docker-registry-auth',
  nfsStorageRoot: '/tank/storage',
  ...over,
});

describe('seed 004 naming', () => {
  it('a pod is <manifest name>-<user with @ and . as ->, then -1 … -9', () => {
    const names = podNameCandidates('jupyter', 'fred@dtu.dk');
    expect(names[0]).toBe('jupyter-fred-dtu-dk');
    expect(names[1]).toBe('jupyter-fred-dtu-dk-1');
    expect(names).toHaveLength(10);
  });
  it('the owner is read back from the user and domain labels; the storage is user-storage-<user>', () => {
    expect(ownerFromLabels({ user: 'fred', domain: 'dtu.dk' })).toBe('fred@dtu.dk');
    expect(ownerFromLabels({ user: 'fred', domain: '' })).toBe('fred');
    expect(userPodSelector('fred@dtu.dk')).toBe('user=fred,domain=dtu.dk');
  });
  it('the storage is user-storage-<readable user>-<hash of the exact id>: two ids that differ only in ".", "-" or "@" get two PVs', () => {
    expect(userStorageName('fred@dtu.dk')).toBe('user-storage-fred-dtu-dk-c42fa9eb0842');
    // The seed's name gave these two users one PV (and one user's delete_all_user the other's storage).
    expect(legacyUserStorageName('anne-marie@ku.dk')).toBe(legacyUserStorageName('anne.marie@ku.dk'));
    expect(userStorageName('anne-marie@ku.dk')).not.toBe(userStorageName('anne.marie@ku.dk'));
    expect(userStorageName('Anne@ku.dk')).not.toBe(userStorageName('anne@ku.dk'));
    // Long ids still give a DNS label that fits the `name` label (63).
    const long = `${'a'.repeat(63)}@${'b.'.repeat(31)}b`;
    expect(userIdProblem(long)).toBeUndefined();
    expect(userStorageName(long)).toMatch(/^user-storage-a{37}-[0-9a-f]{12}$/);
  });
  it('storage names are injective DNS labels for any valid user id', () => {
    const part = fc.stringMatching(/^[A-Za-z0-9]([-A-Za-z0-9_.]{0,20}[A-Za-z0-9])?$/);
    const userId = fc.tuple(part, fc.option(part, { nil: undefined })).map(([n, d]) => (d === undefined ? n : `${n}@${d}`));
    fc.assert(
      fc.property(userId, userId, (a, b) => {
        expect(userStorageName(a)).toMatch(/^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/);
        if (a !== b) expect(userStorageName(a)).not.toBe(userStorageName(b));
      }),
    );
    // The collisions the seed's naming had, on purpose.
    for (const [a, b] of [['a-b@c.d', 'a.b@c.d'], ['a@b-c', 'a@b.c'], ['a-b', 'a@b'], ['x_y@z', 'x-y@z']]) expect(userStorageName(a!)).not.toBe(userStorageName(b!));
  });
  it('a user id must fit the user/domain labels, and a pod name a DNS label short enough for <pod>-ingress', () => {
    expect(userIdProblem('fred@dtu.dk')).toBeUndefined();
    expect(userIdProblem('fred smith@dtu.dk')).toMatch(/name@domain/);
    expect(userIdProblem('@dtu.dk')).toMatch(/name@domain/);
    expect(podNameProblem('jupyter-fred-dtu-dk')).toBeUndefined();
    expect(podNameProblem('jupyter-Fred_x')).toMatch(/DNS label/);
    expect(podNameProblem('p'.repeat(56))).toMatch(/at most 55/);
  });
  it('age is h:m:s since the start time', () => {
    expect(podAge('2026-01-01T00:00:00Z', Date.parse('2026-01-01T01:02:03Z'))).toBe('1:2:3');
    expect(podAge(undefined, 0)).toBe('0:0:0');
  });
});

describe('seed 004 create_pod: the pod from the manifest with the user\'s settings', () => {
  const { pod, storage } = renderUserPod(request());
  const c = (name: string) => (pod as Any).spec.containers.find((x: Any) => x.name === name);
  const env = (name: string) => Object.fromEntries(c(name).env.map((e: Any) => [e.name, e.value]));

  it('is named and labelled for its owner (user, domain, podName), in the namespace, with the manifest annotations and the creating state', () => {
    expect(pod.metadata).toMatchObject({ name: 'jupyter-fred-dtu-dk', namespace: 'sciencedata' });
    expect(pod.metadata.labels).toMatchObject({ user: 'fred', domain: 'dtu.dk', podName: 'jupyter-fred-dtu-dk' });
    expect(pod.metadata.annotations).toMatchObject({
      'sciencedata.dk/copy-token': 'token',
      'sciencedata.dk/ingress-port': '8888',
      'userpods.crownlabs.polito.it/state': 'creating',
      'userpods.crownlabs.polito.it/create-deadline': '2026-01-01T00:01:30.000Z',
    });
  });
  it('sets the settings of a container, overwriting and adding env vars; settings for unknown containers change nothing', () => {
    expect(env('jupyter')).toMatchObject({ FILE: 'x', SSH_PUBLIC_KEY: 'ssh-ed25519 AAAA', NEW_VAR: 'n' });
    expect(env('sidecar')).not.toHaveProperty('SSH_PUBLIC_KEY');
    expect(env('sidecar')).not.toHaveProperty('X');
  });
  it('sets SD_UID and HOME_SERVER_IP/HOSTNAME (from the hostname list) in every container', () => {
    for (const name of ['jupyter', 'sidecar']) {
      expect(env(name)).toMatchObject({ SD_UID: 'fred@dtu.dk', HOME_SERVER_IP: '10.0.0.20', HOME_SERVER_HOSTNAME: 'silo7.sciencedata.dk' });
    }
  });
  it('replaces LOCALREGISTRY with localRegistryURL and adds the registry pull Secret', () => {
    expect(c('jupyter').image).toBe('registry.local:5000/jupyter:latest');
    expect(c('sidecar').image).toBe('busybox');
    expect((pod as Any).spec.imagePullSecrets).toEqual([{ name: 'docker-registry-auth' }]);
  });
  it('adds no pull Secret when no image uses the local registry', () => {
    const m = structuredClone(manifest);
    m.spec.containers[0]!.image = 'jupyter:latest';
    expect((renderUserPod(request({ manifest: m })).pod as Any).spec.imagePullSecrets).toBeUndefined();
  });
  it('the sciencedata volume points at the user\'s storage claim; other volumes stay', () => {
    expect((pod as Any).spec.volumes).toEqual([
      { name: 'software', persistentVolumeClaim: { claimName: 'software-ro' } },
      { name: 'sciencedata', persistentVolumeClaim: { claimName: 'user-storage-fred-dtu-dk-c42fa9eb0842' } },
    ]);
  });
  it('keeps the manifest spec verbatim otherwise (quantities, fields the 1.27 classes do not type)', () => {
    expect(c('jupyter').resources).toEqual({ limits: { cpu: '2', memory: '4Gi' } });
    expect((pod as Any).spec.hostIPC).toBe(false);
  });
  it('takes defaultRestartPolicy only when the manifest sets none', () => {
    expect((pod as Any).spec.restartPolicy).toBe('Never');
    const m = structuredClone(manifest) as Any;
    m.spec.restartPolicy = 'Always';
    expect((renderUserPod(request({ manifest: m })).pod as Any).spec.restartPolicy).toBe('Always');
  });
  it('does not touch the manifest it was given', () => {
    expect(manifest.spec.containers[0]!.image).toBe('LOCALREGISTRY/jupyter:latest');
    expect(manifest.spec.volumes).toHaveLength(1);
  });

  it('the user\'s storage: an NFS PV at <nfsStorageRoot>/<user_id> on the silo, pre-bound to the PVC of the same name', () => {
    const pv = storage.find((o) => o.kind === 'PersistentVolume') as Any;
    const pvc = storage.find((o) => o.kind === 'PersistentVolumeClaim') as Any;
    expect(pv.metadata.name).toBe('user-storage-fred-dtu-dk-c42fa9eb0842');
    expect(pv.metadata.namespace).toBeUndefined();
    expect(pv.metadata.labels).toMatchObject({ name: 'user-storage-fred-dtu-dk-c42fa9eb0842', user: 'fred', domain: 'dtu.dk', server: '10.0.0.20' });
    expect(pv.spec).toMatchObject({
      accessModes: ['ReadWriteMany'],
      persistentVolumeReclaimPolicy: 'Retain',
      nfs: { server: '10.0.0.20', path: '/tank/storage/fred@dtu.dk' },
      claimRef: { namespace: 'sciencedata', name: 'user-storage-fred-dtu-dk-c42fa9eb0842', kind: 'PersistentVolumeClaim' },
      capacity: { storage: USER_STORAGE_SIZE },
    });
    expect(pvc.metadata).toMatchObject({ name: 'user-storage-fred-dtu-dk-c42fa9eb0842', namespace: 'sciencedata' });
    expect(pvc.spec).toMatchObject({ volumeName: 'user-storage-fred-dtu-dk-c42fa9eb0842', accessModes: ['ReadWriteMany'], resources: { requests: { storage: USER_STORAGE_SIZE } } });
  });
  it('a pod that does not mount sciencedata gets no storage', () => {
    const m = structuredClone(manifest) as Any;
    m.spec.containers[0].volumeMounts = [];
    const r = renderUserPod(request({ manifest: m }));
    expect(r.storage).toEqual([]);
    expect((r.pod as Any).spec.volumes.map((v: Any) => v.name)).toEqual(['software']);
  });
});

describe('seed 004 start jobs: Services and the Ingress of a Ready pod', () => {
  const live = { ...renderUserPod(request()).pod, metadata: { ...renderUserPod(request()).pod.metadata, uid: 'u-1' } } as Any;
  const objects = renderStartObjects(live, { namespace: 'sciencedata', ingressDomain: 'pods.sciencedata.dk', wildcardSecret: 'user-pods-wildcard' }) as Any[];
  const byName = (n: string) => objects.find((o) => o.metadata.name === n);

  it('an SSH NodePort Service <pod>-ssh on 22 selecting the pod, made for it and owned by it', () => {
    const ssh = byName('jupyter-fred-dtu-dk-ssh');
    expect(ssh.spec).toEqual({
      type: 'NodePort',
      selector: { user: 'fred', domain: 'dtu.dk', podName: 'jupyter-fred-dtu-dk' },
      ports: [{ name: 'ssh', protocol: 'TCP', port: 22, targetPort: 22 }],
    });
    expect(ssh.metadata.labels.createdForPod).toBe('jupyter-fred-dtu-dk');
    expect(ssh.metadata.ownerReferences).toEqual([{ apiVersion: 'v1', kind: 'Pod', name: 'jupyter-fred-dtu-dk', uid: 'u-1' }]);
  });
  it('the Ingress <pod>.<ingressDomain> with the wildcard TLS Secret, to <pod>-http on the ingress-port', () => {
    const ing = byName('jupyter-fred-dtu-dk-ingress');
    expect(ing.spec.tls).toEqual([{ hosts: ['jupyter-fred-dtu-dk.pods.sciencedata.dk'], secretName: 'user-pods-wildcard' }]);
    expect(ing.spec.rules).toEqual([
      { host: 'jupyter-fred-dtu-dk.pods.sciencedata.dk', http: { paths: [{ path: '/', pathType: 'Prefix', backend: { service: { name: 'jupyter-fred-dtu-dk-http', port: { number: 8888 } } } }] } },
    ]);
    expect(byName('jupyter-fred-dtu-dk-http').spec).toMatchObject({ type: 'ClusterIP', ports: [{ name: 'http', protocol: 'TCP', port: 8888, targetPort: 8888 }] });
  });
  it('no SSH Service without a container port 22, no Ingress without the ingress-port annotation', () => {
    const bare = structuredClone(live);
    bare.spec.containers[0].ports = [];
    delete bare.metadata.annotations['sciencedata.dk/ingress-port'];
    expect(renderStartObjects(bare, { namespace: 'sciencedata', ingressDomain: 'd', wildcardSecret: 's' })).toEqual([]);
  });
  it('tokens go into a Secret <pod>-tokens owned by the pod', () => {
    const s = renderTokenSecret(live, 'sciencedata', { token: 'abc' }) as Any;
    expect(s.metadata.name).toBe('jupyter-fred-dtu-dk-tokens');
    expect(Buffer.from(s.data.token, 'base64').toString()).toBe('abc');
  });
});
