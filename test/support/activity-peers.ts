// The inactivity automation's real peers, as `scripts/test-cluster activity-peers` starts them
// beside the test cluster: Prometheus (its scrape targets are the JSON files written here) and the
// SMTP relay (what it accepted is read from its Maildir).
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import path from 'node:path';
import { REPO_ROOT, testClusterDir } from '../integration/cluster.ts';

export interface ActivityPeers {
  prometheusUrl: string;
  targetsDir: string;
  smtpPort: number;
  smtpUser: string;
  smtpPassword: string;
  smtpCaPem: string;
  maildir: string;
  /** The Prometheus process group, for a test that stops it. */
  prometheusPid(): number;
}

function script(args: string[]): string {
  const dir = testClusterDir();
  if (!dir) throw new Error('no test cluster state dir: the activity peers run beside a test cluster');
  return execFileSync(path.join(REPO_ROOT, 'scripts', 'test-cluster'), args, { env: { ...process.env, TEST_CLUSTER_DIR: dir }, encoding: 'utf8', timeout: 180_000 });
}

/** Starts the peers if they are not running (idempotent), and says where they are. */
export function activityPeers(): ActivityPeers {
  const kv = Object.fromEntries(
    script(['activity-peers'])
      .trim()
      .split('\n')
      .map((l) => l.split(/=(.*)/s).slice(0, 2) as [string, string]),
  );
  const dir = testClusterDir()!;
  return {
    prometheusUrl: kv.PROMETHEUS_URL,
    targetsDir: kv.PROMETHEUS_TARGETS,
    smtpPort: Number(kv.SMTP_PORT),
    smtpUser: kv.SMTP_USER,
    smtpPassword: readFileSync(kv.SMTP_PASSWORD_FILE, 'utf8').trim(),
    smtpCaPem: readFileSync(kv.SMTP_CA, 'utf8'),
    maildir: kv.SMTP_MAILDIR,
    prometheusPid: () => Number(readFileSync(path.join(dir, 'pids', 'prometheus.pid'), 'utf8').trim()),
  };
}

/** A scrape target (file_sd), written whole so Prometheus never reads half a file. */
export function addScrapeTarget(peers: ActivityPeers, name: string, address: string, labels: Record<string, string>): () => void {
  const file = path.join(peers.targetsDir, `${name}.json`);
  writeFileSync(`${file}.tmp`, JSON.stringify([{ targets: [address], labels }]));
  renameSync(`${file}.tmp`, file);
  return () => rmSync(file, { force: true });
}

export interface ReceivedMail {
  to: string;
  subject: string;
  messageId: string;
  raw: string;
}

/** Every message the relay accepted. */
export function receivedMails(peers: ActivityPeers): ReceivedMail[] {
  const out: ReceivedMail[] = [];
  for (const sub of ['new', 'cur']) {
    let files: string[] = [];
    try {
      files = readdirSync(path.join(peers.maildir, sub));
    } catch {
      continue;
    }
    for (const f of files) {
      const raw = readFileSync(path.join(peers.maildir, sub, f), 'utf8');
      const head = raw.split(/\r?\n\r?\n/)[0].replace(/\r?\n[ \t]+/g, ' ');
      const header = (name: string) => new RegExp(`^${name}: (.*)$`, 'im').exec(head)?.[1]?.trim() ?? '';
      out.push({ to: header('To'), subject: header('Subject'), messageId: header('Message-ID'), raw });
    }
  }
  return out;
}

/**
 * Stands in for the ingress controller's metrics endpoint, in its format: a request counter per
 * backend (`namespace`, `service`, which Prometheus renames `exported_*` beside the target's own).
 */
export async function ingressMetricsStandIn(): Promise<{ address: string; request(namespace: string, service: string): void; close(): Promise<void> }> {
  const counts = new Map<string, number>();
  const server: Server = createServer((req, res) => {
    if (req.url !== '/metrics') {
      res.writeHead(404).end();
      return;
    }
    const lines = ['# HELP nginx_ingress_controller_requests The total number of client requests', '# TYPE nginx_ingress_controller_requests counter'];
    for (const [k, v] of counts) {
      const [namespace, service] = k.split('\0');
      lines.push(`nginx_ingress_controller_requests{controller_class="k8s.io/ingress-nginx",ingress="${service}",method="GET",namespace="${namespace}",path="/",service="${service}",status="200"} ${v}`);
    }
    res.writeHead(200, { 'content-type': 'text/plain; version=0.0.4' }).end(`${lines.join('\n')}\n`);
  });
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  const port = (server.address() as { port: number }).port;
  return {
    address: `127.0.0.1:${port}`,
    request: (namespace, service) => counts.set(`${namespace}\0${service}`, (counts.get(`${namespace}\0${service}`) ?? 0) + 1),
    close: () => new Promise<void>((ok) => server.close(() => ok())),
  };
}
