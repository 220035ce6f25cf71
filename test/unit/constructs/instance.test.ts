import { describe, expect, it } from 'vitest';
import { cloudInitUserData } from '../../../constructs/instance/cloud-init.ts';
import { compose, renderAll } from '../../../src/compose/compose.ts';
import { validateRenderedSets } from '../../../src/validate/validator.ts';
import { inventoryFrom, lab, render, TEST_SEED, testConfig } from '../../support/lab.ts';

const UID = '00000000-0000-4000-8000-000000000001';
const N = 'inst-one';
const NS = 'tenant-john-doe';
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Any = any;

const OBJECT_LABELS = {
  'crownlabs.polito.it/managed-by': 'instance',
  'crownlabs.polito.it/instance': 'inst.one',
  'crownlabs.polito.it/template': 'tmpl',
  'crownlabs.polito.it/tenant': 'john.doe',
};
const SELECTOR_LABELS = {
  'crownlabs.polito.it/instance': 'inst.one',
  'crownlabs.polito.it/template': 'tmpl',
  'crownlabs.polito.it/tenant': 'john.doe',
};

function decode(secret: Any, key: string): string {
  return Buffer.from(secret.data[key], 'base64').toString('utf8');
}

describe('§0.5 labels and §0.2 names of instance children', () => {
  const r = render(lab({ env: { environmentType: 'VirtualMachine' } }));
  it('names every child canon(instance) in the Instance namespace', () => {
    const instanceObjects = r.objects.filter((o) => o.metadata.labels?.['crownlabs.polito.it/instance'] === 'inst.one');
    expect(instanceObjects.map((o) => `${o.kind}/${o.metadata.namespace}/${o.metadata.name}`).sort()).toEqual([
      `Ingress/${NS}/${N}-gui`,
      `Secret/${NS}/${N}`,
      `Service/${NS}/${N}`,
      `VirtualMachineInstance/${NS}/${N}`,
    ]);
  });
  it('puts the instance object labels on every child and the selector labels on the VMI template', () => {
    for (const o of r.objects.filter((x) => x.metadata.namespace === NS && x.metadata.name.startsWith(N))) {
      expect(o.metadata.labels).toMatchObject(OBJECT_LABELS);
      expect(o.metadata.labels).toMatchObject({ 'app.kubernetes.io/managed-by': 'crownlabs-composer', 'composer.crownlabs.polito.it/parent-kind': 'Instance' });
      expect(o.metadata.annotations).toMatchObject({ 'composer.crownlabs.polito.it/parent': `Instance/${NS}/inst.one` });
    }
    expect((r.get('Service', N) as Any).spec.selector).toEqual(SELECTOR_LABELS);
  });
});

