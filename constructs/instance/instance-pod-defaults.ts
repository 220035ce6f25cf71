/** The "restrictive" container securityContext of every instance container (docs/behaviour.md §7.5). */
export function restrictiveSecurityContext() {
  return { capabilities: { drop: ['ALL'] }, privileged: false, allowPrivilegeEscalation: false };
}

/** Pod securityContext of Container/Standalone environments and submission Jobs (docs/behaviour.md §7.5, §8.2). */
export const INSTANCE_POD_SECURITY_CONTEXT = {
  runAsUser: 1010,
  runAsGroup: 1010,
  fsGroup: 1010,
  runAsNonRoot: true,
} as const;

/** Base of every readiness probe of instance containers and VMIs (docs/behaviour.md §7.4, §7.5). */
export const READINESS_PROBE_BASE = {
  initialDelaySeconds: 10,
  periodSeconds: 2,
  successThreshold: 2,
  failureThreshold: 5,
} as const;
