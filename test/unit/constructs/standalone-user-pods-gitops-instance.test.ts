// User-pod, gitops and cloud-init constructs used on their own in cdk8s' test chart
// (Testing.chart()), props written here: what each renders, and what an optional prop changes.
// user-pods.test.ts, the sinks' gitops tests and cloud-init.test.ts cover them through compose.
import { Testing } from 'cdk8s';
import { load } from 'js-yaml';
import { describe, expect, it } from 'vitest';
import { ArgoApplication } from '../../../constructs/gitops/argo-application.ts';
import { ArgoProject } from '../../../constructs/gitops/argo-project.ts';
import { CloudInitSecret } from '../../../constructs/instance/cloud-init.ts';
import { TokenSecret } from '../../../constructs/user-pods/token-secret.ts';
import { UserPodIngress } from '../../../constructs/user-pods/user-pod-ingress.ts';
import { UserPodServices } from '../../../constructs/user-pods/user-pod-services.ts';
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Any = any;

function synth(build: (chart: ReturnType<typeof Testing.chart>) => void): Any[] {
  const chart = Testing.chart();
  build(chart);
  return Testing.synth(chart);
}
const labels = { createdForPod: 'jupyter-fred' };
const owner = [{ apiVersion: 'v1', kind: 'Pod', name: 'jupyter-fred', uid: '1234' }];

describe('user-pod constructs on their own', () => {
  it('UserPodServices: a NodePort for SSH and a ClusterIP on httpPort, both selecting the pod; without ssh and httpPort, nothing', () => {
    const both = synth((c) => new UserPodServices(c, 's', { podName: 'jupyter-fred', namespace: 'sd', labels, selector: { pod: 'jupyter-fred' }, ssh: true, httpPort: 8888, ownerReferences: owner }));
    expect(both.map((o) => [o.metadata.name, o.spec.type, o.spec.ports])).toEqual([
      ['jupyter-fred-ssh', 'NodePort', [{ name: 'ssh', protocol: 'TCP', port: 22, targetPort: 22 }]],
      ['jupyter-fred-http', 'ClusterIP', [{ name: 'http', protocol: 'TCP', port: 8888, targetPort: 8888 }]],
    ]);
    for (const o of both) {
      expect(o.spec.selector).toEqual({ pod: 'jupyter-fred' });
      expect(o.metadata.ownerReferences).toEqual(owner);
    }
    expect(synth((c) => new UserPodServices(c, 's', { podName: 'p', namespace: 'sd', labels, selector: {}, ssh: false }))).toEqual([]);
    const sshOnly = synth((c) => new UserPodServices(c, 's', { podName: 'p', namespace: 'sd', labels, selector: {}, ssh: true }));
    expect(sshOnly.map((o) => o.metadata.name)).toEqual(['p-ssh']);
    expect(sshOnly[0].metadata.ownerReferences).toBeUndefined();
  });

  it('UserPodIngress: https://<pod>.<domain>/ to the pod\'s HTTP Service, TLS by the wildcard Secret', () => {
    const [ing] = synth((c) => new UserPodIngress(c, 'i', { podName: 'jupyter-fred', namespace: 'sd', labels, port: 8888, ingressDomain: 'pods.example', wildcardSecret: 'wildcard' }));
    expect(ing.metadata.name).toBe('jupyter-fred-ingress');
    expect(ing.metadata.ownerReferences).toBeUndefined();
    expect(ing.spec).toEqual({
      tls: [{ hosts: ['jupyter-fred.pods.example'], secretName: 'wildcard' }],
      rules: [{ host: 'jupyter-fred.pods.example', http: { paths: [{ path: '/', pathType: 'Prefix', backend: { service: { name: 'jupyter-fred-http', port: { number: 8888 } } } }] } }],
    });
  });

  it('TokenSecret: each token base64-encoded under its key, owned by the pod when given', () => {
    const [secret] = synth((c) => new TokenSecret(c, 't', { name: 'tokens', namespace: 'sd', labels, ownerReferences: owner, tokens: { token: 'abc', 'other-token': 'é' } }));
    expect(secret.type).toBe('Opaque');
    expect(secret.metadata.ownerReferences).toEqual(owner);
    expect(Object.fromEntries(Object.entries(secret.data).map(([k, v]) => [k, Buffer.from(v as string, 'base64').toString('utf8')]))).toEqual({ token: 'abc', 'other-token': 'é' });
  });
});

