// Public exposure (docs/behaviour.md §18): the IP pool, what an Instance asks for, and the pure
// allocator that the controller and the file sinks both decide with.
import { describe, expect, it } from 'vitest';
import { expandIpPool, MAX_POOL_ADDRESSES } from '../../../src/config/ip-pool.ts';
import { loadConfig } from '../../../src/config/config.ts';
import type { Environment, Instance, Template } from '../../../src/inputs/types.ts';
import { allocate, filePublicExposure, PE_BASE_PORT, prioritizedPool, publicExposureRequest, type AssignedPort } from '../../../src/model/public-exposure.ts';

const port = (name: string, p: number, targetPort: number, protocol: AssignedPort['protocol'] = 'TCP'): AssignedPort => ({ name, port: p, targetPort, protocol });
const taken = (entries: Record<string, number[]>) => new Map(Object.entries(entries).map(([ip, ports]) => [ip, new Set(ports)]));

describe('the IP pool: addresses, ranges and CIDRs, each address once', () => {
  it('expands in the order given, ranges and CIDRs inclusive, without repeats', () => {
    expect(expandIpPool(['10.0.0.9', '10.0.0.1-10.0.0.3', '10.0.0.2', '10.0.1.0/30'])).toEqual({ addresses: ['10.0.0.9', '10.0.0.1', '10.0.0.2', '10.0.0.3', '10.0.1.0', '10.0.1.1', '10.0.1.2', '10.0.1.3'] });
    // A CIDR given by a host inside it is its whole block (as net.ParseCIDR masks it).
    expect(expandIpPool(['192.168.5.7/31'])).toEqual({ addresses: ['192.168.5.6', '192.168.5.7'] });
  });
  it.each([
    ['10.0.0.256', 'not an IPv4 address'],
    ['10.0.0.5-10.0.0.1', 'ends before it starts'],
    ['10.0.0.0/33', 'not an IPv4 CIDR'],
    ['fd00::1', 'not an IPv4 address'],
  ])('refuses %s', (entry, message) => {
    const r = expandIpPool([entry]);
    expect('error' in r && r.error).toContain(message);
  });
  it('refuses a pool too large to hold (a typo such as /8)', () => {
    expect(expandIpPool(['10.0.0.0/8'])).toEqual({ error: `expands to more than ${MAX_POOL_ADDRESSES} addresses` });
  });
  it('the configuration names the bad entry and the key', () => {
    const { problems } = loadConfig({ flags: { publicExposureIpPool: '10.0.0.1,10.0.0.x' } });
    expect(problems.map((p) => `${p.field}: ${p.message}`).join('\n')).toMatch(/publicExposureIpPool.*10\.0\.0\.x/);
    const ok = loadConfig({ flags: { publicExposureIpPool: '172.18.0.240-172.18.0.249,172.18.0.250/30' } });
    expect(ok.problems).toEqual([]);
    expect(ok.config.publicExposureIpPool).toEqual(['172.18.0.240-172.18.0.249', '172.18.0.250/30']);
  });
  it('common annotations take any value (Cilium shares an address across namespaces with "*"); common labels only label values', () => {
    const ok = loadConfig({ flags: { publicExposureCommonAnnotations: 'lbipam.cilium.io/sharing-key=pe&lbipam.cilium.io/sharing-cross-namespace=*' } });
    expect(ok.problems).toEqual([]);
    expect(ok.config.publicExposureCommonAnnotations).toEqual({ 'lbipam.cilium.io/sharing-key': 'pe', 'lbipam.cilium.io/sharing-cross-namespace': '*' });
    expect(loadConfig({ flags: { publicExposureCommonLabels: 'pool=*' } }).problems.map((p) => p.message).join()).toContain('not a valid label');
  });
});

const template = (allow: boolean | undefined, envs = 1): Template =>
  ({ metadata: { name: 't', namespace: 'workspace-w' }, spec: { allowPublicExposure: allow, environmentList: Array.from({ length: envs }, (_, i) => ({ name: `e${i}` })) } }) as unknown as Template;
