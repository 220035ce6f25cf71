import { Construct } from 'constructs';
import { Application } from '../../imports/argoproj.io.ts';
import { IN_CLUSTER } from './argo-project.ts';

export interface ArgoApplicationProps {
  readonly name: string;
  readonly argocdNamespace: string;
  readonly project: string;
  readonly repoUrl: string;
  readonly revision: string;
  /** Folder of the repository holding this Application's objects (with a kustomization.yaml). */
  readonly path: string;
  /**
   * Default namespace of its objects (they all name theirs): the namespace it is about, which the
   * project must permit (Argo CD checks an Application's destination against it).
   */
  readonly namespace: string;
  /** Earlier waves sync first: workspaces, then tenants, then instances. */
  readonly syncWave: number;
  /**
   * Prune as the last step of a sync, once every other object is Healthy (Argo CD's `PruneLast`).
   * @default false: objects no longer in the tree are pruned as the sync applies the others
   */
  readonly pruneLast?: boolean;
}

/**
 * One Argo CD Application of the gitops tree: automated sync with pruning and self-heal, server-side
 * apply (our objects are large, e.g. KubeVirt VMs), and the resources finalizer so that deleting the
 * Application deletes what it deployed — but for the objects marked `Delete=false` (storage and
 * namespaces, src/sinks/gitops.ts `retentionOptions`).
 */
export class ArgoApplication extends Construct {
  constructor(scope: Construct, id: string, props: ArgoApplicationProps) {
    super(scope, id);
    new Application(this, 'application', {
      metadata: {
        name: props.name,
        namespace: props.argocdNamespace,
        annotations: { 'argocd.argoproj.io/sync-wave': String(props.syncWave) },
        finalizers: ['resources-finalizer.argocd.argoproj.io'],
      },
      spec: {
        project: props.project,
        source: { repoUrl: props.repoUrl, targetRevision: props.revision, path: props.path },
        destination: { server: IN_CLUSTER, namespace: props.namespace },
        syncPolicy: {
          automated: { prune: true, selfHeal: true },
          syncOptions: ['ServerSideApply=true', 'PrunePropagationPolicy=foreground', ...(props.pruneLast ? ['PruneLast=true'] : [])],
          retry: { limit: 5, backoff: { duration: '10s', factor: 2, maxDuration: '5m' } },
        },
      },
    });
  }
}
