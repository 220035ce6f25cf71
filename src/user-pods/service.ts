/**
 * The user pods API (seed 004) over the cluster: every piece of state is on the objects (labels
 * and annotations of the pods, the token Secrets, the Services), so a restarted server answers as
 * the old one would and resumes the creations and deletions still under way.
 */
import type { Logger } from 'pino';
import type { KubeObject } from '../inputs/types.ts';
import { renderStartObjects, renderTokenSecret, renderUserPod, type LivePod } from '../compose/user-pods.ts';
import { KubeApiError, type KubeClient } from '../kube/client.ts';
import { deleteObject, getObject, listObjects, serverSideApply } from '../kube/objects.ts';
import {
  CREATED_FOR_POD_LABEL,
  USER_POD_ANNOTATION,
  USER_POD_LABEL,
  copyTokenKeys,
  ingressHost,
  ingressPort,
  ownerFromLabels,
  podAge,
  podNameCandidates,
  podNameProblem,
  userIdProblem,
  sshServiceName,
  tokenSecretName,
  userPodSelector,
  userStorageName,
  legacyUserStorageName,
} from '../model/user-pods.ts';
import { sharedValidator } from '../validate/validator.ts';
import type { UserPodsConfig } from './config.ts';
import { badRequest, RequestError } from './errors.ts';
import { fetchManifest, parseManifestPrefix, type ManifestPrefix } from './manifest.ts';
import type { PodFileReader } from './pod-files.ts';

export interface PodInfo {
  pod_name: string;
  container_name: string;
  image_name: string;
  pod_ip: string;
  node_ip: string;
  owner: string;
  age: string;
  status: string;
  url: string;
  tokens: Record<string, string>;
  k8s_pod_info: Record<string, string>;
}

export interface CreatePodInput {
  yaml_url: string;
  user_id: string;
  settings: Record<string, Record<string, string>>;
}

export interface UserPodsServiceOptions {
  client: KubeClient;
  config: UserPodsConfig;
  files: PodFileReader;
  log: Logger;
  /** How often creations and deletions are checked (ms). */
  pollMs?: number;
  /** Attempts to read each token of a new pod, and the pause between them (seed: 10 × 1 s). */
  tokenAttempts?: number;
  tokenRetryMs?: number;
  now?: () => number;
}

interface Pod extends LivePod {
  apiVersion: 'v1';
  kind: 'Pod';
  metadata: LivePod['metadata'] & { deletionTimestamp?: string; creationTimestamp?: string };
  spec: { containers: { name: string; image?: string; ports?: { containerPort: number }[] }[] };
  status?: { phase?: string; podIP?: string; hostIP?: string; startTime?: string; conditions?: { type: string; status: string }[] };
}

interface Job {
  userId: string;
  done: Promise<boolean>;
}

interface Owned {
  metadata: { name: string; uid?: string; creationTimestamp?: string; labels?: Record<string, string>; ownerReferences?: { kind: string; uid: string }[] };
}

/**
 * Whether an object made for a pod (Service, Ingress, token Secret) belongs to that pod instance.
 * A pod name is reused (by any user) once free, so the name alone (`createdForPod`) cannot tell a
 * leftover from the current pod's: ours carry the pod's uid as owner reference; an unowned one
 * (made by the seed's backend) counts only when it is not older than the pod.
 */
function madeFor(o: Owned, pod: { uid?: string; creationTimestamp?: string }): boolean {
  const refs = (o.metadata.ownerReferences ?? []).filter((r) => r.kind === 'Pod');
  if (refs.length) return refs.some((r) => r.uid === pod.uid);
  const made = Date.parse(o.metadata.creationTimestamp ?? '');
  const podMade = Date.parse(pod.creationTimestamp ?? '');
  return Number.isFinite(made) && Number.isFinite(podMade) && made >= podMade;
}