const instance = (ports: unknown[] | undefined, running = true, status?: unknown, name = 'i'): Instance =>
  ({ metadata: { name, namespace: 'tenant-a' }, spec: { running, ...(ports ? { publicExposure: { ports } } : {}) }, ...(status ? { status: { publicExposure: status } } : {}) }) as unknown as Instance;
const envsOf = (t: Template) => t.spec.environmentList as Environment[];
const POOL = { publicExposureIpPool: ['10.0.0.1-10.0.0.2'] };

describe('what an Instance asks for', () => {
  it('nothing at 2e8aeb9, when stopped, or without ports', () => {
    const t = template(true);
    expect(publicExposureRequest('2e8aeb9', instance([port('ssh', 0, 22)]), t, envsOf(t), POOL)).toEqual({ kind: 'none' });
    expect(publicExposureRequest('e62be9e', instance([port('ssh', 0, 22)], false), t, envsOf(t), POOL)).toEqual({ kind: 'none' });
    expect(publicExposureRequest('e62be9e', instance([]), t, envsOf(t), POOL)).toEqual({ kind: 'none' });
  });
  it('protocol TCP when not given, port 0 when left out', () => {
    const t = template(true);
    expect(publicExposureRequest('e62be9e', instance([{ name: 'ssh', targetPort: 22 }]), t, envsOf(t), POOL)).toEqual({ kind: 'wanted', ports: [port('ssh', 0, 22)] });
  });
  // [what, template, ports, pool, reason, message part]
  const refusals: [string, Template, unknown[], string[], string, string][] = [
    ['no pool configured', template(true), [port('ssh', 0, 22)], [], 'PublicExposureDisabled', 'not enabled'],
    ['the Template does not allow it', template(undefined), [port('ssh', 0, 22)], ['10.0.0.1'], 'PublicExposureNotAllowed', 'Template workspace-w/t does not allow public exposure'],
    ['several environments', template(true, 2), [port('ssh', 0, 22)], ['10.0.0.1'], 'PublicExposureMultipleEnvironments', 'multiple environments'],
    ['a targetPort twice', template(true), [port('a', 0, 22), port('b', 0, 22, 'UDP')], ['10.0.0.1'], 'PublicExposureInvalid', 'duplicate desired targetPort 22'],
    ['a port twice', template(true), [port('a', 2222, 22), port('b', 2222, 80)], ['10.0.0.1'], 'PublicExposureInvalid', 'duplicate requested port 2222'],
  ];
  it.each(refusals)('refused with a message: %s', (_what, t, ports, pool, reason, message) => {
    const r = publicExposureRequest('e62be9e', instance(ports), t, envsOf(t), { publicExposureIpPool: pool });
    expect(r).toMatchObject({ kind: 'refused', reason });
    expect(r.kind === 'refused' && r.message).toContain(message);
  });
  it('two ports 0 are not duplicates', () => {
    const t = template(true);
    expect(publicExposureRequest('e62be9e', instance([port('a', 0, 22), port('b', 0, 80)]), t, envsOf(t), POOL).kind).toBe('wanted');
  });
});

