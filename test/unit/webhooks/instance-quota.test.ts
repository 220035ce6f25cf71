import { describe, expect, it } from 'vitest';
import { TEMPLATE_REF, TENANT_REF, type Instance, type Template, type Tenant, type Workspace } from '../../../src/inputs/types.ts';
import type { AdmissionRequest } from '../../../src/webhooks/admission.ts';
import { NamespaceLock, validateInstanceQuota, type InstanceQuotaDeps, type QuotaReads } from '../../../src/webhooks/instance-quota.ts';
import { LEDGER_TTL_MS, type Ledger, type LedgerEntry, type LedgerStore } from '../../../src/webhooks/quota-ledger.ts';

const NS = 'tenant-ada';
const tenant = (spec: Partial<Tenant['spec']> = {}): Tenant =>
  ({
    apiVersion: 'crownlabs.polito.it/v1alpha2',
    kind: 'Tenant',
    metadata: { name: 'ada', uid: 'uid-ada' },
    spec: { firstName: 'A', lastName: 'L', email: 'a@x', workspaces: [{ name: 'os', role: 'user' }, { name: 'net', role: 'user' }], ...spec },
  }) as Tenant;
const workspace = (name: string, quota: Workspace['spec']['quota']): Workspace => ({ apiVersion: 'crownlabs.polito.it/v1alpha1', kind: 'Workspace', metadata: { name }, spec: { prettyName: name, quota } }) as Workspace;
const template = (namespace: string, name: string, resources: Record<string, unknown>): Template =>
  ({
    apiVersion: 'crownlabs.polito.it/v1alpha2',
    kind: 'Template',
    metadata: { name, namespace },
    spec: { prettyName: name, environmentList: [{ name: 'e', environmentType: 'Container', image: 'i', resources: { cpu: 1, memory: '1Gi', reservedCPUPercentage: 10, ...resources } }] },
  }) as unknown as Template;
const instance = (name: string, tmpl: { namespace?: string; name: string }, running = true): Instance => ({
  apiVersion: 'crownlabs.polito.it/v1alpha2',
  kind: 'Instance',
  metadata: { name, namespace: NS },
  spec: { running, [TEMPLATE_REF]: tmpl, [TENANT_REF]: { name: 'ada' } },
});

/** The objects the webhook reads, and a ledger with the API server's resourceVersion precondition. */
class World implements QuotaReads {
  templates = new Map<string, Template>();
  workspaces = new Map<string, Workspace>();
  tenants = new Map<string, Tenant>();
  instances: Instance[] = [];
  ledger = new Map<string, { entries: Map<string, LedgerEntry>; version: number }>();
  ledgerWrites = 0;

  constructor() {
    this.workspaces.set('os', workspace('os', { cpu: 4, memory: '8Gi', instances: 10 }));
    this.workspaces.set('net', workspace('net', { cpu: 20, memory: '20Gi', instances: 10, disk: '20Gi', otherResources: { 'nvidia.com/gpu': '1' } }));
    this.tenants.set('ada', tenant());
    for (const t of [
      template('workspace-os', 'small', { cpu: 1 }),
      template('workspace-os', 'big', { cpu: 3 }),
      template('workspace-net', 'vm', { cpu: 2, memory: '4Gi', disk: '10Gi' }),
      template('workspace-net', 'gpu', { cpu: 1, otherResources: { 'nvidia.com/gpu': '1' } }),
    ])
      this.templates.set(`${t.metadata.namespace}/${t.metadata.name}`, t);
  }
  async getTemplate(ns: string, name: string) {
    return this.templates.get(`${ns}/${name}`);
  }
  async listTemplates(ns: string) {
    return [...this.templates.values()].filter((t) => t.metadata.namespace === ns);
  }
  async listInstances(ns: string) {
    return this.instances.filter((i) => i.metadata.namespace === ns);
  }
  async getWorkspace(name: string) {
    return this.workspaces.get(name);
  }
  async getTenant(name: string) {
    return this.tenants.get(name);
  }
  store(opts: { forget?: boolean; delayMs?: () => number } = {}): LedgerStore {
    const pause = () => new Promise((r) => setTimeout(r, opts.delayMs?.() ?? 0));
    return {
      read: async (ns): Promise<Ledger> => {
        await pause();
        const l = this.ledger.get(ns);
        return l ? { entries: new Map(l.entries), version: String(l.version) } : { entries: new Map() };
      },
      write: async (ns, previous, entries) => {
        await pause();
        const l = this.ledger.get(ns);
        if (String(l?.version) !== String(previous.version)) return false;
        this.ledgerWrites++;
        if (!opts.forget) this.ledger.set(ns, { entries: new Map(entries), version: (l?.version ?? 0) + 1 });
        return true;
      },
    };
  }
}