describe('gitops constructs on their own', () => {
  it('ArgoApplication: automated sync with prune and self-heal, server-side apply, its wave, the resources finalizer', () => {
    const [app] = synth((c) => new ArgoApplication(c, 'a', { name: 'tenant-x', argocdNamespace: 'argocd', project: 'crownlabs', repoUrl: 'https://git.example/lab.git', revision: 'main', path: 'tenants/x', namespace: 'tenant-x', syncWave: 2 }));
    expect(app.kind).toBe('Application');
    expect(app.metadata).toEqual({ name: 'tenant-x', namespace: 'argocd', annotations: { 'argocd.argoproj.io/sync-wave': '2' }, finalizers: ['resources-finalizer.argocd.argoproj.io'] });
    expect(app.spec.source).toEqual({ repoURL: 'https://git.example/lab.git', targetRevision: 'main', path: 'tenants/x' });
    expect(app.spec.destination).toEqual({ server: 'https://kubernetes.default.svc', namespace: 'tenant-x' });
    expect(app.spec.syncPolicy.automated).toEqual({ prune: true, selfHeal: true });
    expect(app.spec.syncPolicy.syncOptions).toContain('ServerSideApply=true');
  });

  it('ArgoProject: one repository, this cluster, and exactly the given namespaces and kinds', () => {
    const [p] = synth((c) =>
      new ArgoProject(c, 'p', { name: 'crownlabs', argocdNamespace: 'argocd', repoUrl: 'https://git.example/lab.git', namespaces: ['tenant-*'], namespacedKinds: [{ group: '', kind: 'Secret' }], clusterKinds: [] }),
    );
    expect(p.kind).toBe('AppProject');
    expect(p.spec.sourceRepos).toEqual(['https://git.example/lab.git']);
    expect(p.spec.destinations).toEqual([{ server: 'https://kubernetes.default.svc', namespace: 'tenant-*' }]);
    expect(p.spec.namespaceResourceWhitelist).toEqual([{ group: '', kind: 'Secret' }]);
    expect(p.spec.clusterResourceWhitelist).toEqual([]);
  });
});

describe('CloudInitSecret on its own', () => {
  const userdata = (o: Any) => load(Buffer.from(o.data.userdata, 'base64').toString('utf8')) as Any;
  it('the keys go to the crownlabs user and to the default user; without nfs, no mounts', () => {
    const [secret] = synth((c) => new CloudInitSecret(c, 'ci', { name: 'vm-1', labels: { a: 'b' }, publicKeys: ['ssh-ed25519 AAAA owner', 'ssh-ed25519 BBBB manager'] }));
    expect(secret.metadata).toEqual({ name: 'vm-1', labels: { a: 'b' } });
    const doc = userdata(secret);
    expect(doc.users[0].name).toBe('crownlabs');
    expect(doc.users[0].ssh_authorized_keys).toEqual(['ssh-ed25519 AAAA owner', 'ssh-ed25519 BBBB manager']);
    expect(doc.ssh_authorized_keys).toEqual(['ssh-ed25519 AAAA owner', 'ssh-ed25519 BBBB manager']);
    expect(doc.mounts).toEqual([]);
  });
  it('with nfs: the share mounted at /media/mydrive', () => {
    const [secret] = synth((c) => new CloudInitSecret(c, 'ci', { name: 'vm-1', labels: {}, publicKeys: [], nfs: { server: 'nfs.example', path: '/export/x' } }));
    expect(userdata(secret).mounts).toEqual([['nfs.example:/export/x', '/media/mydrive', 'nfs', 'rw,tcp,hard,intr,rsize=8192,wsize=8192,timeo=14', '0', '0']]);
  });
});
