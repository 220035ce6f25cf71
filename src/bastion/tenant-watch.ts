/**
 * `crownlabs bastion-keys`: keeps the authorized_keys file in step with every Tenant (docs/behaviour.md §12;
 * no label filter, deletes included). A full sync from a list at start, then a list+watch
 * informer; events are applied one at a time (read, update, atomic write), and the file is
 * written only when its text changes.
 */
import { CustomObjectsApi, makeInformer, type KubeConfig, type KubernetesListObject, type KubernetesObject } from '@kubernetes/client-node';
import { syncAuthorizedKeys, updateAuthorizedKeys, type InvalidKey, type KeysUpdate } from './authorized-keys.ts';
import { readKeysFile, writeKeysFileAtomically } from './keys-file.ts';

type TenantObject = KubernetesObject & { spec?: { publicKeys?: string[] } };
export type Log = (line: string) => void;

/** What the keys sidecar reads: every Tenant, by a list then a watch (the RBAC derivation reads this). */
export const TENANTS = { group: 'crownlabs.polito.it', version: 'v1alpha2', plural: 'tenants', verbs: ['list', 'watch'] } as const;

export interface BastionKeysOptions {
  readonly kubeConfig: KubeConfig;
  readonly path: string;
  readonly log: Log;
  readonly signal?: AbortSignal;
  /** Delay before re-reading after a read error, and before restarting a failed watch. Default 5 s. */
  readonly retryMs?: number;
}

export async function runBastionKeys(opts: BastionKeysOptions): Promise<void> {
  const { log } = opts;
  const retryMs = opts.retryMs ?? 5000;
  const api = opts.kubeConfig.makeApiClient(CustomObjectsApi);
  const list = () => api.listClusterCustomObject({ group: TENANTS.group, version: TENANTS.version, plural: TENANTS.plural }) as Promise<KubernetesListObject<TenantObject>>;
  const reportInvalid = (invalid: InvalidKey[]) => {
    for (const i of invalid) log(`bastion-keys: Tenant ${i.tenant}: publicKeys[${i.index}] skipped: ${i.reason}`);
  };

  let chain: Promise<void> = Promise.resolve();
  /** Applies one change to the file; a read error is retried later, a write error only logged (as upstream). */
  const enqueue = (what: string, change: (current: string) => KeysUpdate) => {
    chain = chain.then(async () => {
      let current: string;
      try {
        current = await readKeysFile(opts.path);
      } catch (err) {
        log(`bastion-keys: reading ${opts.path} failed (${(err as Error).message}); retrying ${what} in ${retryMs} ms`);
        setTimeout(() => enqueue(what, change), retryMs).unref();
        return;
      }
      const { text, invalid } = change(current);
      reportInvalid(invalid);
      if (text === current) return;
      try {
        await writeKeysFileAtomically(opts.path, text);
        log(`bastion-keys: ${what}: ${opts.path} written (${text === '' ? 0 : text.split('\n').length} lines)`);
      } catch (err) {
        log(`bastion-keys: writing ${opts.path} failed: ${(err as Error).message}`);
      }
    });
  };
  const keysOf = (t: TenantObject) => ({ name: t.metadata!.name!, publicKeys: t.spec?.publicKeys ?? [] });

  // Full sync first, so that a fresh file holds every key before the first watch event.
  for (;;) {
    try {
      const tenants = (await list()).items;
      enqueue(`full sync of ${tenants.length} Tenants`, (current) => syncAuthorizedKeys(current, tenants.map(keysOf)));
      break;
    } catch (err) {
      log(`bastion-keys: listing Tenants failed: ${errorLine(err)}; retrying in ${retryMs} ms`);
      if (await aborted(retryMs, opts.signal)) return;
    }
  }

  const informer = makeInformer<TenantObject>(opts.kubeConfig, `/apis/${TENANTS.group}/${TENANTS.version}/${TENANTS.plural}`, list);
  informer.on('add', (t) => enqueue(`Tenant ${t.metadata?.name} added`, (c) => updateAuthorizedKeys(c, keysOf(t))));
  informer.on('update', (t) => enqueue(`Tenant ${t.metadata?.name} updated`, (c) => updateAuthorizedKeys(c, keysOf(t))));
  informer.on('delete', (t) => enqueue(`Tenant ${t.metadata?.name} deleted`, (c) => updateAuthorizedKeys(c, keysOf(t), false)));
  informer.on('error', (err) => {
    if (opts.signal?.aborted) return;
    log(`bastion-keys: watch of Tenants failed: ${errorLine(err)}; restarting in ${retryMs} ms`);
    setTimeout(() => {
      if (!opts.signal?.aborted) informer.start().catch((e) => log(`bastion-keys: restarting the watch failed: ${errorLine(e)}`));
    }, retryMs).unref();
  });
  await informer.start();
  log(`bastion-keys: watching Tenants, keys in ${opts.path}`);
  await new Promise<void>((resolve) => {
    if (opts.signal?.aborted) return resolve();
    opts.signal?.addEventListener('abort', () => resolve(), { once: true });
    if (!opts.signal) setInterval(() => undefined, 1 << 30); // run until killed
  });
  await informer.stop();
  await chain;
}

function errorLine(err: unknown): string {
  const e = err as { code?: number; message?: string };
  return String(e?.message ?? err).split('\n')[0];
}

function aborted(ms: number, signal?: AbortSignal): Promise<boolean> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve(true);
    const t = setTimeout(() => resolve(false), ms);
    signal?.addEventListener('abort', () => (clearTimeout(t), resolve(true)), { once: true });
  });
}
