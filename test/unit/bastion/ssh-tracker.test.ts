import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { captureFilter, parseListenAddress, parseTcpdumpLine, SshConnectionTracker } from '../../../src/bastion/ssh-tracker.ts';
import { freePort } from '../../support/free-port.ts';

const ROOT = join(import.meta.dirname, '..', '..', '..');
const BIN = join(ROOT, 'bin', 'crownlabs.js');

describe('§15.4 tcpdump lines', () => {
  it.each([
    ['10:17:30.538327 eth0 Out IP 169.254.77.1.43470 > 169.254.77.2.22: Flags [S], seq 711788421, win 64240, length 0', { sourceIp: '169.254.77.1', sourcePort: 43470, destinationIp: '169.254.77.2', destinationPort: 22, seq: '711788421' }],
    ['10:17:30.538327 IP6 fd00::1.51000 > fd00::2.22: Flags [S], seq 42, win 64800, length 0', { sourceIp: 'fd00::1', sourcePort: 51000, destinationIp: 'fd00::2', destinationPort: 22, seq: '42' }],
  ])('parses a SYN: %s', (line, event) => {
    expect(parseTcpdumpLine(line)).toEqual(event);
  });
  it.each([
    '10:17:30.538327 eth0 In IP 169.254.77.2.22 > 169.254.77.1.43470: Flags [S.], seq 1, ack 2, win 65160, length 0',
    '10:17:30.538327 eth0 Out IP 169.254.77.1.43470 > 169.254.77.2.22: Flags [.], ack 1, win 63, length 0',
    'tcpdump: listening on any',
    '',
  ])('ignores anything but an initial SYN: %j', (line) => {
    expect(parseTcpdumpLine(line)).toBeUndefined();
  });
  it('captures only initial SYNs to the port, for IPv4 and IPv6', () => {
    expect(captureFilter()).toBe('tcp dst port 22 and ((ip and tcp[tcpflags] & (tcp-syn|tcp-ack) == tcp-syn) or (ip6 and ip6[13 + 40] & 0x12 == 0x02))');
  });
});

describe('§15.4 bastion_ssh_connections counter', () => {
  const syn = (seq: string, srcPort = 40000, dst = '169.254.1.2') => ({ sourceIp: '169.254.1.1', sourcePort: srcPort, destinationIp: dst, destinationPort: 22, seq });
  it('counts per destination_ip and destination_port, and a retransmitted SYN once', async () => {
    const t = new SshConnectionTracker({ log: () => {} });
    expect(t.record(syn('1'), 1000)).toBe(true);
    expect(t.record(syn('1'), 2000)).toBe(false); // retransmission: same 4-tuple and ISN
    expect(t.record(syn('2', 40001), 2000)).toBe(true);
    expect(t.record(syn('3', 40002, '169.254.9.9'), 2000)).toBe(true);
    expect(t.record(syn('1'), 1000 + 121_000)).toBe(true); // port reused much later: a new connection
    expect(t.record({ ...syn('9'), destinationPort: 2222 }, 3000)).toBe(false);
    const text = await t.registry.metrics();
    expect(text).toContain('bastion_ssh_connections{destination_ip="169.254.1.2",destination_port="22"} 3');
    expect(text).toContain('bastion_ssh_connections{destination_ip="169.254.9.9",destination_port="22"} 1');
    expect(text).not.toContain('2222');
  });
  it('the metric name can be changed (--ssh-tracker-metric-name)', async () => {
    const t = new SshConnectionTracker({ metricName: 'my_ssh', log: () => {} });
    t.record(syn('1'));
    expect(await t.registry.metrics()).toContain('my_ssh{destination_ip="169.254.1.2",destination_port="22"} 1');
  });
  it.each([
    [':9090', { host: undefined, port: 9090 }],
    ['127.0.0.1:9464', { host: '127.0.0.1', port: 9464 }],
    ['[::1]:80', { host: '::1', port: 80 }],
  ])('--metrics-addr %s', (addr, parsed) => {
    expect(parseListenAddress(addr)).toEqual(parsed);
  });
});

describe('§15.4 crownlabs ssh-tracker health', () => {
  it('/healthz fails (503) while the capture process is not running, /metrics still answers', async () => {
    const port = await freePort();
    const child = spawn(process.execPath, [BIN, 'ssh-tracker', '--metrics-addr', `127.0.0.1:${port}`, '--tcpdump', '/nonexistent/tcpdump'], { cwd: ROOT, stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    try {
      let health = 0;
      for (let i = 0; i < 100 && health === 0; i++) {
        health = await fetch(`http://127.0.0.1:${port}/healthz`).then((r) => r.status, () => 0);
        if (health === 0) await new Promise((r) => setTimeout(r, 100));
      }
      expect(health).toBe(503);
      const metrics = await fetch(`http://127.0.0.1:${port}/metrics`);
      expect(metrics.status).toBe(200);
      expect(await metrics.text()).toContain('# TYPE bastion_ssh_connections counter');
      expect(stderr).toMatch(/could not start \/nonexistent\/tcpdump \(spawn \/nonexistent\/tcpdump ENOENT\); restarting/);
    } finally {
      child.kill('SIGTERM');
      await new Promise((r) => child.once('exit', r));
    }
  });
});
