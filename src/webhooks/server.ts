/**
 * The HTTPS server of the webhooks (docs/behaviour.md §2.1: port 9443, paths `/mutate-v1alpha2-tenant`
 * and `/validate-v1alpha2-tenant`; at e62be9e also `/validator-v1alpha2-instance`, §16.6). The serving certificate is read from a directory holding
 * `tls.crt` and `tls.key` (controller-runtime's convention, a mounted Secret) and re-read when
 * those files change, so cert-manager rotations need no restart.
 */
import { watch, type FSWatcher } from 'node:fs';
import { readFile } from 'node:fs/promises';
import type { IncomingMessage, ServerResponse } from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import type { SecureContextOptions } from 'node:tls';
import type { Logger } from 'pino';
import { webhookExistsAt, DEFAULT_API_LEVEL } from '../inputs/api-level.ts';
import type { Instance, Tenant, Workspace } from '../inputs/types.ts';
import type { ComposerConfig } from '../config/config.ts';
import type { KubeClient } from '../kube/client.ts';
import { readCappedBody } from '../kube/http-endpoints.ts';
import { INSTANCE_WEBHOOK_PATH, TENANT_WEBHOOK_PATHS } from '../model/tenant-webhooks.ts';
import { errored, parseReview, review, type AdmissionRequest, type AdmissionResponse } from './admission.ts';
import { NamespaceLock, validateInstanceQuota, type InstanceQuotaDeps } from './instance-quota.ts';
import { configMapLedgers } from './quota-ledger.ts';
import { apiServerQuotaReads } from './quota-reads.ts';
import { mutateTenant, type TenantWebhookConfig } from './tenant-mutation.ts';
import { validateTenant } from './tenant-validation.ts';

export const MUTATE_PATH = TENANT_WEBHOOK_PATHS.mutate;
export const VALIDATE_PATH = TENANT_WEBHOOK_PATHS.validate;
/** controller-runtime's default certificate directory. */
export const DEFAULT_CERT_DIR = path.join('/tmp', 'k8s-webhook-server', 'serving-certs');
export const DEFAULT_WEBHOOK_PORT = 9443;
/** Largest AdmissionReview accepted (the API server's own request limit is 3 MiB per object). */
const MAX_BODY_BYTES = 8 * 1024 * 1024;
/** Poll period of the certificate files, besides file-system events (which miss some volume swaps). */
const CERT_POLL_MS = 10_000;

export interface WebhookServerOptions extends TenantWebhookConfig {
  /** Port to listen on (0: any free port). */
  port: number;
  /** Address to bind; default all interfaces. */
  host?: string;
  /** Directory holding tls.crt and tls.key. */
  certDir: string;
  /** The Tenant of that name (the requester's, for manager edits); rejects when it cannot be read. */
  getTenant(name: string): Promise<Tenant>;
  /** e62be9e: the Workspace of that name (self-enrolment), and the Instances of a namespace (personal workspace). */
  getWorkspace?: (name: string) => Promise<Workspace>;
  listInstances?: (namespace: string) => Promise<Instance[]>;
  now?: () => number;
  logger?: Logger;
  /**
   * e62be9e: the Instance quota webhook reads through this client and keeps its ledger in
   * `quotaLedgerNamespace` (docs/behaviour.md §16.6). Without a client the path is not served.
   */
  client?: KubeClient;
  quotaLedgerNamespace?: string;
  quotaCaps?: Pick<ComposerConfig, 'capCpu' | 'capMemory' | 'capInstances'>;
}

export interface WebhookServer {
  readonly address: string;
  readonly port: number;
  /** Re-reads the certificate now (also done on file changes). Resolves true when it changed. */
  reloadCertificate(): Promise<boolean>;
  close(): Promise<void>;
}

async function readPair(certDir: string): Promise<SecureContextOptions & { cert: Buffer; key: Buffer }> {
  const [cert, key] = await Promise.all([readFile(path.join(certDir, 'tls.crt')), readFile(path.join(certDir, 'tls.key'))]);
  return { cert, key };
}

class HttpError extends Error {
  constructor(
    readonly code: number,
    message: string,
  ) {
    super(message);
  }
}


const MAX_MESSAGE = 1024;

/** Messages can quote names from the request: at most MAX_MESSAGE characters go back (and into the API server's answer). */
function capMessage(response: AdmissionResponse): AdmissionResponse {
  const message = response.status?.message;
  if (!message || message.length <= MAX_MESSAGE) return response;
  return { ...response, status: { ...response.status!, message: `${message.slice(0, MAX_MESSAGE)}…` } };
}