function checkUserId(userId: string): void {
  const problem = userIdProblem(userId);
  if (problem) throw badRequest(problem);
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function isReady(pod: Pod): boolean {
  return (pod.status?.conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True');
}

/** `2006-01-02T15:04:05Z`, as the seed formats the start time in `status`. */
function goTime(t: string | undefined): string {
  return t ? new Date(t).toISOString().replace(/\.\d{3}Z$/, 'Z') : '';
}

export class UserPodsService {
  private readonly creating = new Map<string, Job>();
  private readonly deleting = new Map<string, Job>();
  private stopped = false;
  private nameLock: Promise<unknown> = Promise.resolve();
  private readonly client: KubeClient;
  private readonly config: UserPodsConfig;
  private readonly ns: string;
  private readonly log: Logger;
  private readonly pollMs: number;
  private readonly now: () => number;
  private readonly prefixes: ManifestPrefix[];

  constructor(private readonly o: UserPodsServiceOptions) {
    this.prefixes = o.config.manifestUrlPrefixes.map(parseManifestPrefix);
    this.client = o.client;
    this.config = o.config;
    this.ns = o.config.namespace;
    this.log = o.log;
    this.pollMs = o.pollMs ?? 1000;
    this.now = o.now ?? Date.now;
  }

  /** Recovers what a previous server left under way: pods still being created or deleted. */
  async start(): Promise<void> {
    for (const pod of await this.listPods(USER_POD_LABEL.user)) {
      const owner = ownerFromLabels(pod.metadata.labels);
      if (pod.metadata.deletionTimestamp) this.trackDeletion(pod.metadata.name, owner, pod.metadata.uid);
      else if (pod.metadata.annotations?.[USER_POD_ANNOTATION.state] === 'creating') this.trackCreation(pod.metadata.name, owner);
    }
    this.log.info({ creating: this.creating.size, deleting: this.deleting.size }, 'user pods state recovered from the cluster');
  }

  /** Stops polling; jobs under way resolve false and are resumed by the next server. */
  stop(): void {
    this.stopped = true;
  }

  /** Jobs under way (tests wait for them to settle). */
  async idle(): Promise<void> {
    await Promise.all([...this.creating.values(), ...this.deleting.values()].map((j) => j.done));
  }

  // ----- API ---------------------------------------------------------------------------------

  async getPods(userId: string): Promise<PodInfo[]> {
    checkUserId(userId);
    const pods = (await this.listPods(userPodSelector(userId))).filter((p) => ownerFromLabels(p.metadata.labels) === userId);
    if (pods.length === 0) return [];
    const names = pods.map((p) => p.metadata.name).join(',');
    const selector = `${CREATED_FOR_POD_LABEL} in (${names})`;
    const [services, secrets] = await Promise.all([listObjects(this.client, 'v1', 'Service', this.ns, { labelSelector: selector }), listObjects(this.client, 'v1', 'Secret', this.ns, { labelSelector: selector })]);
    return pods.map((p) => this.podInfo(p, services, secrets));
  }

  async createPod(input: CreatePodInput, remoteIp: string): Promise<{ pod_name: string }> {
    checkUserId(input.user_id);
    const manifest = await fetchManifest(input.yaml_url, this.prefixes);
    const siloIp = remoteIp;
    const siloHostname = this.config.hostnameList.find((h) => h.address === siloIp)?.hostname;
    // One name choice at a time: two requests must not pick the same free name.
    const run = this.nameLock.then(async () => {
      const taken = new Set((await this.listPods()).map((p) => p.metadata.name));
      const podName = podNameCandidates(manifest.metadata.name, input.user_id).find((n) => !taken.has(n));
      if (!podName) throw new RequestError(409, `no free pod name: ${manifest.metadata.name}-<user> and -1 … -9 are all in use`);
      const nameProblem = podNameProblem(podName);
      if (nameProblem) throw badRequest(nameProblem);
      const { pod, storage } = renderUserPod({
        podName,
        namespace: this.ns,
        userId: input.user_id,
        manifest,
        settings: input.settings,
        siloIp,
        siloHostname,
        createDeadline: new Date(this.now() + this.config.timeoutCreate).toISOString(),
        defaultRestartPolicy: this.config.defaultRestartPolicy,
        localRegistryUrl: this.config.localRegistryURL,
        localRegistrySecret: this.config.localRegistrySecret,
        nfsStorageRoot: this.config.nfsStorageRoot,
      });
      const issues = sharedValidator().validate(pod);
      if (issues.length) throw badRequest(`invalid manifest at ${input.yaml_url}: ${issues.map((i) => `${i.field}: ${i.message}`).join('; ')}`);
      try {
        await serverSideApply(this.client, pod, { dryRun: true });
      } catch (e) {
        throw this.rejected(e, input.yaml_url);
      }
      // The storage must be this user's (checked by its labels) before the pod is made to mount it.
      for (const o of storage) {
        const live = await getObject(this.client, o.apiVersion, o.kind, this.ns, o.metadata.name);
        if (live && ownerFromLabels(live.metadata.labels) !== input.user_id) {
          this.log.error({ user: input.user_id, kind: o.kind, name: o.metadata.name, owner: ownerFromLabels(live.metadata.labels) }, 'storage name taken by another user');
          throw new RequestError(409, `the storage ${o.metadata.name} of user ${input.user_id} exists and is not theirs; nothing was created (see the server log)`);
        }
      }
      const created = (await serverSideApply(this.client, pod)) as { metadata?: { uid?: string } };
      try {
        for (const o of storage) await serverSideApply(this.client, o);
      } catch (e) {
        await this.deletePodObjects(podName, created.metadata?.uid).catch(() => undefined);
        throw e;
      }
      return podName;
    });
    this.nameLock = run.catch(() => undefined);
    const podName = await run;
    this.log.info({ pod: podName, user: input.user_id, url: input.yaml_url }, 'pod created');
    this.trackCreation(podName, input.user_id);
    return { pod_name: podName };
  }

  /** Ready once the user's pod reached Ready and its start jobs ran; false for anyone else's pod (seed default). */
  async watchCreatePod(userId: string, podName: string): Promise<{ ready: boolean }> {
    checkUserId(userId);
    const job = this.creating.get(podName);
    if (job) return { ready: job.userId === userId && (await job.done) };
    const pod = await this.getPod(podName);
    if (!pod || ownerFromLabels(pod.metadata.labels) !== userId || pod.metadata.deletionTimestamp) return { ready: false };
    const state = pod.metadata.annotations?.[USER_POD_ANNOTATION.state];
    if (state === 'creating') return { ready: await this.trackCreation(podName, userId).done };
    return { ready: state !== 'failed' };
  }

  async deletePod(userId: string, podName: string): Promise<{ requested: boolean }> {
    checkUserId(userId);
    const pod = await this.getPod(podName);
    // The same answer for a pod that does not exist and one of another user.
    if (!pod || ownerFromLabels(pod.metadata.labels) !== userId) throw badRequest(`user ${userId} has no pod ${podName}`);
    if (pod.metadata.deletionTimestamp || this.deleting.has(podName)) throw badRequest(`pod ${podName} is already being deleted`);
    await this.deleteObject('v1', 'Pod', podName, pod.metadata.uid);
    this.trackDeletion(podName, userId, pod.metadata.uid);
    return { requested: true };
  }

  /** True once the user's pod is gone; true for anyone else's pod or none (seed default). */
  async watchDeletePod(userId: string, podName: string): Promise<{ deleted: boolean }> {
    checkUserId(userId);
    const job = this.deleting.get(podName);
    if (job) return { deleted: job.userId !== userId || (await job.done) };
    const pod = await this.getPod(podName);
    if (!pod || ownerFromLabels(pod.metadata.labels) !== userId) return { deleted: true };
    if (pod.metadata.deletionTimestamp) return { deleted: await this.trackDeletion(podName, userId, pod.metadata.uid).done };
    return { deleted: false };
  }

  /** Deletes every pod of the user and the user's storage; true when all of it is gone in time. */
  async deleteAllUser(userId: string): Promise<{ deleted: boolean }> {
    checkUserId(userId);
    const pods = (await this.listPods(userPodSelector(userId))).filter((p) => ownerFromLabels(p.metadata.labels) === userId);
    const jobs: Promise<boolean>[] = [];
    for (const p of pods) {
      const name = p.metadata.name;
      if (!p.metadata.deletionTimestamp && !this.deleting.has(name)) await this.deleteObject('v1', 'Pod', name, p.metadata.uid);
      jobs.push(this.trackDeletion(name, userId, p.metadata.uid, { keepStorage: true }).done);
    }
    const results = await Promise.all(jobs);
    const storage = await this.deleteStorage(userId, 2 * this.config.timeoutDelete);
    return { deleted: results.every(Boolean) && storage };
  }

  /** The owner (`user@domain`) of the user pod with this IP, or undefined. */
  async getPodIpOwner(ip: string): Promise<string | undefined> {
    const pods = await this.listPods(USER_POD_LABEL.user, `status.podIP=${ip}`);
    const owner = pods.map((p) => ownerFromLabels(p.metadata.labels)).find(Boolean);
    return owner || undefined;
  }

  // ----- creation ----------------------------------------------------------------------------

  private trackCreation(podName: string, userId: string): Job {
    const existing = this.creating.get(podName);
    if (existing) return existing;
    const job: Job = { userId, done: this.runCreation(podName, userId) };
    this.creating.set(podName, job);
    void job.done.finally(() => this.creating.get(podName) === job && this.creating.delete(podName));
    return job;
  }

  private async runCreation(podName: string, userId: string): Promise<boolean> {
    let uid: string | undefined;
    try {
      for (;;) {
        if (this.stopped) return false;
        const pod = await this.getPod(podName);
        if (!pod || pod.metadata.deletionTimestamp || ownerFromLabels(pod.metadata.labels) !== userId) return false;
        uid = pod.metadata.uid;
        if (isReady(pod)) {
          await this.runStartJobs(pod);
          this.log.info({ pod: podName }, 'pod ready');
          return true;
        }
        const deadline = Date.parse(pod.metadata.annotations?.[USER_POD_ANNOTATION.createDeadline] ?? '');
        if (!Number.isFinite(deadline) || this.now() >= deadline) {
          this.log.warn({ pod: podName }, 'pod not ready in time: deleting it');
          await this.failCreation(podName, userId, uid);
          return false;
        }
        await sleep(this.pollMs);
      }
    } catch (e) {
      this.log.error({ pod: podName, err: (e as Error).message }, 'creation failed: deleting the pod');
      await this.failCreation(podName, userId, uid).catch(() => undefined);
      return false;
    }
  }

  /** SSH/HTTP Services and Ingress, then the tokens, then the pod marked `ready` (idempotent: rerun after a restart). */
  private async runStartJobs(pod: Pod): Promise<void> {
    for (const o of renderStartObjects(pod, { namespace: this.ns, ingressDomain: this.config.ingressDomain, wildcardSecret: this.config.ingressWildcardSecret })) {
      await serverSideApply(this.client, o);
    }
    const tokens = await this.copyTokens(pod);
    if (Object.keys(tokens).length) await serverSideApply(this.client, renderTokenSecret(pod, this.ns, tokens));
    await this.annotate(pod.metadata.name, pod.metadata.uid, 'ready');
  }

  private async copyTokens(pod: Pod): Promise<Record<string, string>> {
    const out: Record<string, string> = {};
    const container = pod.spec.containers[0]?.name ?? '';
    const limit = this.config.tokenByteLimit;
    for (const key of copyTokenKeys(pod.metadata.annotations)) {
      const attempts = this.o.tokenAttempts ?? 10;
      for (let i = 0; i < attempts; i++) {
        try {
          // Capped here too: the limit holds whatever the reader does.
          const bytes = (await this.o.files.read(this.ns, pod.metadata.name, container, `/tmp/${key}`, limit)).subarray(0, limit);
          if (bytes.length === 0) throw new Error('empty');
          out[key] = bytes.toString('utf8');
          break;
        } catch (e) {
          if (i === attempts - 1) this.log.warn({ pod: pod.metadata.name, token: key, err: (e as Error).message }, 'token not copied');
          else await sleep(this.o.tokenRetryMs ?? 1000);
        }
      }
    }
    return out;
  }

  private async failCreation(podName: string, userId: string, uid: string | undefined): Promise<void> {
    await this.annotate(podName, uid, 'failed').catch(() => undefined);
    await this.deletePodObjects(podName, uid);
    this.trackDeletion(podName, userId, uid);
  }

  private async annotate(podName: string, uid: string | undefined, state: 'ready' | 'failed'): Promise<void> {
    await this.client.request('PATCH', this.client.path('v1', 'Pod', this.ns, podName), {
      // The uid makes the patch conditional: only this pod, not a namesake made since.
      body: { metadata: { uid, annotations: { [USER_POD_ANNOTATION.state]: state } } },
      contentType: 'application/merge-patch+json',
    });
  }

  // ----- deletion ----------------------------------------------------------------------------

  private trackDeletion(podName: string, userId: string, uid: string | undefined, opts: { keepStorage?: boolean } = {}): Job {
    const existing = this.deleting.get(podName);
    if (existing) return existing;
    const job: Job = { userId, done: this.runDeletion(podName, userId, uid, opts.keepStorage ?? false) };
    this.deleting.set(podName, job);
    void job.done.finally(() => this.deleting.get(podName) === job && this.deleting.delete(podName));
    return job;
  }

  /** Waits for the pod to go, then removes its Services, Ingress, tokens and (last pod) the user's storage. */
  private async runDeletion(podName: string, userId: string, uid: string | undefined, keepStorage: boolean): Promise<boolean> {
    const deadline = this.now() + this.config.timeoutDelete;
    try {
      for (;;) {
        if (this.stopped) return false;
        const pod = await this.getPod(podName);
        // Gone, or a namesake made since (without a uid, as before: another owner's).
        if (!pod || (uid ? pod.metadata.uid !== uid : ownerFromLabels(pod.metadata.labels) !== userId)) break;
        if (this.now() >= deadline) {
          this.log.warn({ pod: podName }, 'pod not deleted in time');
          return false;
        }
        await sleep(this.pollMs);
      }
      await this.deletePodObjects(podName, uid, { podToo: false });
      if (!keepStorage) {
        const others = (await this.listPods(userPodSelector(userId))).filter((p) => !p.metadata.deletionTimestamp && p.metadata.name !== podName);
        if (others.length === 0) await this.deleteStorage(userId, this.config.timeoutDelete);
      }
      this.log.info({ pod: podName }, 'pod deleted');
      return true;
    } catch (e) {
      this.log.error({ pod: podName, err: (e as Error).message }, 'deletion failed');
      return false;
    }
  }

  /**
   * Deletes the pod (unless told not to) and the objects made for that pod instance: labelled
   * `createdForPod=<name>` and owned by its uid (see madeFor), so a namesake's stay.
   */
  private async deletePodObjects(podName: string, uid: string | undefined, opts: { podToo?: boolean } = {}): Promise<void> {
    if (opts.podToo !== false) await this.deleteObject('v1', 'Pod', podName, uid);
    const live = await this.getPod(podName);
    const namesake = live && live.metadata.uid !== uid ? live.metadata : undefined;
    const selector = `${CREATED_FOR_POD_LABEL}=${podName}`;
    for (const [apiVersion, kind] of [['v1', 'Service'], ['networking.k8s.io/v1', 'Ingress'], ['v1', 'Secret']] as const) {
      for (const o of await listObjects<Owned>(this.client, apiVersion, kind, this.ns, { labelSelector: selector })) {
        const owned = (o.metadata.ownerReferences ?? []).some((r) => r.kind === 'Pod');
        const ours = owned ? madeFor(o, { uid }) : !namesake || !madeFor(o, namesake);
        if (ours) await this.deleteObject(apiVersion, kind, o.metadata.name, o.metadata.uid);
      }
    }
  }

  /**
   * Deletes the user's PV and PVC — the hashed name and the legacy one — each only when its
   * `user`/`domain` labels name exactly this user, and waits (up to `timeoutMs`) until they are gone.
   */
  private async deleteStorage(userId: string, timeoutMs: number): Promise<boolean> {
    const targets: { kind: 'PersistentVolumeClaim' | 'PersistentVolume'; name: string }[] = [];
    for (const name of new Set([userStorageName(userId), legacyUserStorageName(userId)])) {
      for (const kind of ['PersistentVolumeClaim', 'PersistentVolume'] as const) {
        const live = await getObject(this.client, 'v1', kind, this.ns, name);
        if (!live) continue;
        if (ownerFromLabels(live.metadata.labels) !== userId) {
          if (name === userStorageName(userId)) this.log.error({ user: userId, kind, name }, 'storage of this name belongs to another user: left alone');
          continue;
        }
        await this.deleteObject('v1', kind, name, (live as Owned).metadata.uid);
        targets.push({ kind, name });
      }
    }
    const deadline = this.now() + timeoutMs;
    while (!this.stopped) {
      const left = await Promise.all(targets.map((t) => getObject(this.client, 'v1', t.kind, this.ns, t.name)));
      if (left.every((o) => o === undefined)) return true;
      if (this.now() >= deadline) {
        this.log.warn({ user: userId, storage: targets.map((t) => t.name) }, 'user storage not deleted in time');
        return false;
      }
      await sleep(this.pollMs);
    }
    return false;
  }

  // ----- reading -----------------------------------------------------------------------------

  private podInfo(p: Pod, services: KubeObject[], secrets: KubeObject[]): PodInfo {
    const name = p.metadata.name;
    const state = p.metadata.annotations?.[USER_POD_ANNOTATION.state];
    let status = `${p.status?.phase ?? ''}:${goTime(p.status?.startTime)}`;
    if (p.metadata.deletionTimestamp || this.deleting.has(name)) status = 'Deleting';
    else if (state === 'creating' || this.creating.has(name)) status = 'Creating';
    const tokens: Record<string, string> = {};
    const mine = (o: KubeObject) => madeFor(o as Owned, p.metadata);
    const secret = secrets.find((s) => s.metadata.name === tokenSecretName(name) && mine(s)) as { data?: Record<string, string> } | undefined;
    for (const [k, v] of Object.entries(secret?.data ?? {})) tokens[k] = Buffer.from(v, 'base64').toString('utf8');
    const info: Record<string, string> = {};
    const ssh = services.find((s) => s.metadata.name === sshServiceName(name) && mine(s)) as { spec?: { ports?: { targetPort?: number | string; nodePort?: number }[] } } | undefined;
    const nodePort = ssh?.spec?.ports?.find((port) => Number(port.targetPort) === 22)?.nodePort;
    if (nodePort) info.sshPort = String(nodePort);
    return {
      pod_name: name,
      container_name: p.spec.containers[0]?.name ?? '',
      image_name: p.spec.containers[0]?.image ?? '',
      pod_ip: p.status?.podIP ?? '',
      node_ip: p.status?.hostIP ?? '',
      owner: ownerFromLabels(p.metadata.labels),
      age: podAge(p.status?.startTime, this.now()),
      status,
      url: ingressPort(p.metadata.annotations) !== undefined ? `https://${ingressHost(name, this.config.ingressDomain)}` : '',
      tokens,
      k8s_pod_info: info,
    };
  }

  private rejected(e: unknown, url: string): Error {
    // SSA answers 500 "failed to create typed patch object" for schema errors (see docs/test-cluster.md, "In tests").
    if (e instanceof KubeApiError && (e.code === 400 || e.code === 422 || (e.code === 500 && /typed patch/.test(e.message)))) {
      const msg = (e.body as { message?: string } | undefined)?.message ?? e.message;
      return badRequest(`invalid manifest at ${url}: the API server refused the pod: ${msg}`);
    }
    return e as Error;
  }

  private listPods(labelSelector?: string, fieldSelector?: string): Promise<Pod[]> {
    return listObjects<Pod>(this.client, 'v1', 'Pod', this.ns, { labelSelector, fieldSelector });
  }

  private getPod(name: string): Promise<Pod | undefined> {
    return getObject<Pod>(this.client, 'v1', 'Pod', this.ns, name);
  }

  /** Deletes an object of the namespace; with `uid`, only that instance (a namesake made since is a 409, left alone). */
  private async deleteObject(apiVersion: string, kind: string, name: string, uid?: string): Promise<void> {
    try {
      await deleteObject(this.client, apiVersion, kind, this.ns, name, uid);
    } catch (e) {
      if (uid && e instanceof KubeApiError && e.code === 409) {
        this.log.warn({ kind, name, uid }, 'not deleted: the object of that name is another instance now');
        return;
      }
      throw e;
    }
  }
}
