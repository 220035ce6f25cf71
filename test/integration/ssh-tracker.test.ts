// §15.4 / Decision 8 for real: `crownlabs ssh-tracker` runs in a network namespace of its own and
// counts the SSH connections leaving it. Two namespaces created here, joined by a veth pair with
// link-local (169.254.0.0/16) and ULA (fd00::/8) addresses — all traffic stays inside them; a
// listener on ports 22 and 2222 in one, the tracker and the clients in the other.
import { execFileSync, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomBytes, randomInt } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT, waitFor } from './cluster.ts';

const BIN = path.join(REPO_ROOT, 'bin', 'crownlabs.js');

function whyNot(): string | undefined {
  if (process.getuid?.() !== 0) return 'not root: creating network namespaces needs root';
  if (spawnSync('ip', ['netns', 'list']).status !== 0) return '`ip netns` unavailable (install iproute2)';
  if (spawnSync('tcpdump', ['--version']).status !== 0) return 'tcpdump not installed: run scripts/ensure-docker-registry.sh';
  return undefined;
}
const skipReason = whyNot();
if (skipReason) console.warn(`[ssh-tracker test] SKIPPED: ${skipReason}`);

const id = randomBytes(3).toString('hex');
const NS_CLIENT = `clt-${id}-client`;
const NS_SERVER = `clt-${id}-server`;
const VETH_C = `clv${id}c`;
const VETH_S = `clv${id}s`;
const octet = randomInt(1, 254);
const IP4_C = `169.254.${octet}.1`;
const IP4_S = `169.254.${octet}.2`;
// tcpdump prints addresses in canonical form (no leading zeros in a group), and so do the labels:
// a group from 0x1000 up is written the same both ways.
const group = randomInt(0x1000, 0x10000).toString(16);
const IP6_C = `fd00:0:${group}::1`;
const IP6_S = `fd00:0:${group}::2`;
const METRICS = '127.0.0.1:9464';

const ip = (...args: string[]) => execFileSync('ip', args, { stdio: 'pipe' });
const inNs = (ns: string, args: string[]) => ['netns', 'exec', ns, ...args];

/** Runs a Node script inside a namespace and returns its stdout. */
function nodeIn(ns: string, script: string): string {
  return execFileSync('ip', inNs(ns, [process.execPath, '--input-type=module', '-e', script]), { encoding: 'utf8', timeout: 30_000 });
}

function metrics(): string {
  return nodeIn(NS_CLIENT, `const r = await fetch('http://${METRICS}/metrics'); process.stdout.write(await r.text());`);
}
function health(): number {
  return Number(nodeIn(NS_CLIENT, `const r = await fetch('http://${METRICS}/healthz').catch(() => ({ status: 0 })); process.stdout.write(String(r.status));`));
}

function descendants(pid: number): number[] {
  const r = spawnSync('pgrep', ['-P', String(pid)], { encoding: 'utf8' });
  const children = r.stdout.split('\n').filter(Boolean).map(Number);
  return children.flatMap((c) => [c, ...descendants(c)]);
}

/** Opens `count` TCP connections one after the other, each until established, then closes it. */
function connect(host: string, port: number, count: number): void {
  nodeIn(
    NS_CLIENT,
    `import net from 'node:net';
     for (let i = 0; i < ${count}; i++) await new Promise((ok, ko) => { const s = net.connect(${port}, '${host}', () => { s.end(); ok(); }); s.on('error', ko); });`,
  );
}