describe('§7.3 exposition', () => {
  it('a GUI VM gets Service ports ssh 22 and gui 6080 and Ingress -gui at /instance/<uid>/vnc', () => {
    const r = render(lab({ env: { environmentType: 'VirtualMachine' } }));
    const svc = r.get('Service', N) as Any;
    expect(svc.spec.type).toBe('ClusterIP');
    expect(svc.spec.ports).toEqual([
      { name: 'ssh', port: 22, protocol: 'TCP', targetPort: 22 },
      { name: 'gui', port: 6080, protocol: 'TCP', targetPort: 6080 },
    ]);
    const ing = r.get('Ingress', `${N}-gui`) as Any;
    expect(ing.spec.tls).toEqual([{ hosts: ['crownlabs.polito.it'], secretName: 'crownlabs-ingress-secret' }]);
    expect(ing.spec.ingressClassName).toBeUndefined();
    expect(ing.spec.rules[0].host).toBe('crownlabs.polito.it');
    expect(ing.spec.rules[0].http.paths).toEqual([
      { path: `/instance/${UID}/vnc`, pathType: 'Prefix', backend: { service: { name: N, port: { name: 'gui' } } } },
    ]);
    expect(ing.metadata.annotations['nginx.ingress.kubernetes.io/proxy-read-timeout']).toBe('3600');
    expect(ing.metadata.annotations['nginx.ingress.kubernetes.io/proxy-send-timeout']).toBe('3600');
  });

  it('a gui-less VM gets only the ssh port and no Ingress', () => {
    const r = render(lab({ env: { environmentType: 'CloudVM', guiEnabled: false, persistent: true, resources: { cpu: 1, reservedCPUPercentage: 100, memory: '1Gi', disk: '10Gi' } } }));
    expect((r.get('Service', N) as Any).spec.ports.map((p: Any) => p.name)).toEqual(['ssh']);
    expect(r.objects.filter((o) => o.kind === 'Ingress')).toEqual([]);
  });

  it('a Container gets gui, mydrive and metrics ports, the metrics-enabled label and -gui at /app', () => {
    const r = render(lab({ env: { environmentType: 'Container' } }));
    const svc = r.get('Service', N) as Any;
    expect(svc.spec.ports.map((p: Any) => [p.name, p.port])).toEqual([['gui', 6080], ['mydrive', 8080], ['metrics', 9090]]);
    expect(svc.metadata.labels['crownlabs.polito.it/metrics-enabled']).toBe('true');
    expect((r.get('Ingress', `${N}-gui`) as Any).spec.rules[0].http.paths[0].path).toBe(`/instance/${UID}/app`);
  });

  it('a Standalone with rewriteURL gets -app at app(/|$)(.*) with rewrite-target /$2; without it, plain /app', () => {
    const rw = render(lab({ env: { environmentType: 'Standalone', rewriteURL: true } }));
    const ing = rw.get('Ingress', `${N}-app`) as Any;
    expect(ing.spec.rules[0].http.paths[0].path).toBe(`/instance/${UID}/app(/|$)(.*)`);
    expect(ing.metadata.annotations['nginx.ingress.kubernetes.io/rewrite-target']).toBe('/$2');
    expect((rw.get('Service', N) as Any).spec.ports.map((p: Any) => p.name)).toEqual(['gui', 'mydrive']);
    const plain = render(lab({ env: { environmentType: 'Standalone' } }));
    const ing2 = plain.get('Ingress', `${N}-app`) as Any;
    expect(ing2.spec.rules[0].http.paths[0].path).toBe(`/instance/${UID}/app`);
    expect(ing2.metadata.annotations['nginx.ingress.kubernetes.io/rewrite-target']).toBeUndefined();
  });

  it('Exam and Exercise modes use exam./exercise. hosts, no mydrive port and no auth annotations', () => {
    const cfg = testConfig({ instancesAuthUrl: 'https://auth.example' });
    const exam = render(lab({ env: { environmentType: 'Container', mode: 'Exam', mountMyDriveVolume: false } }), cfg);
    const ing = exam.get('Ingress', `${N}-gui`) as Any;
    expect(ing.spec.rules[0].host).toBe('exam.crownlabs.polito.it');
    expect(ing.spec.tls[0].hosts).toEqual(['exam.crownlabs.polito.it']);
    expect(ing.metadata.annotations['nginx.ingress.kubernetes.io/auth-url']).toBeUndefined();
    expect((exam.get('Service', N) as Any).spec.ports.map((p: Any) => p.name)).toEqual(['gui', 'metrics']);
    const exercise = render(lab({ env: { environmentType: 'Container', mode: 'Exercise', mountMyDriveVolume: false } }), cfg);
    expect((exercise.get('Ingress', `${N}-gui`) as Any).spec.rules[0].host).toBe('exercise.crownlabs.polito.it');
  });

  it('a Standalone without GUI in Exam or Exercise mode has no port: no Service, no Ingress, and what is rendered validates', () => {
    for (const mode of ['Exam', 'Exercise']) {
      const r = render(lab({ env: { environmentType: 'Standalone', mode, guiEnabled: false, mountMyDriveVolume: false } }));
      expect(r.find('Service', N), mode).toBeUndefined();
      expect(r.objects.filter((o) => o.kind === 'Ingress'), mode).toEqual([]);
      expect(r.get('Deployment', N).kind).toBe('Deployment');
      expect(validateRenderedSets(r.sets).problems.filter((p) => p.severity === 'error'), mode).toEqual([]);
    }
    // In mode Standard the mydrive port remains, and so does the Service.
    const standard = render(lab({ env: { environmentType: 'Standalone', guiEnabled: false } }));
    expect((standard.get('Service', N) as Any).spec.ports.map((p: Any) => p.name)).toEqual(['mydrive']);
  });

  it('shared auth mode adds nginx external-auth annotations in Standard mode', () => {
    const r = render(lab({ env: { environmentType: 'VirtualMachine' } }), testConfig({ instancesAuthUrl: 'https://auth.example' }));
    expect((r.get('Ingress', `${N}-gui`) as Any).metadata.annotations).toMatchObject({
      'nginx.ingress.kubernetes.io/auth-url': 'https://auth.example/auth',
      'nginx.ingress.kubernetes.io/auth-signin': 'https://auth.example/start?rd=$escaped_request_uri',
    });
  });

  it('uses the configured website base URL as host', () => {
    const r = render(lab({ env: { environmentType: 'VirtualMachine' } }), testConfig({ websiteBaseUrl: 'labs.example.org' }));
    expect((r.get('Ingress', `${N}-gui`) as Any).spec.rules[0].host).toBe('labs.example.org');
  });
});