function deps(world: World, more: Partial<InstanceQuotaDeps> = {}): InstanceQuotaDeps {
  return { bypassGroups: ['system:masters'], reads: world, ledger: world.store(), caps: { capCpu: '0', capMemory: '0', capInstances: 0 }, now: () => 1_000_000, lock: new NamespaceLock(), ...more };
}
const create = (i: Instance, extra: Partial<AdmissionRequest> = {}): AdmissionRequest => ({ uid: `u-${i.metadata.name}`, operation: 'CREATE', namespace: NS, name: i.metadata.name, userInfo: { username: 'ada' }, object: i, ...extra });
const update = (old: Instance, next: Instance): AdmissionRequest => ({ uid: 'u', operation: 'UPDATE', namespace: NS, name: next.metadata.name, userInfo: { username: 'ada' }, object: next, oldObject: old });

describe('the Instance quota webhook: a workspace quota on create and on resume', () => {
  it('admits an Instance that fits and refuses the one that does not, naming the workspace and the resource', async () => {
    const w = new World();
    w.instances.push(instance('a', { namespace: 'workspace-os', name: 'small' }));
    const d = deps(w);
    expect(await validateInstanceQuota(create(instance('b', { namespace: 'workspace-os', name: 'big' })), d)).toMatchObject({ allowed: true });
    w.instances.push(instance('b', { namespace: 'workspace-os', name: 'big' }));
    expect(await validateInstanceQuota(create(instance('c', { namespace: 'workspace-os', name: 'small' })), d)).toMatchObject({
      allowed: false,
      status: { code: 403, message: 'quota exceeded in workspace "os": CPU (5 > 4)' },
    });
  });

  it.each([
    ['Memory', 'vm', 5, 'quota exceeded in workspace "net": Memory (24Gi > 20Gi)'],
    ['Disk', 'vm', 2, 'quota exceeded in workspace "net": Disk (30Gi > 20Gi)'],
    ['an extended resource', 'gpu', 1, 'quota exceeded in workspace "net": nvidia.com/gpu (2 > 1)'],
  ])('refuses over the workspace quota of %s', async (_what, tmpl, running, message) => {
    const w = new World();
    for (let i = 0; i < running; i++) w.instances.push(instance(`r${i}`, { namespace: 'workspace-net', name: tmpl }));
    const r = await validateInstanceQuota(create(instance('new', { namespace: 'workspace-net', name: tmpl })), deps(w));
    expect(r).toMatchObject({ allowed: false, status: { message } });
  });

  it('counts only running Instances, and each workspace against its own quota', async () => {
    const w = new World();
    for (let i = 0; i < 4; i++) w.instances.push(instance(`off${i}`, { namespace: 'workspace-os', name: 'big' }, false));
    w.instances.push(instance('net', { namespace: 'workspace-net', name: 'vm' }));
    expect(await validateInstanceQuota(create(instance('b', { namespace: 'workspace-os', name: 'big' })), deps(w))).toMatchObject({ allowed: true });
  });

  it('a resume (running false → true) is judged; a stop, an edit of a running one and a stopped one are not', async () => {
    const w = new World();
    w.instances.push(instance('a', { namespace: 'workspace-os', name: 'big' }));
    const off = instance('b', { namespace: 'workspace-os', name: 'big' }, false);
    w.instances.push(off);
    const on = instance('b', { namespace: 'workspace-os', name: 'big' });
    expect(await validateInstanceQuota(update(off, on), deps(w))).toMatchObject({ allowed: false, status: { message: 'quota exceeded in workspace "os": CPU (6 > 4)' } });
    expect(await validateInstanceQuota(update(on, off), deps(w))).toMatchObject({ allowed: true });
    expect(await validateInstanceQuota(update(on, { ...on, metadata: { ...on.metadata, labels: { x: 'y' } } }), deps(w))).toMatchObject({ allowed: true });
    expect(await validateInstanceQuota(update(off, { ...off, metadata: { ...off.metadata, labels: { x: 'y' } } }), deps(w))).toMatchObject({ allowed: true });
  });

  it('refuses an Instance whose Template is missing, and warns of a running one whose Template is', async () => {
    const w = new World();
    expect(await validateInstanceQuota(create(instance('a', { namespace: 'workspace-os', name: 'gone' })), deps(w))).toMatchObject({
      allowed: false,
      status: { message: 'failed to get instance template workspace-os/gone: not found' },
    });
    w.instances.push(instance('old', { namespace: 'workspace-os', name: 'gone' }));
    const r = await validateInstanceQuota(create(instance('b', { namespace: 'workspace-os', name: 'small' })), deps(w));
    expect(r).toMatchObject({ allowed: true, warnings: ['template gone not found in workspace namespace for instance old; skipping resource calculation for this instance'] });
  });

  it('refuses when the workspace or the tenant cannot be read, or the Template lies in no workspace namespace', async () => {
    const w = new World();
    w.workspaces.delete('os');
    expect(await validateInstanceQuota(create(instance('a', { namespace: 'workspace-os', name: 'small' })), deps(w))).toMatchObject({ allowed: false, status: { message: 'failed to get workspace os: not found' } });
    w.templates.set('elsewhere/t', template('elsewhere', 't', {}));
    expect(await validateInstanceQuota(create(instance('a', { namespace: 'elsewhere', name: 't' })), deps(w))).toMatchObject({ allowed: false, status: { code: 403 } });
    w.tenants.clear();
    expect(await validateInstanceQuota(create(instance('a', { namespace: 'workspace-net', name: 'vm' })), deps(w))).toMatchObject({ allowed: false, status: { message: 'failed to get tenant ada: not found' } });
  });

  it("a Template in the tenant's own namespace counts against the personal workspace", async () => {
    const w = new World();
    w.templates.set(`${NS}/mine`, template(NS, 'mine', { cpu: 2 }));
    const own = (name: string) => instance(name, { namespace: NS, name: 'mine' });
    expect(await validateInstanceQuota(create(own('a')), deps(w))).toMatchObject({ allowed: false, status: { message: 'tenant ada has no personal workspace' } });
    w.tenants.set('ada', tenant({ personalWorkspace: { cpu: 3, memory: '4Gi', instances: 2 } }));
    expect(await validateInstanceQuota(create(own('a')), deps(w))).toMatchObject({ allowed: true });
    w.instances.push(own('a'));
    expect(await validateInstanceQuota(create(own('b')), deps(w))).toMatchObject({ allowed: false, status: { message: 'quota exceeded in workspace "personal": CPU (4 > 3)' } });
  });

  it("the tenant's managed quota holds across workspaces: the caps apply to the sum", async () => {
    const w = new World();
    w.instances.push(instance('a', { namespace: 'workspace-os', name: 'big' }), instance('b', { namespace: 'workspace-net', name: 'vm' }));
    const capped = deps(w, { caps: { capCpu: '6', capMemory: '0', capInstances: 0 } });
    expect(await validateInstanceQuota(create(instance('c', { namespace: 'workspace-net', name: 'vm' })), capped)).toMatchObject({
      allowed: false,
      status: { message: 'quota exceeded for tenant "ada": CPU (7 > 6)' },
    });
    expect(await validateInstanceQuota(create(instance('c', { namespace: 'workspace-os', name: 'small' })), capped)).toMatchObject({ allowed: true });
  });

  it('the bypass groups and the controller skip the check; a dry run writes no ledger entry', async () => {
    const w = new World();
    for (let i = 0; i < 2; i++) w.instances.push(instance(`r${i}`, { namespace: 'workspace-os', name: 'big' }));
    const over = instance('x', { namespace: 'workspace-os', name: 'big' });
    expect(await validateInstanceQuota(create(over, { userInfo: { username: 'admin', groups: ['system:masters'] } }), deps(w))).toMatchObject({ allowed: true });
    expect(await validateInstanceQuota(create(over, { userInfo: { username: 'ctl' } }), deps(w, { bypassUsers: ['ctl'] }))).toMatchObject({ allowed: true });
    w.instances = [];
    expect(await validateInstanceQuota(create(over, { dryRun: true }), deps(w))).toMatchObject({ allowed: true });
    expect(w.ledgerWrites).toBe(0);
    expect(await validateInstanceQuota(create(over), deps(w))).toMatchObject({ allowed: true });
    expect(w.ledgerWrites).toBe(1);
  });
});

