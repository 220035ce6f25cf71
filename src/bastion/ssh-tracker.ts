/**
 * The bastion's SSH connection tracker (docs/behaviour.md §15.4, Decision 8): counts new TCP connections to
 * port 22 leaving the bastion, per destination, as the Prometheus counter
 * `bastion_ssh_connections{destination_ip,destination_port}` that the inactivity controller reads.
 *
 * Packet source: `tcpdump` printing every initial SYN (SYN set, ACK clear) to port 22, rather than
 * upstream's conntrack NEW events. In a network namespace (a pod) conntrack tracks nothing until
 * some netfilter rule in that namespace needs it — `conntrack -E` in a fresh namespace shows
 * 0 events for connections that tcpdump sees (measured here) — and it needs CAP_NET_ADMIN;
 * tcpdump needs only CAP_NET_RAW (`-p`: no promiscuous mode). A retransmitted SYN carries the same
 * 4-tuple and initial sequence number, so it is recognised and not counted twice.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import { createInterface } from 'node:readline';
import { Counter, Registry } from 'prom-client';
import { DEFAULT_SSH_METRIC_NAME } from '../model/ssh-tracker-metric.ts';

export { DEFAULT_SSH_METRIC_NAME };

/** BPF filter: initial SYNs (not SYN-ACKs) to port 22, IPv4 and IPv6 (tcp[] only matches IPv4). */
export function captureFilter(port = 22): string {
  return `tcp dst port ${port} and ((ip and tcp[tcpflags] & (tcp-syn|tcp-ack) == tcp-syn) or (ip6 and ip6[13 + 40] & 0x12 == 0x02))`;
}

export function tcpdumpArgs(iface: string, port = 22): string[] {
  // --immediate-mode: each packet handed over as it arrives. Without it libpcap may hold packets
  // in a TPACKET_V3 ring block until the block fills or the kernel's block timer retires it, and
  // libpcap promises no delivery time then; a few SYNs a minute never fill a block.
  // -l line-buffered, -nn no name/port lookups, -S absolute sequence numbers (retransmit dedup),
  // -p no promiscuous mode.
  return ['--immediate-mode', '-l', '-nn', '-S', '-p', '-i', iface, captureFilter(port)];
}

export interface SynEvent {
  sourceIp: string;
  sourcePort: number;
  destinationIp: string;
  destinationPort: number;
  /** Initial sequence number, when printed. */
  seq?: string;
}

const LINE = /\bIP6? (\S+)\.(\d+) > (\S+)\.(\d+): Flags \[([^\]]*)\](?:, seq (\d+))?/;

/** A tcpdump line (`... IP 169.254.7.1.43470 > 169.254.7.2.22: Flags [S], seq 711788421, ...`), or undefined. */
export function parseTcpdumpLine(line: string): SynEvent | undefined {
  const m = LINE.exec(line);
  if (!m || !m[5].includes('S') || m[5].includes('.')) return undefined; // not a bare SYN
  return { sourceIp: m[1], sourcePort: Number(m[2]), destinationIp: m[3], destinationPort: Number(m[4]), seq: m[6] };
}

export interface SshTrackerOptions {
  /** Capture interface. Default `any`. */
  readonly iface?: string;
  readonly metricName?: string;
  readonly port?: number;
  /** Capture command (tests, other paths). Default `tcpdump`. */
  readonly command?: string;
  readonly log?: (line: string) => void;
  /** How long a SYN is remembered to drop its retransmissions. Default 120 s. */
  readonly dedupWindowMs?: number;
}

export class SshConnectionTracker {
  readonly registry = new Registry();
  private readonly counter: Counter<'destination_ip' | 'destination_port'>;
  private child?: ChildProcess;
  private capturing = false;
  private stopped = false;
  private restartDelayMs = 1000;
  private readonly seen = new Map<string, number>();
  private readonly opts: Required<Omit<SshTrackerOptions, 'log'>> & { log: (line: string) => void };

  constructor(opts: SshTrackerOptions = {}) {
    this.opts = {
      iface: opts.iface ?? 'any',
      metricName: opts.metricName ?? DEFAULT_SSH_METRIC_NAME,
      port: opts.port ?? 22,
      command: opts.command ?? 'tcpdump',
      dedupWindowMs: opts.dedupWindowMs ?? 120_000,
      log: opts.log ?? ((l) => process.stderr.write(`${l}\n`)),
    };
    this.counter = new Counter({
      name: this.opts.metricName,
      help: 'New SSH (TCP port 22) connections opened through the bastion, by destination',
      labelNames: ['destination_ip', 'destination_port'],
      registers: [this.registry],
    });
  }