describe('Decision 2: per-instance oauth2-proxy', () => {
  const cfg = testConfig({ authMode: 'per-instance', oidcClientSecret: 's3cret' });
  const r = render(lab({ env: { environmentType: 'Container' } }), cfg);
  it('routes the GUI Ingress to the proxy Service and not straight to the instance', () => {
    const ing = r.get('Ingress', `${N}-gui`) as Any;
    expect(ing.spec.rules[0].http.paths[0].backend).toEqual({ service: { name: `${N}-oauth2-proxy`, port: { name: 'http' } } });
    expect(ing.metadata.annotations['nginx.ingress.kubernetes.io/auth-url']).toBeUndefined();
  });
  it('admits only the owner and the workspace managers, by e-mail (lower-cased)', () => {
    const cm = r.get('ConfigMap', `${N}-oauth2-proxy`) as Any;
    expect(cm.data['authenticated-emails']).toBe('john@example.com\nmary@example.com\n');
    const dep = r.get('Deployment', `${N}-oauth2-proxy`) as Any;
    const args: string[] = dep.spec.template.spec.containers[0].args;
    expect(args).toContain('--authenticated-emails-file=/etc/oauth2-proxy/authenticated-emails');
    expect(args).toContain(`--upstream=http://${N}.${NS}.svc:6080/`);
    expect(args).toContain(`--proxy-prefix=/instance/${UID}/oauth2`);
    expect(args.some((a) => a.startsWith('--email-domain'))).toBe(false);
  });
  it('does not let the instance Service select the proxy pods', () => {
    const dep = r.get('Deployment', `${N}-oauth2-proxy`) as Any;
    const podLabels = dep.spec.template.metadata.labels;
    const selector = (r.get('Service', N) as Any).spec.selector;
    const selected = Object.entries(selector).every(([k, v]) => podLabels[k] === v);
    expect(selected).toBe(false);
    expect((r.get('Service', `${N}-oauth2-proxy`) as Any).spec.selector).toEqual(dep.spec.selector.matchLabels);
  });
  it('derives the cookie secret from the seed and UID, 32 characters, stable', () => {
    const s = r.get('Secret', `${N}-oauth2-proxy`) as Any;
    expect(s.stringData['cookie-secret']).toMatch(/^[0-9a-f]{32}$/);
    expect(s.stringData['client-secret']).toBe('s3cret');
    const again = render(lab({ env: { environmentType: 'Container' } }), cfg).get('Secret', `${N}-oauth2-proxy`) as Any;
    expect(again.stringData['cookie-secret']).toBe(s.stringData['cookie-secret']);
    // Another seed, another secret: the seed is the only secret input (UIDs are public).
    const other = render(lab({ env: { environmentType: 'Container' } }), { ...cfg, cookieSecretSeed: `${TEST_SEED}-rotated` }).get('Secret', `${N}-oauth2-proxy`) as Any;
    expect(other.stringData['cookie-secret']).not.toBe(s.stringData['cookie-secret']);
  });
  it('refuses to render without a seed: no Instance set, an error naming the environment variable (#14.9)', () => {
    const composition = compose(inventoryFrom(lab({ env: { environmentType: 'Container' } })), { ...cfg, cookieSecretSeed: '' });
    expect(composition.units.filter((u) => u.parent.kind === 'Instance')).toEqual([]);
    const errors = composition.problems.filter((p) => p.severity === 'error');
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatchObject({ field: 'cookieSecretSeed', file: 'environment CROWNLABS_COOKIE_SECRET_SEED' });
    // Where Secret values are never written (the gitops tree), no seed is needed and none is derived.
    const gitops = compose(inventoryFrom(lab({ env: { environmentType: 'Container' } })), { ...cfg, cookieSecretSeed: '' }, { secretValues: false });
    expect(gitops.problems.filter((p) => p.severity === 'error')).toEqual([]);
    const secret = renderAll(gitops).flatMap((s) => s.objects).find((o) => o.kind === 'Secret' && o.metadata.name === `${N}-oauth2-proxy`) as Any;
    expect(secret.stringData['cookie-secret']).toBe('');
  });
});

