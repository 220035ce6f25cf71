/**
 * Leader election through a coordination.k8s.io/v1 Lease (as controller-runtime): acquire when
 * the Lease is free or expired, renew every `retryPeriod`; losing it calls `onLost`. A renewal
 * that fails (an API error, a conflicting write) is retried until `renewDeadline` has passed
 * since the last one that succeeded, as client-go does: one failed request must not stop the
 * leader, whose webhooks every Tenant write waits for.
 */
import { hostname } from 'node:os';
import { randomBytes } from 'node:crypto';
import { isConflict, isNotFound, type KubeClient } from '../kube/client.ts';

export interface LeaderElectionOptions {
  namespace: string;
  name: string;
  identity?: string;
  leaseDurationSeconds?: number;
  retryPeriodMs?: number;
  /** How long renewals may fail before leadership is given up; below the lease duration. @default 10 s */
  renewDeadlineMs?: number;
  /** @default Date.now */
  now?: () => number;
  onLost: () => void;
}

/** What one attempt found: the Lease is ours, another holder's, or the attempt failed. */
type Renewal = 'ours' | 'theirs' | 'retry';

export class LeaderElector {
  readonly identity: string;
  private timer?: NodeJS.Timeout;
  private leading = false;
  private stopped = false;

  constructor(
    private readonly client: KubeClient,
    private readonly options: LeaderElectionOptions,
  ) {
    this.identity = options.identity ?? `${hostname()}_${randomBytes(6).toString('hex')}`;
  }

  get isLeader(): boolean {
    return this.leading;
  }

  /** Resolves once this process holds the Lease. */
  async acquire(): Promise<void> {
    for (;;) {
      if (this.stopped) throw new Error('leader election stopped');
      if ((await this.tryAcquireOrRenew()) === 'ours') break;
      await new Promise((r) => setTimeout(r, this.options.retryPeriodMs ?? 2000));
    }
    this.leading = true;
    const now = this.options.now ?? Date.now;
    const deadline = this.options.renewDeadlineMs ?? 10_000;
    let renewedAt = now();
    const renew = async () => {
      if (this.stopped) return;
      let outcome: Renewal = 'retry';
      try {
        outcome = await this.tryAcquireOrRenew();
      } catch {
        outcome = 'retry';
      }
      if (outcome === 'ours') renewedAt = now();
      // Another holder is final; a failure is not, until the deadline.
      if (outcome === 'theirs' || (outcome === 'retry' && now() - renewedAt >= deadline)) {
        this.leading = false;
        this.options.onLost();
        return;
      }
      this.timer = setTimeout(() => void renew(), this.options.retryPeriodMs ?? 2000);
    };
    this.timer = setTimeout(() => void renew(), this.options.retryPeriodMs ?? 2000);
  }

  /** Stops renewing and releases the Lease (so a successor does not wait for it to expire). */
  async release(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    if (!this.leading) return;
    this.leading = false;
    try {
      const lease = await this.client.request('GET', this.path());
      if (lease.spec?.holderIdentity === this.identity) {
        lease.spec.holderIdentity = '';
        lease.spec.leaseDurationSeconds = 1;
        await this.client.request('PUT', this.path(), { body: lease });
      }
    } catch {
      /* best effort */
    }
  }

  private path(name?: string): string {
    return this.client.path('coordination.k8s.io/v1', 'Lease', this.options.namespace, name ?? this.options.name);
  }

  private async tryAcquireOrRenew(): Promise<Renewal> {
    const now = new Date();
    const duration = this.options.leaseDurationSeconds ?? 15;
    const microNow = now.toISOString().replace('Z', '000Z');
    let lease: any;
    try {
      lease = await this.client.request('GET', this.path());
    } catch (e) {
      if (!isNotFound(e)) throw e;
      try {
        await this.client.request('POST', this.path('').replace(/\/$/, ''), {
          body: {
            apiVersion: 'coordination.k8s.io/v1',
            kind: 'Lease',
            metadata: { name: this.options.name, namespace: this.options.namespace },
            spec: { holderIdentity: this.identity, leaseDurationSeconds: duration, acquireTime: microNow, renewTime: microNow, leaseTransitions: 0 },
          },
        });
        return 'ours';
      } catch (e2) {
        if (isConflict(e2)) return 'retry';
        throw e2;
      }
    }
    const spec = lease.spec ?? {};
    const holder: string = spec.holderIdentity ?? '';
    const renewed = spec.renewTime ? Date.parse(spec.renewTime) : 0;
    const expired = renewed + (spec.leaseDurationSeconds ?? duration) * 1000 < now.getTime();
    if (holder && holder !== this.identity && !expired) return 'theirs';
    const transitions = (spec.leaseTransitions ?? 0) + (holder === this.identity ? 0 : 1);
    lease.spec = {
      ...spec,
      holderIdentity: this.identity,
      leaseDurationSeconds: duration,
      renewTime: microNow,
      acquireTime: holder === this.identity ? spec.acquireTime : microNow,
      leaseTransitions: transitions,
    };
    try {
      await this.client.request('PUT', this.path(), { body: lease });
      return 'ours';
    } catch (e) {
      if (isConflict(e)) return 'retry';
      throw e;
    }
  }
}