describe('the Instance quota webhook on malformed requests', () => {
  it.each([
    ['no object', undefined, /object is not a JSON object/],
    ['no name', { spec: {} }, /object.metadata.name is not a string/],
    ['no spec', { metadata: { name: 'a' } }, /object.spec is not an object/],
    ['a Template reference that is not one', { metadata: { name: 'a' }, spec: { [TEMPLATE_REF]: 'x', [TENANT_REF]: { name: 'ada' } } }, /is not a reference/],
    ['a tenant reference without a name', { metadata: { name: 'a' }, spec: { [TEMPLATE_REF]: { name: 't' }, [TENANT_REF]: { name: 7 } } }, /is not a reference/],
  ])('%s: a 400 naming the field, nothing written', async (_what, object, message) => {
    const w = new World();
    const r = await validateInstanceQuota({ uid: 'u', operation: 'CREATE', namespace: NS, userInfo: { username: 'ada' }, object }, deps(w));
    expect(r).toMatchObject({ allowed: false, status: { code: 400 } });
    expect(r.status?.message).toMatch(message);
    expect(w.ledgerWrites).toBe(0);
  });

  it('an UPDATE without a readable old object is a 400, not an admission', async () => {
    const w = new World();
    const r = await validateInstanceQuota({ uid: 'u', operation: 'UPDATE', namespace: NS, userInfo: { username: 'ada' }, object: instance('a', { namespace: 'workspace-os', name: 'small' }) }, deps(w));
    expect(r).toMatchObject({ allowed: false, status: { code: 400, message: 'oldObject is not a JSON object' } });
  });
});