describe('§7.4 virtual machines', () => {
  it('an ephemeral VM is a VMI with containerDisk, the §13 resources and a cloud-init volume', () => {
    const r = render(lab({ env: { environmentType: 'VirtualMachine', image: 'registry.crownlabs.example.com/tea/green:finest' } }));
    const vmi = r.get('VirtualMachineInstance', N) as Any;
    expect(vmi.apiVersion).toBe('kubevirt.io/v1');
    expect(vmi.spec.domain.cpu).toEqual({ cores: 2 });
    expect(vmi.spec.domain.memory).toEqual({ guest: '2G' });
    expect(vmi.spec.domain.resources).toEqual({ requests: { cpu: '500m', memory: '2500M' }, limits: { cpu: '2500m', memory: '2500M' } });
    expect(vmi.spec.domain.devices).toEqual({
      disks: [
        { name: 'root', disk: { bus: 'virtio' } },
        { name: 'cloud-init', disk: { bus: 'virtio' } },
      ],
      interfaces: [{ name: 'default', bridge: {} }],
    });
    expect(vmi.spec.networks).toEqual([{ name: 'default', pod: {} }]);
    expect(vmi.spec.volumes).toEqual([
      { name: 'root', containerDisk: { image: 'registry.crownlabs.example.com/tea/green:finest', imagePullSecret: 'registry-credentials', imagePullPolicy: 'IfNotPresent' } },
      { name: 'cloud-init', cloudInitNoCloud: { secretRef: { name: N } } },
    ]);
    expect(vmi.spec.readinessProbe).toEqual({ tcpSocket: { port: 6080 }, initialDelaySeconds: 10, periodSeconds: 2, failureThreshold: 5, successThreshold: 2 });
    expect(vmi.spec.terminationGracePeriodSeconds).toBe(60);
    expect(vmi.metadata.labels).toMatchObject(OBJECT_LABELS);
  });

  it('a binary memory plus the decimal overhead is printed in plain bytes (§14.8)', () => {
    const r = render(lab({ env: { environmentType: 'VirtualMachine', resources: { cpu: 4, reservedCPUPercentage: 50, memory: '2Gi' } } }));
    const vmi = r.get('VirtualMachineInstance', N) as Any;
    expect(vmi.spec.domain.resources.requests).toEqual({ cpu: '2', memory: '2647483648' });
    expect(vmi.spec.domain.resources.limits).toEqual({ cpu: '4500m', memory: '2647483648' });
    expect(vmi.spec.domain.memory.guest).toBe('2Gi');
  });

  it('a gui-less VM probes ssh', () => {
    const r = render(lab({ env: { environmentType: 'VirtualMachine', guiEnabled: false } }));
    expect((r.get('VirtualMachineInstance', N) as Any).spec.readinessProbe.tcpSocket).toEqual({ port: 22 });
  });

  it('a persistent VM is a VirtualMachine with a registry DataVolume sized by resources.disk', () => {
    const r = render(lab({ env: { environmentType: 'VirtualMachine', persistent: true, image: 'reg/x:1', resources: { cpu: 2, reservedCPUPercentage: 25, memory: '2G', disk: '20Gi' } } }));
    const vm = r.get('VirtualMachine', N) as Any;
    expect(vm.spec.running).toBe(true);
    expect(vm.spec.dataVolumeTemplates).toEqual([
      {
        metadata: { name: N },
        spec: {
          source: { registry: { url: 'docker://reg/x:1', secretRef: 'registry-credentials-cdi' } },
          pvc: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '20Gi' } } },
        },
      },
    ]);
    expect(vm.spec.dataVolumeTemplates[0].spec.pvc.storageClassName).toBeUndefined();
    expect(vm.spec.template.metadata.labels).toEqual(SELECTOR_LABELS);
    expect(vm.spec.template.spec.volumes[0]).toEqual({ name: 'root', dataVolume: { name: N } });
    // The template carries the full VMI spec: resources, guest memory, probe.
    expect(vm.spec.template.spec.domain.cpu).toEqual({ cores: 2 });
    expect(vm.spec.template.spec.domain.memory).toEqual({ guest: '2G' });
    expect(vm.spec.template.spec.domain.resources).toEqual({ requests: { cpu: '500m', memory: '2500M' }, limits: { cpu: '2500m', memory: '2500M' } });
    expect(vm.spec.template.spec.readinessProbe.tcpSocket).toEqual({ port: 6080 });
    expect(vm.spec.template.spec.volumes[1]).toEqual({ name: 'cloud-init', cloudInitNoCloud: { secretRef: { name: N } } });
    expect(r.find('VirtualMachineInstance', N)).toBeUndefined();
  });

  it('a CloudVM imports its disk over http', () => {
    const r = render(lab({ env: { environmentType: 'CloudVM', persistent: true, image: 'https://img.example/d.qcow2', resources: { cpu: 1, reservedCPUPercentage: 100, memory: '1Gi', disk: '10Gi' } } }));
    expect((r.get('VirtualMachine', N) as Any).spec.dataVolumeTemplates[0].spec.source).toEqual({ http: { url: 'https://img.example/d.qcow2' } });
  });

  it('a non-Standard VM has neither cloud-init disk nor Secret', () => {
    const r = render(lab({ env: { environmentType: 'VirtualMachine', mode: 'Exam' } }));
    const vmi = r.get('VirtualMachineInstance', N) as Any;
    expect(vmi.spec.domain.devices.disks.map((d: Any) => d.name)).toEqual(['root']);
    expect(vmi.spec.volumes.map((v: Any) => v.name)).toEqual(['root']);
    expect(r.find('Secret', N)).toBeUndefined();
  });
});