describe('the allocator', () => {
  const pool = ['10.0.0.1', '10.0.0.2', '10.0.0.10'];
  it('port 0 takes the lowest free port from 49152; explicit ports as asked; explicit first in the list', () => {
    const r = allocate([port('web', 0, 80), port('ssh', 2222, 22)], pool, taken({ '10.0.0.1': [PE_BASE_PORT, PE_BASE_PORT + 2] }));
    expect(r).toEqual({ allocation: { ip: '10.0.0.1', ports: [port('ssh', 2222, 22), port('web', PE_BASE_PORT + 1, 80)] } });
  });
  it('an explicit port taken on the used address moves the Instance to the next address', () => {
    expect(allocate([port('ssh', 2222, 22)], pool, taken({ '10.0.0.1': [2222] }))).toEqual({ allocation: { ip: '10.0.0.2', ports: [port('ssh', 2222, 22)] } });
  });
  it('addresses already in use come first (fewer addresses used), numerically', () => {
    expect(prioritizedPool(pool, taken({ '10.0.0.10': [1] }))).toEqual(['10.0.0.10', '10.0.0.1', '10.0.0.2']);
    expect(prioritizedPool(pool, taken({ '10.0.0.10': [1] }), '10.0.0.2')).toEqual(['10.0.0.2', '10.0.0.10', '10.0.0.1']);
  });
  it('keeps what it holds while it still answers the request', () => {
    const current = { ip: '10.0.0.2', ports: [port('web', 50000, 80)] };
    expect(allocate([port('web', 0, 80)], pool, taken({ '10.0.0.1': [1] }), current)).toEqual({ allocation: current });
  });
  it('moves when its address left the pool, its request changed, or another holds its port', () => {
    const current = { ip: '10.0.0.2', ports: [port('web', 50000, 80)] };
    expect(allocate([port('web', 0, 80)], ['10.0.0.1'], new Map(), current)).toEqual({ allocation: { ip: '10.0.0.1', ports: [port('web', PE_BASE_PORT, 80)] } });
    expect(allocate([port('web', 8080, 80)], pool, new Map(), current)).toEqual({ allocation: { ip: '10.0.0.2', ports: [port('web', 8080, 80)] } });
    expect(allocate([port('web', 0, 80)], pool, taken({ '10.0.0.2': [50000] }), current)).toEqual({ allocation: { ip: '10.0.0.2', ports: [port('web', PE_BASE_PORT, 80)] } });
    // An automatic port must come from the automatic range: a held explicit port does not answer port 0.
    expect(allocate([port('web', 0, 80)], pool, new Map(), { ip: '10.0.0.2', ports: [port('web', 8080, 80)] })).toEqual({ allocation: { ip: '10.0.0.2', ports: [port('web', PE_BASE_PORT, 80)] } });
  });
  it('fails when no address has every port free', () => {
    expect(allocate([port('ssh', 22, 22)], ['10.0.0.1'], taken({ '10.0.0.1': [22] }))).toEqual({ error: 'no available IP can support all requested ports' });
    const full = taken({ '10.0.0.1': Array.from({ length: 65536 - PE_BASE_PORT }, (_, i) => PE_BASE_PORT + i) });
    expect('error' in allocate([port('web', 0, 80)], ['10.0.0.1'], full)).toBe(true);
  });
});

describe('the file sinks: one fixed order, so the same inputs give the same allocation', () => {
  const wanted = [port('web', 0, 80)];
  it('Instances keep the allocation their status records, the others follow by key', () => {
    const held = { externalIP: '10.0.0.1', ports: [port('web', PE_BASE_PORT, 80)], phase: 'Ready' };
    const requests = [
      { instance: instance([port('web', 0, 80)], true, undefined, 'a'), wanted },
      { instance: instance([port('web', 0, 80)], true, held, 'z'), wanted },
      { instance: instance([port('web', 0, 80)], true, undefined, 'b'), wanted },
    ];
    const out = filePublicExposure(requests, ['10.0.0.1']);
    expect(Object.fromEntries([...out].map(([k, r]) => [k, 'allocation' in r ? r.allocation.ports[0].port : r.error]))).toEqual({
      'tenant-a/z': PE_BASE_PORT,
      'tenant-a/a': PE_BASE_PORT + 1,
      'tenant-a/b': PE_BASE_PORT + 2,
    });
    expect(filePublicExposure([...requests].reverse(), ['10.0.0.1'])).toEqual(out);
  });
  it('two statuses claiming the same port: the first by key keeps it', () => {
    const held = { externalIP: '10.0.0.1', ports: [port('web', PE_BASE_PORT, 80)] };
    const out = filePublicExposure([{ instance: instance([], true, held, 'b'), wanted }, { instance: instance([], true, held, 'a'), wanted }], ['10.0.0.1']);
    expect(out.get('tenant-a/a')).toEqual({ allocation: { ip: '10.0.0.1', ports: [port('web', PE_BASE_PORT, 80)] } });
    expect(out.get('tenant-a/b')).toEqual({ allocation: { ip: '10.0.0.1', ports: [port('web', PE_BASE_PORT + 1, 80)] } });
  });
});