describe('the Instance quota webhook under concurrent requests', () => {
  /** `count` creates at once, spread over two webhook replicas; an admitted Instance is stored a moment later. */
  async function burst(w: World, ledger: (w: World) => LedgerStore, count: number) {
    const replicas = [deps(w, { ledger: ledger(w) }), deps(w, { ledger: ledger(w) })];
    const results = await Promise.all(
      Array.from({ length: count }, async (_, i) => {
        const inst = instance(`i${i}`, { namespace: 'workspace-os', name: 'small' });
        const r = await validateInstanceQuota(create(inst), replicas[i % 2]);
        if (r.allowed) setTimeout(() => w.instances.push(inst), Math.random() * 5);
        return r;
      }),
    );
    await new Promise((r) => setTimeout(r, 10));
    return results;
  }
  const jittered = (w: World) => w.store({ delayMs: () => Math.random() * 2 });

  it('100 creates at once on two replicas: exactly the quota is admitted, the rest refused naming the workspace and the resource', async () => {
    const w = new World();
    const results = await burst(w, jittered, 100);
    expect(results.filter((r) => r.allowed)).toHaveLength(4);
    expect(w.instances).toHaveLength(4);
    const refused = results.filter((r) => !r.allowed).map((r) => r.status?.message);
    expect(new Set(refused)).toEqual(new Set(['quota exceeded in workspace "os": CPU (5 > 4)']));
  });

  it('without the ledger the same burst admits more than the quota (the race the ledger closes)', async () => {
    const w = new World();
    const results = await burst(w, (world) => world.store({ forget: true, delayMs: () => Math.random() * 2 }), 100);
    expect(results.filter((r) => r.allowed).length).toBeGreaterThan(4);
  });

  it('an entry counts until its Instance is listed as running or it expires, never twice', async () => {
    const w = new World();
    let now = 1_000_000;
    const d = deps(w, { now: () => now });
    const admit = (name: string, tmpl = 'big') => validateInstanceQuota(create(instance(name, { namespace: 'workspace-os', name: tmpl })), d);
    expect(await admit('a')).toMatchObject({ allowed: true });
    // Not stored yet: still counted (3 + 3 > 4).
    expect(await admit('b')).toMatchObject({ allowed: false, status: { message: 'quota exceeded in workspace "os": CPU (6 > 4)' } });
    // Stored and listed: counted once (3 + 1 = 4), and dropped from the ledger.
    w.instances.push(instance('a', { namespace: 'workspace-os', name: 'big' }));
    expect(await admit('c', 'small')).toMatchObject({ allowed: true });
    expect([...w.ledger.get(NS)!.entries.keys()]).toEqual(['c']);
    // c never stored (another admission step refused it): counted until it expires.
    expect(await admit('d', 'small')).toMatchObject({ allowed: false, status: { message: 'quota exceeded in workspace "os": CPU (5 > 4)' } });
    now += LEDGER_TTL_MS;
    expect(await admit('d', 'small')).toMatchObject({ allowed: true });
    expect([...w.ledger.get(NS)!.entries.keys()]).toEqual(['d']);
  });

  it('an Instance stopped right after its admission frees its room at once; a resume counts until its update is stored', async () => {
    const w = new World();
    const d = deps(w);
    const big = (name: string, running = true, resourceVersion?: string) => ({ ...instance(name, { namespace: 'workspace-os', name: 'big' }, running), metadata: { name, namespace: NS, ...(resourceVersion ? { resourceVersion } : {}) } });
    expect(await validateInstanceQuota(create(big('a')), d)).toMatchObject({ allowed: true });
    // Stored, then stopped: listed, not running, no longer counted.
    w.instances.push(big('a', false, '10'));
    expect(await validateInstanceQuota(create(big('b')), d)).toMatchObject({ allowed: true });
    w.instances.push(big('b', true, '11'));
    w.instances = w.instances.filter((i) => i.metadata.name !== 'b').concat(big('b', false, '12'));
    // The resume of a is admitted; until the update is stored (a still at resourceVersion 10) it counts.
    expect(await validateInstanceQuota(update(big('a', false, '10'), big('a', true, '10')), d)).toMatchObject({ allowed: true });
    expect(await validateInstanceQuota(update(big('b', false, '12'), big('b', true, '12')), d)).toMatchObject({ allowed: false, status: { message: 'quota exceeded in workspace "os": CPU (6 > 4)' } });
    // Stored (another resourceVersion) and stopped again at once: settled, b fits.
    w.instances = w.instances.filter((i) => i.metadata.name !== 'a').concat(big('a', false, '13'));
    expect(await validateInstanceQuota(update(big('b', false, '12'), big('b', true, '12')), d)).toMatchObject({ allowed: true });
  });

  it('a ledger that keeps changing under a request ends in a 409 the client can retry, not an admission', async () => {
    const w = new World();
    const losing: LedgerStore = { read: async () => ({ entries: new Map(), version: '1' }), write: async () => false };
    const r = await validateInstanceQuota(create(instance('a', { namespace: 'workspace-os', name: 'small' })), deps(w, { ledger: losing }));
    expect(r).toMatchObject({ allowed: false, status: { code: 409, reason: 'Conflict' } });
  });
});
