/**
 * The provisioning Jobs of a set (a MyDrive's, docs/behaviour.md §16.8; a SharedVolume's reconciler
 * follows the same rules itself, §16.7): created once, never applied again nor pruned, and none for
 * a claim already labelled provisioned. When one has succeeded its claim is labelled, so that no
 * Job runs for it again, also after the Job is gone. A Job left by another operator (not labelled
 * by us, so not cached) is looked up on the server, and read, not replaced.
 */
import type { KubeObject } from '../inputs/types.ts';
import { PROVISIONING_DONE, PROVISIONING_LABEL } from '../model/shared-volume.ts';
import type { CachedObject } from '../kube/informer.ts';
import { objectId } from './apply-set.ts';
import type { ControllerContext } from './context.ts';
import { liveOrServer } from './live-lookup.ts';

const CLAIM = { apiVersion: 'v1', kind: 'PersistentVolumeClaim' } as const;

interface ProvisioningJob {
  job: KubeObject;
  claim: { namespace?: string; name: string };
  live?: CachedObject;
}

/** A rendered Job that provisions a claim: the one claim it mounts. */
function provisionedClaim(o: KubeObject): string | undefined {
  if (o.kind !== 'Job' || !o.metadata.name.endsWith('-provision')) return undefined;
  const volumes = (o as { spec?: { template?: { spec?: { volumes?: { persistentVolumeClaim?: { claimName?: string } }[] } } } }).spec?.template?.spec?.volumes ?? [];
  return volumes.length === 1 ? volumes[0].persistentVolumeClaim?.claimName : undefined;
}

export interface ProvisioningPlan {
  /** The set to apply: the rendered one without the Jobs that exist or are not needed. */
  set: KubeObject[];
  /** Keeps those Jobs from the prune. */
  keep: (child: CachedObject) => boolean;
  /** After the apply: labels the claims whose Job succeeded. */
  settle: (live: ReadonlyMap<string, Record<string, unknown>>) => Promise<void>;
}

export async function provisioningPlan(ctx: ControllerContext, rendered: KubeObject[]): Promise<ProvisioningPlan> {
  const jobs: ProvisioningJob[] = [];
  const dropped = new Set<string>();
  for (const o of rendered) {
    const claimName = provisionedClaim(o);
    if (!claimName) continue;
    const claim = { namespace: o.metadata.namespace, name: claimName };
    const liveClaim = ctx.caches.liveOf({ ...CLAIM, metadata: claim });
    if (liveClaim?.metadata.labels?.[PROVISIONING_LABEL] === PROVISIONING_DONE) {
      dropped.add(objectId(o));
      continue;
    }
    const live = await liveOrServer(ctx, o);
    if (live) dropped.add(objectId(o));
    jobs.push({ job: o, claim, live });
  }
  const names = new Set(rendered.filter((o) => provisionedClaim(o)).map(objectId));
  return {
    set: rendered.filter((o) => !dropped.has(objectId(o))),
    keep: (child) => names.has(objectId(child)),
    settle: async (after) => {
      for (const j of jobs) {
        const job = (after.get(objectId(j.job)) ?? j.live) as { status?: { succeeded?: number } } | undefined;
        if (!job || (job.status?.succeeded ?? 0) < 1) continue;
        await markProvisioned(ctx, j.claim);
      }
    },
  };
}

/** Labels a claim whose provisioning Job succeeded: no Job runs for it again, also once the Job is gone. */
export async function markProvisioned(ctx: ControllerContext, claim: { namespace?: string; name: string }): Promise<void> {
  const res = await ctx.client.request('PATCH', ctx.client.path(CLAIM.apiVersion, CLAIM.kind, claim.namespace, claim.name), {
    body: { metadata: { labels: { [PROVISIONING_LABEL]: PROVISIONING_DONE } } },
    contentType: 'application/merge-patch+json',
  });
  ctx.caches.noteWritten(res);
}
