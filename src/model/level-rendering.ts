/**
 * Where an Instance's objects differ per API level in what is rendered, not only in the input
 * fields read (docs/behaviour.md §16.3): one row per level. The plan reads it; constructs and
 * the controller only see the plan.
 */
import { childrenLevel, type ApiLevel } from '../inputs/api-level.ts';
import type { EnvironmentType, Instance } from '../inputs/types.ts';
import { canon } from './naming.ts';

export type VolumeMode = 'Block' | 'Filesystem';

export interface ServicePort {
  name: string;
  port: number;
}

/** What an environment's Service ports depend on. */
export interface ServicePortInputs {
  isVM: boolean;
  isContainer: boolean;
  isStandalone: boolean;
  guiEnabled: boolean;
  standardMode: boolean;
}

/** What an environment's route depends on. */
export interface RouteInputs {
  isVM: boolean;
  isStandalone: boolean;
  guiEnabled: boolean;
  rewriteURL: boolean;
}

/** An environment's GUI route: its Ingress name, path and rewrite, and the URL it serves. */
export interface GuiRoute {
  ingressName: string;
  path: string;
  /** nginx `rewrite-target`; undefined: none. */
  rewriteTarget?: string;
  /** The environment's GUI URL, under `https://<host>`. */
  urlPath: string;
  /**
   * The same route as a Gateway API HTTPRoute: a PathPrefix match, whose prefix is dropped where
   * the Ingress rewrites (`stripPrefix`: nginx's regex and `rewrite-target` in one filter).
   */
  prefix: string;
  stripPrefix: boolean;
}

export interface LevelRendering {
  /**
   * Base name of an environment's children (Service, Ingress, Deployment, PVC, VM, VMI), given the
   * Instance's canonical name: a live object keeps its name, so this is what lets a lab switch
   * operators without a workload recreated.
   */
  childName(instance: string, env: string, several: boolean): string;
  /** The path an environment is served under: `/instance/<uid>…`. */
  basePath(uid: string, env: string, several: boolean): string;
  /** Labels and selectors of an environment's children carry `crownlabs.polito.it/environment`. */
  environmentLabel: boolean;
  /** The GUI route of an environment (its Service `childName`); undefined: no Ingress. */
  guiRoute(childName: string, basePath: string, e: RouteInputs): GuiRoute | undefined;
  /** The Instance's status URL, given its environments' GUI URLs (paths), when any; undefined: none. */
  instanceUrlPath(uid: string, envUrlPaths: readonly string[]): string | undefined;

  /** The ports of an environment's Service, in order (docs/behaviour.md §7.3, §16.3); none: no Service. */
  servicePorts(env: ServicePortInputs): ServicePort[];
  /** The Service is headless (`clusterIP: None`): clients reach the Pod or VMI itself. */
  headlessService: boolean;
  /** volumeMode of a persistent VM's root disk; undefined: not written (the cluster's default, Filesystem). */
  rootDiskVolumeMode(type: EnvironmentType): VolumeMode | undefined;
  /**
   * A persistent VM keeps the MAC address its VMI was first given: once reported, it is written into
   * the VM's first interface, so a restart (a new VMI) gets the same one.
   */
  keepsMacAddress: boolean;
  /** The Instance's own label `crownlabs.polito.it/has-node-selector` ("true"/"false") is kept. */
  nodeSelectorLabel: boolean;
}

const SSH: ServicePort = { name: 'ssh', port: 22 };
/** The port of an environment's GUI (noVNC, or a Container's or Standalone's app). */
export const GUI_PORT = 6080;
const GUI: ServicePort = { name: 'gui', port: GUI_PORT };
const METRICS: ServicePort = { name: 'metrics', port: 9090 };

export const LEVEL_RENDERING: Readonly<Record<ApiLevel, LevelRendering>> = {
  '2e8aeb9': {
    // One environment keeps the names of upstream 2e8aeb9; several are keyed as upstream HEAD keys them.
    childName: (instance, env, several) => (several ? `${instance}-${env}` : instance),
    basePath: (uid, env, several) => (several ? `/instance/${uid}/${env}` : `/instance/${uid}`),
    environmentLabel: false,
    guiRoute: (name, base, e) => {
      if (!e.guiEnabled) return undefined;
      if (e.isStandalone) return { ingressName: `${name}-app`, path: e.rewriteURL ? `${base}/app(/|$)(.*)` : `${base}/app`, ...(e.rewriteURL ? { rewriteTarget: '/$2' } : {}), urlPath: `${base}/app/`, prefix: `${base}/app`, stripPrefix: e.rewriteURL };
      const prefix = e.isVM ? `${base}/vnc` : `${base}/app`;
      return { ingressName: `${name}-gui`, path: prefix, urlPath: `${base}/${e.isVM ? '' : 'app/'}`, prefix, stripPrefix: false };
    },
    // Several environments share one instance-level URL (as upstream HEAD); one keeps its own.
    instanceUrlPath: (uid, paths) => (paths.length > 1 ? `/instance/${uid}/` : paths[0]),
    servicePorts: (e) => [
      ...(e.isVM ? [SSH] : []),
      ...(e.guiEnabled ? [GUI] : []),
      // Nothing listens on it (kept for parity with upstream).
      ...((e.isStandalone || e.isContainer) && e.standardMode ? [{ name: 'mydrive', port: 8080 }] : []),
      ...(e.isContainer ? [METRICS] : []),
    ],
    headlessService: false,
    rootDiskVolumeMode: () => undefined,
    keepsMacAddress: false,
    nodeSelectorLabel: false,
  },
  e62be9e: {
    childName: (instance, env) => `${instance}-${env}`,
    basePath: (uid, env) => `/instance/${uid}/${env}`,
    environmentLabel: true,
    // Every Container and Standalone has a route; a VM only with its GUI. A VM's noVNC is served at
    // the root of its own path, hence the rewrite.
    guiRoute: (name, base, e) => {
      if (e.isVM && !e.guiEnabled) return undefined;
      const urlPath = `${base}/`;
      if (e.isVM) return { ingressName: name, path: `${base}/(.*)`, rewriteTarget: '/$1', urlPath, prefix: base, stripPrefix: true };
      // A Container's regex path comes without the rewrite (upstream rewrites Standalone only), while
      // its HTTPRoute rewrites with rewriteURL (as upstream's routes do for both).
      return { ingressName: name, path: e.rewriteURL ? `${base}(/|$)(.*)` : base, ...(e.isStandalone && e.rewriteURL ? { rewriteTarget: '/$2' } : {}), urlPath, prefix: base, stripPrefix: e.rewriteURL };
    },
    instanceUrlPath: (uid, paths) => (paths.length ? `/instance/${uid}/` : undefined),
    // Port `metrics` only when nothing else would make the Service (a Standalone without GUI).
    servicePorts: (e) => {
      const ports = [...(e.isVM ? [SSH] : []), ...(e.guiEnabled ? [GUI] : [])];
      return ports.length ? ports : [METRICS];
    },
    headlessService: true,
    // Images of CloudVM and LocalVM are raw disks (an http import, a clone of a Block golden PVC).
    rootDiskVolumeMode: (type) => (type === 'CloudVM' || type === 'LocalVM' ? 'Block' : 'Filesystem'),
    keepsMacAddress: true,
    nodeSelectorLabel: true,
  },
};

/** The name of an environment's children, as the plan gives it. */
export function environmentChildName(instance: Instance, env: string, environments: number, level: ApiLevel): string {
  const at = childrenLevel(instance, level);
  return LEVEL_RENDERING[typeof at === 'string' ? at : level].childName(canon(instance.metadata.name), env, environments > 1);
}
