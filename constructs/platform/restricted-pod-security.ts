import * as k8s from 'cdk8s-plus-27/lib/imports/k8s.js';

/** Non-root pods with the runtime's default seccomp profile (restricted Pod Security Standard). */
export const POD_SECURITY: k8s.PodSecurityContext = {
  runAsNonRoot: true,
  runAsUser: 10001,
  runAsGroup: 10001,
  fsGroup: 10001,
  seccompProfile: { type: 'RuntimeDefault' },
};

/** Read-only root filesystem, no privilege escalation, every capability dropped unless `add`ed. */
export function containerSecurity(add: string[] = []): k8s.SecurityContext {
  return {
    readOnlyRootFilesystem: true,
    allowPrivilegeEscalation: false,
    capabilities: add.length ? { add, drop: ['ALL'] } : { drop: ['ALL'] },
  };
}

/** tsx keeps its compile cache under /tmp: a small emptyDir, as the root filesystem is read-only. */
export const TMP_VOLUME: k8s.Volume = { name: 'tmp', emptyDir: { sizeLimit: k8s.Quantity.fromString('64Mi') } };
export const TMP_MOUNT: k8s.VolumeMount = { name: 'tmp', mountPath: '/tmp' };
