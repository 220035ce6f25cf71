import { Testing } from 'cdk8s';
import { describe, expect, it } from 'vitest';
import { BastionChart } from '../../../constructs/bastion/bastion-chart.ts';
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Any = any;

const chart = new BastionChart(Testing.app(), 'bastion', { sshdImage: 'crownlabs/ssh-bastion:v1', composerImage: 'crownlabs/composer:v1' });
const objects = chart.toJson() as Any[];
const get = (kind: string) => objects.find((o) => o.kind === kind);
const pod = get('Deployment').spec.template.spec;
const container = (name: string) => pod.containers.find((c: Any) => c.name === name);

describe('§2.3 / §12 bastion objects', () => {
  it('renders ServiceAccount, ClusterRole, ClusterRoleBinding, Deployment and Service named ssh-bastion in crownlabs-bastion', () => {
    expect(objects.map((o) => `${o.kind}/${o.metadata.namespace ?? ''}/${o.metadata.name}`)).toEqual([
      'ServiceAccount/crownlabs-bastion/ssh-bastion',
      'ClusterRole//ssh-bastion',
      'ClusterRoleBinding//ssh-bastion',
      'Deployment/crownlabs-bastion/ssh-bastion',
      'Service/crownlabs-bastion/ssh-bastion',
    ]);
  });
  it('the ClusterRole grants tenants get/list/watch and nothing else, bound to the ServiceAccount the pod runs as', () => {
    expect(get('ClusterRole').rules).toEqual([{ apiGroups: ['crownlabs.polito.it'], resources: ['tenants'], verbs: ['get', 'list', 'watch'] }]);
    expect(get('ClusterRoleBinding').roleRef).toEqual({ apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'ssh-bastion' });
    expect(get('ClusterRoleBinding').subjects).toEqual([{ kind: 'ServiceAccount', name: 'ssh-bastion', namespace: 'crownlabs-bastion' }]);
    expect(pod.serviceAccountName).toBe('ssh-bastion');
  });
  it('the LoadBalancer Service exposes port 22 to sshd\'s 2222', () => {
    const svc = get('Service');
    expect(svc.spec.type).toBe('LoadBalancer');
    expect(svc.spec.ports).toEqual([{ name: 'ssh', port: 22, targetPort: 2222, protocol: 'TCP' }]);
    expect(svc.spec.selector).toEqual(get('Deployment').spec.selector.matchLabels);
  });
});

describe('§2.3 sshd and the keys sidecar share an emptyDir', () => {
  it('sshd listens on 2222, mounts the emptyDir at /home/bastion/.ssh and the host keys Secret at /host-keys', () => {
    const sshd = container('sshd');
    expect(sshd.image).toBe('crownlabs/ssh-bastion:v1');
    expect(sshd.ports).toEqual([{ name: 'ssh', containerPort: 2222, protocol: 'TCP' }]);
    expect(sshd.volumeMounts).toEqual([
      { name: 'authorized-keys', mountPath: '/home/bastion/.ssh' },
      { name: 'host-keys', mountPath: '/host-keys', readOnly: true },
    ]);
    expect(pod.volumes).toEqual([
      { name: 'authorized-keys', emptyDir: {} },
      { name: 'host-keys', secret: { secretName: 'ssh-bastion-host-keys', defaultMode: 0o400 } },
    ]);
  });
  it('the keys sidecar runs `crownlabs bastion-keys` on /auth-keys-vol/authorized_keys, with no capabilities', () => {
    const keys = container('bastion-keys');
    expect(keys.image).toBe('crownlabs/composer:v1');
    expect(keys.args).toEqual(['bastion-keys']);
    expect(keys.env).toEqual([{ name: 'AUTHORIZED_KEYS_PATH', value: '/auth-keys-vol/authorized_keys' }]);
    expect(keys.volumeMounts).toEqual([{ name: 'authorized-keys', mountPath: '/auth-keys-vol' }]);
    expect(keys.securityContext.capabilities).toEqual({ drop: ['ALL'] });
  });
});

describe('§15.4 the SSH tracker sidecar', () => {
  const tracker = container('ssh-tracker');
  it('runs `crownlabs ssh-tracker --metrics-addr :9090` with the bastion_ssh_connections counter', () => {
    expect(tracker.args).toEqual(['ssh-tracker', '--metrics-addr', ':9090', '--ssh-tracker-metric-name', 'bastion_ssh_connections']);
    expect(tracker.ports).toEqual([{ name: 'metrics', containerPort: 9090, protocol: 'TCP' }]);
  });
  it('adds only NET_RAW and NET_ADMIN and drops ALL other capabilities, no privilege escalation', () => {
    expect(tracker.securityContext).toEqual({ allowPrivilegeEscalation: false, capabilities: { add: ['NET_RAW', 'NET_ADMIN'], drop: ['ALL'] } });
    expect(tracker.securityContext.privileged).toBeUndefined();
  });
  it('is live and ready only while /healthz says the capture runs', () => {
    expect(tracker.livenessProbe.httpGet).toEqual({ path: '/healthz', port: 'metrics' });
    expect(tracker.readinessProbe.httpGet).toEqual({ path: '/healthz', port: 'metrics' });
  });
  it('shares the pod network namespace with sshd (no hostNetwork): it sees the connections sshd opens', () => {
    expect(pod.hostNetwork).toBeUndefined();
    expect(pod.containers.map((c: Any) => c.name)).toEqual(['sshd', 'bastion-keys', 'ssh-tracker']);
  });
});