describe('§7.4 cloud-init', () => {
  it('holds the owner keys then the managers keys, and the MyDrive NFS mount', () => {
    const r = render(lab({ env: { environmentType: 'VirtualMachine' } }));
    const userdata = decode(r.get('Secret', N), 'userdata');
    expect(userdata).toBe(cloudInitUserData(['ssh-ed25519 AAAAjohn john@pc', 'ssh-rsa AAAAmary mary@pc'], { server: 'nfs.example', path: '/export/john-doe-drive' }));
    expect(userdata).toContain('    - - nfs.example:/export/john-doe-drive\n      - /media/mydrive\n      - nfs\n');
  });

  it('leaves out managers the Tenant webhooks never admitted (no target label, or service-tenant\'s blanked one)', () => {
    const unseen = (name: string, labels: string) => `---
apiVersion: crownlabs.polito.it/v1alpha2
kind: Tenant
metadata:
  name: ${name}
${labels}
spec:
  firstName: X
  lastName: Y
  email: ${name}@evil.example
  workspaces: [{ name: tea, role: manager }]
  publicKeys: ['ssh-ed25519 AAAA${name} ${name}@evil']
`;
    const cfg = testConfig({ authMode: 'per-instance', oidcClientSecret: 's3cret' });
    const extra = unseen('service-tenant', "  labels: { 'crownlabs.polito.it/operator-selector': '' }") + unseen('no-label', '');
    const vm = render(lab({ env: { environmentType: 'VirtualMachine' }, extra }), cfg);
    expect(decode(vm.get('Secret', N), 'userdata')).not.toMatch(/evil/);
    expect(decode(vm.get('Secret', N), 'userdata')).toContain('ssh-rsa AAAAmary mary@pc');
    const gui = render(lab({ env: { environmentType: 'Container' }, extra }), cfg);
    expect((gui.get('ConfigMap', `${N}-oauth2-proxy`) as Any).data['authenticated-emails']).toBe('john@example.com\nmary@example.com\n');
  });

  it('is laid out as upstream prints it', () => {
    expect(cloudInitUserData(['k1 a', 'k2 b'], { server: 's', path: '/p' })).toBe(
      [
        '#cloud-config',
        'users:',
        '    - name: crownlabs',
        '      lock_passwd: false',
        '      passwd: $6$rounds=4096$tBS1sNBpnw6feehB$lS9b7VKH6WMAFOB0SrHCgjD2BKs9CegDe51EiMRWbxQeCVnoGL4u0jNaRsYhvVoBFaRlXZkNsxfFhXvCBaNeQ.',
        '      sudo: ALL=(ALL) NOPASSWD:ALL',
        '      ssh_authorized_keys:',
        '        - k1 a',
        '        - k2 b',
        '      shell: /bin/bash',
        'network:',
        '    version: 2',
        '    id0:',
        '        dhcp4: true',
        'mounts:',
        '    - - s:/p',
        '      - /media/mydrive',
        '      - nfs',
        '      - rw,tcp,hard,intr,rsize=8192,wsize=8192,timeo=14',
        '      - "0"',
        '      - "0"',
        'ssh_authorized_keys:',
        '    - k1 a',
        '    - k2 b',
        '',
      ].join('\n'),
    );
  });

  it('omits both key lists without keys and writes mounts: [] without MyDrive', () => {
    const text = cloudInitUserData([], undefined);
    expect(text).not.toContain('ssh_authorized_keys');
    expect(text).toContain('\nmounts: []\n');
  });

  it('an instance that needs MyDrive without a known share is an error naming the Secret', () => {
    const r = render(lab({ env: { environmentType: 'VirtualMachine' } }), testConfig({ mydriveNfsServerName: '' }));
    expect(r.find('VirtualMachineInstance', N)).toBeUndefined();
    expect(r.problems.filter((p) => p.severity === 'error').map((p) => p.message).join()).toMatch(/mydrive-info/);
  });

  it('takes the owner share from the same source as the tenant set (the controller: the bound PV)', () => {
    const inv = inventoryFrom(lab({ env: { environmentType: 'VirtualMachine' } }));
    const unbound = compose(inv, testConfig(), { myDriveShare: () => undefined });
    expect(unbound.units.some((u) => u.parent.kind === 'Instance')).toBe(false);
    expect(unbound.problems.some((p) => p.severity === 'error' && /mydrive-info/.test(p.message))).toBe(true);
    const bound = compose(inv, testConfig({ mydriveNfsServerName: '' }), { myDriveShare: () => ({ server: 'pv.server.cluster', path: '/pv/share' }) });
    const objects = renderAll(bound).flatMap((s) => s.objects);
    expect(decode(objects.find((o) => o.kind === 'Secret' && o.metadata.name === N), 'userdata')).toContain('    - - pv.server.cluster:/pv/share\n');
  });

  it('reads the share from a given mydrive-info Secret', () => {
    const secret = JSON.stringify({
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'mydrive-info', namespace: NS },
      data: { 'server-name': Buffer.from('srv.cluster').toString('base64'), path: Buffer.from('/share/7').toString('base64') },
    });
    const r = render(lab({ env: { environmentType: 'VirtualMachine' }, extra: secret }), testConfig({ mydriveNfsServerName: '' }));
    expect(decode(r.get('Secret', N), 'userdata')).toContain('    - - srv.cluster:/share/7\n');
    expect(r.find('Secret', 'mydrive-info')).toBeUndefined();
  });
});

