/**
 * Names, labels and annotations of the user pods API (seed 004, the ScienceData backend), as
 * its Go implementation writes them, so pods it created are recognised (and vice versa).
 */
import { createHash } from 'node:crypto';

/** Labels on a user pod: its owner split at `@`, and its own name (the Services' selector). */
export const USER_POD_LABEL = { user: 'user', domain: 'domain', podName: 'podName' } as const;
/** Label on the Services, Ingress and token Secret made for a pod. */
export const CREATED_FOR_POD_LABEL = 'createdForPod';
/** Label on the user's storage PV and PVC (their common name). */
export const STORAGE_NAME_LABEL = 'name';

/** Annotations read from the manifest (seed: copy-token, and the port an Ingress routes to). */
export const MANIFEST_ANNOTATION = {
  copyToken: 'sciencedata.dk/copy-token',
  ingressPort: 'sciencedata.dk/ingress-port',
} as const;

/** Our own annotations on a pod: the state a restarted server recovers. */
export const USER_POD_ANNOTATION = {
  /** `creating` until the start jobs ran, then `ready`; `failed` when creation timed out. */
  state: 'userpods.crownlabs.polito.it/state',
  /** RFC 3339 instant after which a pod still not Ready is deleted. */
  createDeadline: 'userpods.crownlabs.polito.it/create-deadline',
  /** The requester's (silo) IP: the NFS server of the user's storage. */
  siloIp: 'userpods.crownlabs.polito.it/silo-ip',
} as const;

export type UserPodState = 'creating' | 'ready' | 'failed';

/** The volume name a manifest mounts to get the user's storage. */
export const USER_STORAGE_VOLUME = 'sciencedata';
export const LOCAL_REGISTRY_PLACEHOLDER = 'LOCALREGISTRY';

export interface UserId {
  userId: string;
  name: string;
  domain: string;
}

export function parseUserId(userId: string): UserId {
  const at = userId.indexOf('@');
  return at < 0 ? { userId, name: userId, domain: '' } : { userId, name: userId.slice(0, at), domain: userId.slice(at + 1) };
}

