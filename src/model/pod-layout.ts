/**
 * How the Pod of a Container or Standalone environment is laid out, per API level
 * (docs/behaviour.md §7.5, §16.3): beside LEVEL_RENDERING, one row per level. The plan reads it
 * (`EnvironmentPlan.pod`); the construct only sees the plan. A lab moves between operators without
 * a restart only when the pod template is the one the other operator renders, field for field.
 */
import type { ApiLevel } from '../inputs/api-level.ts';

export interface ContainerPodLayout {
  /**
   * A Container's desktop is served by websockify and Xvnc sidecars beside the application, which
   * then serves nothing itself. Without them every Container and Standalone application serves its
   * own web UI on port `gui` (6080), as a Standalone's always does.
   */
  vncSidecars: boolean;
  /** Where, under the environment's `basePath`, the application (or websockify) is served. */
  appPathUnderBase: string;
}

export const CONTAINER_POD_LAYOUT: Readonly<Record<ApiLevel, ContainerPodLayout>> = {
  '2e8aeb9': { vncSidecars: true, appPathUnderBase: '/app' },
  e62be9e: { vncSidecars: false, appPathUnderBase: '' },
};

/** What the Deployment's pod template of one environment follows (`EnvironmentPlan.pod`). */
export interface ContainerPodPlan {
  /** websockify and Xvnc run beside the application. */
  vncSidecars: boolean;
  /** The application serves the GUI: port `gui`, `CROWNLABS_BASE_PATH` / `CROWNLABS_LISTEN_PORT`, a readiness probe. */
  appServesGui: boolean;
  /** The path the GUI is served under: `CROWNLABS_BASE_PATH`, websockify's `--base-path`. */
  appPath: string;
  /** Path of the application's HTTP readiness probe: `/` when the Ingress rewrites the path away. */
  readinessPath: string;
}

/** The pod plan of a Container or Standalone environment, from its `basePath` (the one place its paths are derived). */
export function containerPodPlan(layout: ContainerPodLayout, basePath: string, e: { isContainer: boolean; rewriteURL: boolean }): ContainerPodPlan {
  const vncSidecars = layout.vncSidecars && e.isContainer;
  const appPath = `${basePath}${layout.appPathUnderBase}`;
  return { vncSidecars, appServesGui: !vncSidecars, appPath, readinessPath: e.rewriteURL ? '/' : appPath };
}