describe('§7.5 containers', () => {
  it('a Container runs websockify, xvnc and the app with the exact args, resources and probes', () => {
    const r = render(lab({ env: { name: 'desk', environmentType: 'Container', resources: { cpu: 4, reservedCPUPercentage: 50, memory: '2G' } } }));
    const dep = r.get('Deployment', N) as Any;
    expect(dep.spec.replicas).toBe(1);
    expect(dep.spec.strategy).toEqual({ type: 'Recreate' });
    expect(dep.spec.selector.matchLabels).toEqual(SELECTOR_LABELS);
    const pod = dep.spec.template.spec;
    expect(pod.securityContext).toEqual({ runAsUser: 1010, runAsGroup: 1010, fsGroup: 1010, runAsNonRoot: true });
    expect(pod.automountServiceAccountToken).toBe(false);
    expect(pod.terminationGracePeriodSeconds).toBe(10);
    expect(pod.enableServiceLinks).toBe(false);
    expect(pod.hostname).toBeUndefined();
    expect(pod.containers.map((c: Any) => c.name)).toEqual(['websockify', 'xvnc', 'desk']);
    const [ws, xvnc, app] = pod.containers;
    expect(ws.image).toBe('crownlabs/websockify:latest');
    expect(ws.args).toEqual([
      '--http-addr=:6080',
      `--base-path=/instance/${UID}/app`,
      '--metrics-addr=:9090',
      '--show-controls=true',
      '--instmetrics-server-endpoint=instmetrics:9090',
      '--pod-name=$(POD_NAME)',
      '--cpu-limit=$(APP_CPU_LIMITS)',
      '--memory-limit=$(APP_MEM_LIMITS)',
    ]);
    expect(ws.env[1]).toEqual({ name: 'APP_CPU_LIMITS', valueFrom: { resourceFieldRef: { containerName: 'desk', resource: 'limits.cpu', divisor: '1m' } } });
    expect(ws.resources).toEqual({ requests: { cpu: '10m', memory: '30Mi' }, limits: { cpu: '100m', memory: '100Mi' } });
    expect(ws.readinessProbe).toEqual({ httpGet: { port: 'gui', path: '/healthz' }, initialDelaySeconds: 10, periodSeconds: 2, successThreshold: 2, failureThreshold: 5 });
    expect(xvnc.image).toBe('crownlabs/tigervnc:latest');
    expect(xvnc.ports).toEqual([{ name: 'xvnc', containerPort: 5900, protocol: 'TCP' }]);
    expect(xvnc.resources).toEqual({ requests: { cpu: '50m', memory: '200Mi' }, limits: { cpu: '250m', memory: '600Mi' } });
    expect(app.resources).toEqual({ requests: { cpu: '2', memory: '2G' }, limits: { cpu: '4', memory: '2G' } });
    expect(app.securityContext).toEqual({ capabilities: { drop: ['ALL'] }, privileged: false, allowPrivilegeEscalation: false });
    expect(app.volumeMounts).toEqual([
      { name: 'persistent', mountPath: '/media/data' },
      { name: 'mydrive', mountPath: '/media/mydrive' },
    ]);
    expect(pod.volumes).toEqual([
      { name: 'persistent', emptyDir: {} },
      { name: 'mydrive', nfs: { server: 'nfs.example', path: '/export/john-doe-drive' } },
    ]);
  });

  it('reproduces the §13 Standalone example', () => {
    const r = render(
      lab({
        env: {
          name: 'vscode-environment',
          environmentType: 'Standalone',
          rewriteURL: true,
          resources: { cpu: 2, reservedCPUPercentage: 25, memory: '2G' },
          containerStartupOptions: { contentPath: '/config/workspace', startupArgs: ['--disable-marketplace'] },
        },
      }),
    );
    const pod = (r.get('Deployment', N) as Any).spec.template.spec;
    expect(pod.containers).toHaveLength(1);
    const app = pod.containers[0];
    expect(app.name).toBe('vscode-environment');
    expect(app.resources).toEqual({ requests: { cpu: '500m', memory: '2G' }, limits: { cpu: '2', memory: '2G' } });
    expect(app.volumeMounts).toEqual([
      { name: 'persistent', mountPath: '/config/workspace' },
      { name: 'mydrive', mountPath: '/media/mydrive' },
    ]);
    expect(app.args).toEqual(['--disable-marketplace']);
    expect(app.workingDir).toBeUndefined();
    expect(app.readinessProbe.httpGet).toEqual({ port: 'gui', path: '/' });
    expect(app.env.map((e: Any) => e.name)).toEqual(['CROWNLABS_CPU_REQUESTS', 'CROWNLABS_CPU_LIMITS', 'CROWNLABS_BASE_PATH', 'CROWNLABS_LISTEN_PORT']);
    // As upstream's forge (the app container's own name, divisor 0): a differing pod template
    // would roll every Deployment on an upgrade from the Go operators.
    expect(app.env.slice(0, 2)).toEqual([
      { name: 'CROWNLABS_CPU_REQUESTS', valueFrom: { resourceFieldRef: { containerName: 'vscode-environment', resource: 'requests.cpu', divisor: '0' } } },
      { name: 'CROWNLABS_CPU_LIMITS', valueFrom: { resourceFieldRef: { containerName: 'vscode-environment', resource: 'limits.cpu', divisor: '0' } } },
    ]);
    expect(app.env[2].value).toBe(`/instance/${UID}/app`);
    expect(app.ports).toEqual([{ name: 'gui', containerPort: 6080, protocol: 'TCP' }]);
  });

  it('a Standalone without rewrite probes its base path; enforceWorkdir sets workingDir', () => {
    const r = render(lab({ env: { environmentType: 'Standalone', containerStartupOptions: { enforceWorkdir: true } } }));
    const app = (r.get('Deployment', N) as Any).spec.template.spec.containers[0];
    expect(app.readinessProbe.httpGet.path).toBe(`/instance/${UID}/app`);
    expect(app.workingDir).toBe('/media/data');
  });

  it('adds the content-downloader, the Instance contentOrigin winning over the archive', () => {
    const r = render(
      lab({
        env: { environmentType: 'Container', containerStartupOptions: { sourceArchiveURL: 'https://t/archive.tgz' } },
        instance: { customizationUrls: { contentOrigin: 'https://i/origin.tgz' } },
      }),
    );
    const init = (r.get('Deployment', N) as Any).spec.template.spec.initContainers;
    expect(init).toHaveLength(1);
    expect(init[0].name).toBe('content-downloader');
    expect(init[0].image).toBe('crownlabs/content-downloader:latest');
    expect(init[0].env).toEqual([
      { name: 'SOURCE_ARCHIVE', value: 'https://i/origin.tgz' },
      { name: 'DESTINATION_PATH', value: '/media/data' },
    ]);
    expect(init[0].resources).toEqual({ requests: { cpu: '500m', memory: '256Mi' }, limits: { cpu: '1', memory: '1Gi' } });
  });

  it('a persistent container gets PVC N with the storage class and disk', () => {
    const r = render(lab({ env: { environmentType: 'Container', persistent: true, storageClassName: 'fast', resources: { cpu: 1, reservedCPUPercentage: 50, memory: '1Gi', disk: '5Gi' } } }));
    const pvc = r.get('PersistentVolumeClaim', N) as Any;
    expect(pvc.spec).toEqual({ accessModes: ['ReadWriteOnce'], storageClassName: 'fast', resources: { requests: { storage: '5Gi' } } });
    expect((r.get('Deployment', N) as Any).spec.template.spec.volumes[0]).toEqual({ name: 'persistent', persistentVolumeClaim: { claimName: N } });
  });

  it('Exam mode sets the pod hostname', () => {
    const r = render(lab({ env: { environmentType: 'Container', mode: 'Exam', mountMyDriveVolume: false } }));
    expect((r.get('Deployment', N) as Any).spec.template.spec.hostname).toBe('exam');
  });
});

