import { existsSync } from 'node:fs';
import { join } from 'node:path';
// The config module alone (bundled by path, src/runtime/bundle.mjs): the package index costs ~50 MB
// of RSS in the controller, which needs nothing else of client-node.
import { findHomeDir, KubeConfig } from '@kubernetes/client-node/dist/config.js';
import { KubeApiError, KubeClient } from '../kube/client.ts';

/** Where client-node finds the in-cluster ServiceAccount token. */
const SERVICE_ACCOUNT_TOKEN = '/var/run/secrets/kubernetes.io/serviceaccount/token';

/**
 * The KubeConfig of a long-running command: `--kubeconfig FILE`, else $KUBECONFIG / ~/.kube/config
 * / in-cluster. Where none of them exists, client-node would quietly use http://localhost:8080 and
 * every request would fail ("HTTP protocol is not allowed…", once per informer): this says so instead.
 */
export function loadKubeConfig(file?: string): KubeConfig {
  const kc = new KubeConfig();
  if (file) kc.loadFromFile(file);
  else {
    const home = findHomeDir();
    if (!process.env.KUBECONFIG && !(home && existsSync(join(home, '.kube', 'config'))) && !existsSync(SERVICE_ACCOUNT_TOKEN)) {
      throw new Error('no kubeconfig: give --kubeconfig FILE, set KUBECONFIG, or create ~/.kube/config (in a pod, its ServiceAccount is used)');
    }
    kc.loadFromDefault();
  }
  return kc;
}

/**
 * Checks, before a long-running command starts its watches, that the API server answers (GET
 * /version) and takes the credentials: one clear error instead of one per watch, retried forever.
 */
export async function checkApiServer(kc: KubeConfig, timeoutMs = 15_000): Promise<void> {
  const client = new KubeClient(kc, { maxThrottleRetries: 0 });
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer in ${timeoutMs / 1000} s`)), timeoutMs);
  });
  try {
    await Promise.race([client.request('GET', '/version'), timeout]);
  } catch (e) {
    // Only a refusal of the credentials stops here: a server that answers something else is reachable.
    if (e instanceof KubeApiError && e.code !== 401) return;
    const why = e instanceof KubeApiError ? 'the credentials were refused (401 Unauthorized)' : (e as Error).message.split('\n')[0];
    throw new Error(`cannot reach the Kubernetes API server ${client.server}: ${why}`);
  } finally {
    clearTimeout(timer);
  }
}