/** Starts the webhook server; rejects when the certificate cannot be read or the port is taken. */
export async function startWebhookServer(options: WebhookServerOptions): Promise<WebhookServer> {
  const log = options.logger;
  const now = options.now ?? Date.now;
  let current = await readPair(options.certDir);

  const quota: InstanceQuotaDeps | undefined =
    options.client && webhookExistsAt('instance-quota', options.level ?? DEFAULT_API_LEVEL)
      ? {
          bypassGroups: options.bypassGroups,
          bypassUsers: options.bypassUsers,
          reads: apiServerQuotaReads(options.client),
          ledger: configMapLedgers(options.client, options.quotaLedgerNamespace ?? 'default'),
          caps: options.quotaCaps ?? { capCpu: '0', capMemory: '0', capInstances: 0 },
          now,
          lock: new NamespaceLock(),
        }
      : undefined;
  /** What each path serves, and the kind of object its reviews carry. */
  const routes = new Map<string, { kind: string; decide: (request: AdmissionRequest) => Promise<AdmissionResponse> | AdmissionResponse }>([
    [MUTATE_PATH, { kind: 'Tenant', decide: (request) => mutateTenant(request, options) }],
    [VALIDATE_PATH, { kind: 'Tenant', decide: (request) => validateTenant(request, options, { getTenant: options.getTenant, getWorkspace: options.getWorkspace, listInstances: options.listInstances, now }) }],
    ...(quota ? [[INSTANCE_WEBHOOK_PATH, { kind: 'Instance', decide: (request: AdmissionRequest) => validateInstanceQuota(request, quota) }] as const] : []),
  ]);

  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const pathname = (req.url ?? '').split('?')[0];
    const send = (code: number, body: unknown) => {
      const text = typeof body === 'string' ? `${body}\n` : JSON.stringify(body);
      // After an oversized body the connection is not reused (what is left of the body was dropped).
      res.writeHead(code, { 'Content-Type': typeof body === 'string' ? 'text/plain; charset=utf-8' : 'application/json', ...(code === 413 ? { Connection: 'close' } : {}) }).end(text);
    };
    try {
      const route = routes.get(pathname);
      if (!route) throw new HttpError(404, `no webhook at ${pathname}`);
      if (req.method !== 'POST') throw new HttpError(405, `${req.method} not allowed: POST an AdmissionReview`);
      const type = (req.headers['content-type'] ?? '').split(';')[0].trim();
      if (type !== 'application/json') throw new HttpError(400, `content type "${type}" not supported, expected application/json`);
      const body = await readCappedBody(req, MAX_BODY_BYTES, () => new HttpError(413, `request body larger than ${MAX_BODY_BYTES} bytes`));
      let parsed: unknown;
      try {
        parsed = JSON.parse(body.toString('utf8'));
      } catch (e) {
        throw new HttpError(400, `request body is not JSON: ${(e as Error).message}`);
      }
      const reviewed = parseReview(parsed, route.kind);
      if ('error' in reviewed) {
        // Answerable (it has a uid): a 400 the API server relays to its client as is. An HTTP
        // error would be "failed calling webhook", a 500 to the client under failurePolicy Fail.
        if (reviewed.uid === undefined) throw new HttpError(400, `bad AdmissionReview: ${reviewed.error}`);
        log?.warn({ webhook: pathname, uid: reviewed.uid, err: reviewed.error }, 'bad AdmissionReview');
        return send(200, review(errored(reviewed.uid, 400, `bad AdmissionReview: ${reviewed.error}`)));
      }
      const { request } = reviewed;
      let response: AdmissionResponse;
      try {
        response = await route.decide(request);
      } catch (e) {
        // A bug in a decision must not take the server down: the API server gets an error answer.
        response = errored(request.uid, 500, (e as Error).message);
      }
      log?.info(
        {
          webhook: pathname,
          operation: request.operation,
          name: request.name,
          namespace: request.namespace,
          user: request.userInfo?.username,
          allowed: response.allowed,
          code: response.status?.code,
          message: response.status?.message,
          warnings: response.warnings,
          patched: response.patch !== undefined,
        },
        'admission',
      );
      send(200, review(capMessage(response)));
    } catch (e) {
      const code = e instanceof HttpError ? e.code : 500;
      log?.warn({ webhook: pathname, code, err: (e as Error).message }, 'bad webhook request');
      if (!res.headersSent) send(code, (e as Error).message);
    }
  };

  const server = https.createServer({ ...current }, (req, res) => void handle(req, res));
  server.on('tlsClientError', (err) => log?.debug({ err: err.message }, 'TLS handshake failed'));

  const reloadCertificate = async (): Promise<boolean> => {
    let next: Awaited<ReturnType<typeof readPair>>;
    try {
      next = await readPair(options.certDir);
    } catch (e) {
      log?.warn({ certDir: options.certDir, err: (e as Error).message }, 'webhook certificate unreadable; keeping the current one');
      return false;
    }
    if (next.cert.equals(current.cert) && next.key.equals(current.key)) return false;
    try {
      server.setSecureContext(next);
    } catch (e) {
      // A half-written pair (new cert, old key) fails here; the next event or poll picks up the rest.
      log?.warn({ certDir: options.certDir, err: (e as Error).message }, 'webhook certificate invalid; keeping the current one');
      return false;
    }
    current = next;
    log?.info({ certDir: options.certDir }, 'webhook certificate reloaded');
    return true;
  };

  let debounce: NodeJS.Timeout | undefined;
  const onChange = () => {
    clearTimeout(debounce);
    debounce = setTimeout(() => void reloadCertificate(), 100);
  };
  let watcher: FSWatcher | undefined;
  try {
    watcher = watch(options.certDir, onChange);
    watcher.on('error', () => watcher?.close());
  } catch {
    /* polling below still works */
  }
  const poll = setInterval(() => void reloadCertificate(), CERT_POLL_MS);
  poll.unref();

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  server.on('error', (e) => log?.error({ err: e.message }, 'webhook server error'));
  const a = server.address() as AddressInfo;
  log?.info({ address: `${a.address}:${a.port}`, certDir: options.certDir }, 'webhook server listening');

  return {
    address: `${a.address}:${a.port}`,
    port: a.port,
    reloadCertificate,
    close: () =>
      new Promise<void>((resolve) => {
        clearInterval(poll);
        clearTimeout(debounce);
        watcher?.close();
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