describe('§7.6 running=false', () => {
  const stopped = { instance: { running: false } };
  const release = testConfig({ stoppedEphemeral: 'release' });
  const withDisk = { resources: { cpu: 1, reservedCPUPercentage: 50, memory: '1G', disk: '1G' } };
  it('removes Service and both kinds of Ingress, in either stoppedEphemeral mode', () => {
    for (const config of [testConfig(), release]) {
      for (const type of ['VirtualMachine', 'Container', 'Standalone']) {
        const r = render(lab({ env: { environmentType: type }, ...stopped }), config);
        expect(r.objects.filter((o) => o.kind === 'Service' || o.kind === 'Ingress')).toEqual([]);
      }
    }
  });
  it('a persistent VM keeps its VirtualMachine with running false, in either mode', () => {
    for (const config of [testConfig(), release]) {
      const r = render(lab({ env: { environmentType: 'VirtualMachine', persistent: true, ...withDisk }, ...stopped }), config);
      expect((r.get('VirtualMachine', N) as Any).spec.running).toBe(false);
    }
  });
  it('keep-running (the default, upstream): an ephemeral VM keeps its VMI, an ephemeral container its replica; a persistent container scales to zero', () => {
    const vm = render(lab({ env: { environmentType: 'VirtualMachine' }, ...stopped }));
    expect((vm.get('VirtualMachineInstance', N) as Any).spec).toEqual((render(lab({ env: { environmentType: 'VirtualMachine' } })).get('VirtualMachineInstance', N) as Any).spec);
    for (const type of ['Container', 'Standalone']) {
      expect((render(lab({ env: { environmentType: type }, ...stopped })).get('Deployment', N) as Any).spec.replicas).toBe(1);
      expect((render(lab({ env: { environmentType: type, persistent: true, ...withDisk }, ...stopped })).get('Deployment', N) as Any).spec.replicas).toBe(0);
    }
  });
  it('release: an ephemeral VM has no VMI, and containers, persistent or not, scale to zero', () => {
    const r = render(lab({ env: { environmentType: 'VirtualMachine' }, ...stopped }), release);
    expect(r.find('VirtualMachineInstance', N)).toBeUndefined();
    expect(r.find('Secret', N)).toBeDefined();
    for (const persistent of [true, false]) {
      const c = render(lab({ env: { environmentType: 'Container', persistent, ...withDisk }, ...stopped }), release);
      expect((c.get('Deployment', N) as Any).spec.replicas).toBe(0);
      expect(c.find('PersistentVolumeClaim', N) !== undefined).toBe(persistent);
    }
  });
  it('a running ephemeral Instance renders the same in either mode', () => {
    for (const type of ['VirtualMachine', 'Container']) {
      expect(render(lab({ env: { environmentType: type } }), release).objects).toEqual(render(lab({ env: { environmentType: type } })).objects);
    }
  });
});