const LABEL_VALUE = /^([A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?)?$/;

/** Why a user id cannot be stored in the `user`/`domain` labels, or undefined when it can. */
export function userIdProblem(userId: string): string | undefined {
  const u = parseUserId(userId);
  if (!u.name || !LABEL_VALUE.test(u.name) || !LABEL_VALUE.test(u.domain)) {
    return `user_id "${userId}" must be name@domain, each part at most 63 letters, digits, '-', '_' or '.' starting and ending with a letter or digit`;
  }
  return undefined;
}

/** Longest pod name: `<pod>-ingress`, `<pod>-tokens`, `<pod>-http` stay DNS labels (Services need one). */
export const MAX_POD_NAME = 63 - '-ingress'.length;

/** Why a pod name cannot be used, or undefined. */
export function podNameProblem(name: string): string | undefined {
  if (name.length > MAX_POD_NAME || !/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/.test(name)) {
    return `the pod name "${name}" would not be a DNS label of at most ${MAX_POD_NAME} characters (manifest name + user_id)`;
  }
  return undefined;
}

/**
 * `user@dtu.dk` → `user-dtu-dk`: the user part of pod names (as the seed names them). Not
 * injective (`anne-marie@ku.dk` and `anne.marie@ku.dk` agree): a pod's owner is its `user` and
 * `domain` labels, which are checked before anything is done to it, never its name.
 */
export function userString(userId: string): string {
  return userId.replace(/[@.]/g, '-');
}

/** Hex digits of the user id's SHA-256 in storage names: 48 bits, so a clash is only a theory (and still checked). */
const STORAGE_HASH_LENGTH = 12;

/**
 * Name of the user's NFS PV and PVC (the same for both): `user-storage-<readable user>-<hash of
 * the exact user id>`, a DNS label (≤ 63, so it also fits the `name` label). Injective, where the
 * seed's `user-storage-<userString>` gave two users one PV.
 */
export function userStorageName(userId: string): string {
  const hash = createHash('sha256').update(userId, 'utf8').digest('hex').slice(0, STORAGE_HASH_LENGTH);
  const room = 63 - 'user-storage-'.length - 1 - STORAGE_HASH_LENGTH;
  const readable = userId.toLowerCase().replace(/[^a-z0-9]+/g, '-').slice(0, room).replace(/^-+|-+$/g, '');
  return `user-storage-${readable ? `${readable}-` : ''}${hash}`;
}

/** The storage name before the hash (this project's earlier versions and the seed): only acted on when its labels name the user exactly. */
export function legacyUserStorageName(userId: string): string {
  return `user-storage-${userString(userId)}`;
}

/** Candidate pod names: `<manifest name>-<user>`, then `-1` … `-9` (as the seed's creator). */
export function podNameCandidates(manifestName: string, userId: string): string[] {
  const base = `${manifestName}-${userString(userId)}`;
  return [base, ...Array.from({ length: 9 }, (_, i) => `${base}-${i + 1}`)];
}

export function userPodLabels(userId: string, podName: string): Record<string, string> {
  const u = parseUserId(userId);
  return { [USER_POD_LABEL.user]: u.name, [USER_POD_LABEL.domain]: u.domain, [USER_POD_LABEL.podName]: podName };
}

/** Label selector of a user's pods. */
export function userPodSelector(userId: string): string {
  const u = parseUserId(userId);
  return `${USER_POD_LABEL.user}=${u.name},${USER_POD_LABEL.domain}=${u.domain}`;
}

/** The owner of a pod from its labels (`user@domain`, or `user` without a domain); '' when unlabelled. */
export function ownerFromLabels(labels: Record<string, string> | undefined): string {
  const user = labels?.[USER_POD_LABEL.user];
  if (!user) return '';
  const domain = labels?.[USER_POD_LABEL.domain];
  return domain ? `${user}@${domain}` : user;
}

export function sshServiceName(podName: string): string {
  return `${podName}-ssh`;
}

export function httpServiceName(podName: string): string {
  return `${podName}-http`;
}

export function ingressName(podName: string): string {
  return `${podName}-ingress`;
}

export function tokenSecretName(podName: string): string {
  return `${podName}-tokens`;
}

export function ingressHost(podName: string, ingressDomain: string): string {
  return `${podName}.${ingressDomain}`;
}

/** The keys of `sciencedata.dk/copy-token` (comma-separated), each a file `/tmp/<key>` in the first container. */
export function copyTokenKeys(annotations: Record<string, string> | undefined): string[] {
  const raw = annotations?.[MANIFEST_ANNOTATION.copyToken];
  // A key names a file under /tmp and a Secret key: no paths, nothing a Secret would refuse.
  return raw ? raw.split(',').map((k) => k.trim()).filter((k) => /^[-._a-zA-Z0-9]+$/.test(k) && k !== '.' && k !== '..') : [];
}

/** The port of `sciencedata.dk/ingress-port`; undefined when absent or not a port number. */
export function ingressPort(annotations: Record<string, string> | undefined): number | undefined {
  const raw = annotations?.[MANIFEST_ANNOTATION.ingressPort];
  if (raw === undefined || !/^\d+$/.test(raw.trim())) return undefined;
  const n = Number(raw);
  return n >= 1 && n <= 65535 ? n : undefined;
}

/** `h:m:s` since `start` (the seed's age format, unpadded); `0:0:0` before the pod started. */
export function podAge(startTime: string | undefined, now: number): string {
  if (!startTime) return '0:0:0';
  const s = Math.max(0, Math.floor((now - Date.parse(startTime)) / 1000));
  return `${Math.floor(s / 3600)}:${Math.floor(s / 60) % 60}:${s % 60}`;
}