describe.skipIf(skipReason !== undefined)('§15.4 crownlabs ssh-tracker in a network namespace', () => {
  let listener: ChildProcess;
  let tracker: ChildProcess;
  let trackerLog = '';
  /** waitFor, with the tracker's log in the error: what tcpdump said is the first thing to read. */
  const waitForTracker: typeof waitFor = (fn, opts) =>
    waitFor(fn, opts).catch((e: Error) => {
      throw new Error(`${e.message}\n--- tracker log ---\n${trackerLog}`);
    });

  beforeAll(async () => {
    ip('netns', 'add', NS_CLIENT);
    ip('netns', 'add', NS_SERVER);
    ip('link', 'add', VETH_C, 'type', 'veth', 'peer', 'name', VETH_S);
    ip('link', 'set', VETH_C, 'netns', NS_CLIENT);
    ip('link', 'set', VETH_S, 'netns', NS_SERVER);
    for (const [ns, dev, a4, a6] of [[NS_CLIENT, VETH_C, IP4_C, IP6_C], [NS_SERVER, VETH_S, IP4_S, IP6_S]]) {
      ip('-n', ns, 'addr', 'add', `${a4}/30`, 'dev', dev);
      ip('-n', ns, 'addr', 'add', `${a6}/64`, 'dev', dev, 'nodad');
      ip('-n', ns, 'link', 'set', dev, 'up');
      ip('-n', ns, 'link', 'set', 'lo', 'up');
    }
    listener = spawn('ip', inNs(NS_SERVER, [process.execPath, '-e', `
      const net = require('node:net');
      for (const port of [22, 2222]) net.createServer((s) => s.on('error', () => {}).end()).listen(port, '::', () => console.log('listening', port));
    `]), { stdio: ['ignore', 'pipe', 'inherit'] });
    await new Promise<void>((resolve) => {
      let out = '';
      listener.stdout!.on('data', (d: Buffer) => {
        out += d.toString();
        if ((out.match(/listening/g) ?? []).length === 2) resolve();
      });
    });
    tracker = spawn('ip', inNs(NS_CLIENT, [process.execPath, BIN, 'ssh-tracker', '--metrics-addr', METRICS]), { stdio: ['ignore', 'pipe', 'pipe'], cwd: REPO_ROOT });
    tracker.stderr!.on('data', (d: Buffer) => (trackerLog += d.toString()));
    await waitForTracker(() => health() === 200, { timeoutMs: 30_000, intervalMs: 300, message: 'the tracker to capture' });
  });

  afterAll(async () => {
    for (const p of [tracker, listener]) {
      if (p && p.exitCode === null) {
        const exited = new Promise((r) => p.once('exit', r));
        p.kill('SIGTERM');
        await Promise.race([exited, new Promise((r) => setTimeout(r, 5000))]);
      }
    }
    // Deleting a namespace deletes the veth end in it, and with it the peer.
    for (const ns of [NS_CLIENT, NS_SERVER]) spawnSync('ip', ['netns', 'del', ns]);
  });

  it('counts each connection to port 22 per destination IP (IPv4 and IPv6), and none to another port', async () => {
    connect(IP4_S, 22, 5);
    connect(IP4_S, 2222, 4);
    connect(IP6_S, 22, 2);
    const text = await waitForTracker(() => {
      const m = metrics();
      return m.includes(`destination_ip="${IP4_S}",destination_port="22"} 5`) && m.includes(`destination_ip="${IP6_S}",destination_port="22"} 2`) ? m : undefined;
    }, { timeoutMs: 15_000, message: 'the counters' });
    const samples = text.split('\n').filter((l) => l.startsWith('bastion_ssh_connections{'));
    expect(samples.sort()).toEqual([
      `bastion_ssh_connections{destination_ip="${IP4_S}",destination_port="22"} 5`,
      `bastion_ssh_connections{destination_ip="${IP6_S}",destination_port="22"} 2`,
    ]);
    expect(text).toContain('# TYPE bastion_ssh_connections counter');
    expect(text).not.toContain('2222');
  });

  it('a SYN retransmitted because no answer came back counts as one connection', async () => {
    // A second server address whose answers are dropped: the server's replies to the client are
    // blackholed, so the client retransmits its SYN (same 4-tuple, same initial sequence number).
    const unanswered = `fd00:0:${group}::3`;
    ip('-n', NS_SERVER, 'addr', 'add', `${unanswered}/64`, 'dev', VETH_S, 'nodad');
    ip('-n', NS_SERVER, 'route', 'add', 'blackhole', `${IP6_C}/128`);
    const synRetrans = () => Number(/TcpExtTCPSynRetrans\s+(\d+)/.exec(execFileSync('ip', inNs(NS_CLIENT, ['nstat', '-az', 'TcpExtTCPSynRetrans']), { encoding: 'utf8' }))?.[1] ?? 0);
    const before = synRetrans();
    nodeIn(
      NS_CLIENT,
      `import net from 'node:net';
       const s = net.connect(22, '${unanswered}'); s.on('error', () => {});
       await new Promise((r) => setTimeout(r, 3500)); s.destroy();`,
    );
    expect(synRetrans() - before).toBeGreaterThanOrEqual(2); // SYN at 0 s, again at ~1 s and ~3 s
    const text = await waitForTracker(() => {
      const m = metrics();
      return m.includes(`destination_ip="${unanswered}"`) ? m : undefined;
    }, { timeoutMs: 10_000, message: 'the unanswered connection counted' });
    expect(text).toContain(`bastion_ssh_connections{destination_ip="${unanswered}",destination_port="22"} 1`);
  });

  it('/healthz fails once the capture process is gone', async () => {
    expect(health()).toBe(200);
    // Kill only the tcpdump of our tracker (a descendant of the process we spawned).
    const tcpdump = descendants(tracker.pid!).find((pid) => readFileSync(`/proc/${pid}/comm`, 'utf8').trim() === 'tcpdump');
    expect(tcpdump).toBeDefined();
    process.kill(Number(tcpdump), 'SIGKILL');
    await waitForTracker(() => health() === 503, { timeoutMs: 5000, intervalMs: 50, message: '/healthz to fail' });
    // ... and recovers when the capture is restarted.
    await waitForTracker(() => health() === 200, { timeoutMs: 15_000, intervalMs: 200, message: '/healthz to recover' });
  });
});