describe('Decision 4: several environments', () => {
  const r = render(
    lab({
      env: [
        { name: 'desktop', environmentType: 'Container' },
        { name: 'vm', environmentType: 'VirtualMachine' },
      ],
    }),
  );
  it('names per-environment children <canon(instance)>-<env> and keeps one cloud-init Secret', () => {
    expect(r.get('Deployment', `${N}-desktop`)).toBeDefined();
    expect(r.get('VirtualMachineInstance', `${N}-vm`)).toBeDefined();
    expect(r.get('Service', `${N}-desktop`)).toBeDefined();
    expect(r.get('Ingress', `${N}-vm-gui`)).toBeDefined();
    expect(r.get('Secret', N)).toBeDefined();
    expect(r.find('Deployment', N)).toBeUndefined();
  });
  it('prefixes paths with the environment name', () => {
    expect((r.get('Ingress', `${N}-desktop-gui`) as Any).spec.rules[0].http.paths[0].path).toBe(`/instance/${UID}/desktop/app`);
    expect((r.get('Ingress', `${N}-vm-gui`) as Any).spec.rules[0].http.paths[0].path).toBe(`/instance/${UID}/vm/vnc`);
  });
});

describe('§0.6 namespace whitelist', () => {
  it('skips Instances in a known namespace lacking the labels, with a notice', () => {
    const ns = JSON.stringify({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS, labels: { other: 'x' } } });
    const r = render(lab({ env: { environmentType: 'Container' }, extra: ns }));
    expect(r.find('Deployment', N)).toBeUndefined();
    expect(r.problems.some((p) => p.severity === 'warning' && /whitelist/.test(p.message))).toBe(true);
  });
  it('admits Instances in the tenant namespaces we render (they carry the target label)', () => {
    const r = render(lab({ env: { environmentType: 'Container' } }));
    expect(r.find('Deployment', N)).toBeDefined();
  });
  it('an empty whitelist admits every namespace', () => {
    const ns = JSON.stringify({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } });
    const r = render(lab({ env: { environmentType: 'Container' }, extra: ns }), testConfig({ namespaceWhitelist: {} }));
    expect(r.find('Deployment', N)).toBeDefined();
  });
});