  /** Whether the capture process is running and listening (the health check). */
  get healthy(): boolean {
    return this.capturing;
  }

  /** Counts one SYN; false when it is a retransmission of one already counted. */
  record(e: SynEvent, now = Date.now()): boolean {
    if (e.destinationPort !== this.opts.port) return false;
    const key = `${e.sourceIp}|${e.sourcePort}|${e.destinationIp}|${e.destinationPort}|${e.seq ?? ''}`;
    const last = this.seen.get(key);
    if (e.seq !== undefined && last !== undefined && now - last < this.opts.dedupWindowMs) return false;
    this.seen.set(key, now);
    if (this.seen.size > 10_000) {
      for (const [k, t] of this.seen) if (now - t >= this.opts.dedupWindowMs) this.seen.delete(k);
    }
    this.counter.inc({ destination_ip: e.destinationIp, destination_port: String(e.destinationPort) });
    return true;
  }

  /** Starts the capture; it is restarted (with back-off up to 30 s) whenever it exits, until stop(). */
  start(): void {
    this.stopped = false;
    const args = tcpdumpArgs(this.opts.iface, this.opts.port);
    const child = spawn(this.opts.command, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    this.child = child;
    createInterface({ input: child.stdout! }).on('line', (line) => {
      const e = parseTcpdumpLine(line);
      if (e) this.record(e);
    });
    createInterface({ input: child.stderr! }).on('line', (line) => {
      // tcpdump says "listening on <iface>, ..." once the filter is installed.
      if (/^listening on /.test(line)) {
        this.capturing = true;
        this.restartDelayMs = 1000;
        this.opts.log(`ssh-tracker: capturing SYNs to port ${this.opts.port} on ${this.opts.iface}`);
      } else if (!/verbose output suppressed|data link type|packets (captured|received|dropped)/.test(line)) {
        this.opts.log(`ssh-tracker: ${this.opts.command}: ${line}`);
      }
    });
    const restart = (why: string) => {
      if (this.child !== child) return;
      this.capturing = false;
      this.child = undefined;
      if (this.stopped) return;
      this.opts.log(`ssh-tracker: capture ${why}; restarting in ${this.restartDelayMs} ms`);
      setTimeout(() => !this.stopped && !this.child && this.start(), this.restartDelayMs).unref();
      this.restartDelayMs = Math.min(this.restartDelayMs * 2, 30_000);
    };
    child.on('error', (err) => restart(`could not start ${this.opts.command} (${err.message})`));
    child.on('exit', (code, signal) => restart(`exited (${signal ?? `code ${code}`})`));
  }

  async stop(): Promise<void> {
    this.stopped = true;
    const child = this.child;
    this.capturing = false;
    if (child && child.exitCode === null && child.signalCode === null) {
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      await exited;
    }
    this.child = undefined;
  }
}

/** `:9090`, `0.0.0.0:9090`, `[::1]:9090` → host and port (empty host: all interfaces). */
export function parseListenAddress(addr: string): { host?: string; port: number } {
  const m = /^(?:\[([^\]]+)\]|([^:]*)):(\d+)$/.exec(addr);
  if (!m) throw new Error(`invalid listen address "${addr}" (expected [host]:port)`);
  const host = m[1] ?? m[2];
  return { host: host || undefined, port: Number(m[3]) };
}

/** `/metrics` (Prometheus text) and `/healthz` (200 while capturing, 503 otherwise). */
export function serveTrackerHttp(tracker: SshConnectionTracker, addr: string): Promise<Server> {
  const { host, port } = parseListenAddress(addr);
  const server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    if (path === '/metrics') {
      tracker.registry.metrics().then(
        (text) => {
          res.writeHead(200, { 'Content-Type': tracker.registry.contentType });
          res.end(text);
        },
        (err: Error) => {
          res.writeHead(500);
          res.end(err.message);
        },
      );
    } else if (path === '/healthz' || path === '/readyz') {
      res.writeHead(tracker.healthy ? 200 : 503, { 'Content-Type': 'text/plain' });
      res.end(tracker.healthy ? 'ok\n' : 'ssh-tracker: capture not running\n');
    } else {
      res.writeHead(404);
      res.end();
    }
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve(server));
  });
}
