// The real API server's verdict on what a fuzz case's `synth`/`gitops` wrote: a sample of accepted
// cases is server-side applied with dryRun=All (schema, defaulting and admission; nothing persisted)
// to the test cluster of the fuzz project's global setup (test/integration/global-setup.ts).
//
// The cluster is shared with other suites, so namespaced objects go to namespaces of this run
// (created here, deleted by close()), while each namespace name the case used is still checked by
// a dry-run create of a Namespace of that name.
import { randomBytes } from 'node:crypto';
import { expect } from 'vitest';
import { ApiError, adminKubeConfig, createObject, deleteNamespace, serverSideApply, type KubeObject } from '../../integration/cluster.ts';

/** Kinds with no CRD in the test cluster (External Secrets Operator, Sealed Secrets): not checkable there. */
export const NO_CRD_IN_CLUSTER = new Set(['external-secrets.io/v1beta1 ExternalSecret', 'bitnami.com/v1alpha1 SealedSecret']);

/** Accepted cases per property whose objects are sent: enough to vary, few enough to keep CI short. */
export const SAMPLE_CASES = 30;

const CONCURRENCY = 8;

export class ServerDryRun {
  private readonly run = randomBytes(3).toString('hex');
  private readonly namespaces = new Map<string, Promise<string>>();
  /** Objects (by content) the API server already accepted: sent once per run. */
  private readonly accepted = new Set<string>();
  sampled = 0;
  sent = 0;
  skipped = 0;
  private failedOnce = false;

  /** Whether this accepted case goes to the API server: the first SAMPLE_CASES, and every one once a case failed (shrinking). */
  wants(): boolean {
    return this.sampled < SAMPLE_CASES || this.failedOnce;
  }

  /** The API server's refusals of these objects, one line each (empty: all accepted). */
  async refusals(objects: readonly KubeObject[]): Promise<string[]> {
    this.sampled++;
    const todo: KubeObject[] = [];
    for (const o of objects) {
      if (NO_CRD_IN_CLUSTER.has(`${o.apiVersion} ${o.kind}`)) {
        this.skipped++;
        continue;
      }
      const key = JSON.stringify(o);
      if (!this.accepted.has(key)) todo.push(o);
    }
    for (const ns of new Set(objects.map((o) => o.metadata.namespace).filter((n): n is string => typeof n === 'string'))) {
      const key = `namespace-name ${ns}`;
      if (!this.accepted.has(key)) todo.push({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
    }
    const refused: string[] = [];
    let next = 0;
    const worker = async () => {
      while (next < todo.length) {
        const o = todo[next++]!;
        const line = await this.refusal(o);
        if (line) refused.push(line);
      }
    };
    await Promise.all(Array.from({ length: Math.min(CONCURRENCY, todo.length) }, worker));
    if (refused.length) this.failedOnce = true;
    return refused.sort();
  }

  private async refusal(o: KubeObject): Promise<string | undefined> {
    const ns = o.metadata.namespace;
    const sent = ns === undefined ? o : { ...o, metadata: { ...o.metadata, namespace: await this.namespaceFor(ns) } };
    this.sent++;
    try {
      await serverSideApply(sent, { dryRun: true, fieldManager: 'crownlabs-composer-fuzz', kubeConfig: adminKubeConfig() });
      this.accepted.add(o.kind === 'Namespace' && o.apiVersion === 'v1' && Object.keys(o.metadata).length === 1 ? `namespace-name ${o.metadata.name}` : JSON.stringify(o));
      return undefined;
    } catch (e) {
      if (!(e instanceof ApiError)) throw e;
      return `${o.apiVersion} ${o.kind} ${ns ? `${ns}/` : ''}${o.metadata.name} -> ${e.code}: ${e.body?.message ?? JSON.stringify(e.body)}`;
    }
  }

  /** This run's stand-in for a namespace the case names, created on first use. */
  private namespaceFor(ns: string): Promise<string> {
    let made = this.namespaces.get(ns);
    if (!made) {
      const name = `fuzz-${this.run}-${this.namespaces.size}`;
      made = createObject({ apiVersion: 'v1', kind: 'Namespace', metadata: { name, labels: { 'crownlabs-composer-test': 'fuzz-dry-run' } } }, adminKubeConfig()).then(() => name);
      this.namespaces.set(ns, made);
    }
    return made;
  }

  /** Throws when the API server refuses an object of this sampled accepted case. */
  async check(objects: readonly KubeObject[] | undefined): Promise<void> {
    if (!objects || !this.wants()) return;
    const refused = await this.refusals(objects);
    if (refused.length) {
      throw new Error(`crownlabs synth/gitops exit 0 and \`validate\` accepts their output, but the API server refuses (server-side apply, dryRun=All):\n  ${refused.slice(0, 8).join('\n  ')}`);
    }
  }

  /** After a property: accepted cases did reach the API server (it is not vacuous), and how many. */
  expectSampled(replay: boolean): void {
    console.log(`[fuzz] API server dry-run: ${this.sampled} accepted cases, ${this.sent} objects sent, ${this.skipped} of kinds with no CRD in the cluster skipped`);
    if (replay) return;
    expect(this.sampled).toBeGreaterThan(0);
    expect(this.sent).toBeGreaterThan(0);
  }

  async close(): Promise<void> {
    const names = await Promise.allSettled(this.namespaces.values());
    await Promise.all(names.map((r) => (r.status === 'fulfilled' ? deleteNamespace(r.value) : undefined)));
  }
}
