// The Tenant webhooks as the API server calls them: the mutating hook first, its JSON patch applied,
// then the validating hook on the patched object, both over HTTPS to the server the controller runs
// (src/webhooks/server.ts), in process on loopback.
import https from 'node:https';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import fastJsonPatch from 'fast-json-patch';
import type { Tenant } from '../../src/inputs/types.ts';
import type { AdmissionResponse, Operation, UserInfo } from '../../src/webhooks/admission.ts';
import { MUTATE_PATH, startWebhookServer, VALIDATE_PATH, type WebhookServer, type WebhookServerOptions } from '../../src/webhooks/server.ts';
import { makeServingCert } from './tls.ts';

export interface AdmissionAttempt {
  operation: Operation;
  userInfo: UserInfo;
  /** The object the client sends (absent on DELETE). */
  object?: Tenant;
  /** The stored object (UPDATE, DELETE). */
  oldObject?: Tenant;
}

export interface AdmissionOutcome {
  /** Both hooks let the write through. */
  allowed: boolean;
  /** The refusing hook's status code and message. */
  code?: number;
  message?: string;
  /** The mutating hook's warnings. */
  warnings: string[];
  /** The object that would be stored (the client's, patched). */
  stored?: Tenant;
  mutate: AdmissionResponse;
  validate?: AdmissionResponse;
}

export interface AdmissionChain {
  admit(attempt: AdmissionAttempt): Promise<AdmissionOutcome>;
  close(): Promise<void>;
}

/** Starts the webhook server with `options` (port, host and certificates are chosen here). */
export async function startAdmissionChain(options: Omit<WebhookServerOptions, 'port' | 'host' | 'certDir'>): Promise<AdmissionChain> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'tenant-admission-'));
  const certDir = path.join(dir, 'certs');
  const cert = await makeServingCert(path.join(dir, 'ca'), certDir);
  let server: WebhookServer;
  try {
    server = await startWebhookServer({ ...options, port: 0, host: '127.0.0.1', certDir });
  } catch (e) {
    await rm(dir, { recursive: true, force: true });
    throw e;
  }
  const agent = new https.Agent({ keepAlive: true, ca: cert.caPem });
  let uid = 0;

  const post = (urlPath: string, request: Record<string, unknown>) =>
    new Promise<AdmissionResponse>((resolve, reject) => {
      const body = JSON.stringify({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', request });
      const req = https.request({ host: '127.0.0.1', port: server.port, path: urlPath, method: 'POST', agent, headers: { 'Content-Type': 'application/json' } }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          if (res.statusCode !== 200) return reject(new Error(`${urlPath} answered HTTP ${res.statusCode}: ${text}`));
          resolve((JSON.parse(text) as { response: AdmissionResponse }).response);
        });
      });
      req.on('error', reject);
      req.end(body);
    });

  const admit = async (attempt: AdmissionAttempt): Promise<AdmissionOutcome> => {
    const name = attempt.object?.metadata.name ?? attempt.oldObject?.metadata.name ?? '';
    const request = (object: unknown) => ({
      uid: `uid-${++uid}`,
      kind: { group: 'crownlabs.polito.it', version: 'v1alpha2', kind: 'Tenant' },
      resource: { group: 'crownlabs.polito.it', version: 'v1alpha2', resource: 'tenants' },
      name,
      operation: attempt.operation,
      userInfo: attempt.userInfo,
      object: object ?? null,
      oldObject: attempt.oldObject ?? null,
      dryRun: false,
    });
    const mutate = await post(MUTATE_PATH, request(attempt.object));
    if (!mutate.allowed) return { allowed: false, code: mutate.status?.code, message: mutate.status?.message, warnings: mutate.warnings ?? [], mutate };
    let stored = structuredClone(attempt.object);
    if (mutate.patch) {
      const ops = JSON.parse(Buffer.from(mutate.patch, 'base64').toString('utf8'));
      stored = fastJsonPatch.applyPatch(structuredClone(attempt.object), ops, true, false).newDocument;
    }
    const validate = await post(VALIDATE_PATH, request(stored));
    return {
      allowed: validate.allowed,
      code: validate.allowed ? undefined : validate.status?.code,
      message: validate.allowed ? undefined : validate.status?.message,
      warnings: mutate.warnings ?? [],
      stored,
      mutate,
      validate,
    };
  };

  return {
    admit,
    close: async () => {
      agent.destroy();
      await server.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
}
