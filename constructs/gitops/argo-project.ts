import { Construct } from 'constructs';
import { AppProject } from '../../imports/argoproj.io.ts';

/** An API group and kind, as Argo CD's resource whitelists name them (group "" is the core group). */
export interface GroupKind {
  readonly group: string;
  readonly kind: string;
}

export interface ArgoProjectProps {
  readonly name: string;
  readonly argocdNamespace: string;
  readonly repoUrl: string;
  /** Namespaces (or glob patterns) the Applications may deploy into. */
  readonly namespaces: readonly string[];
  /** Kinds of the namespaced objects they deploy. */
  readonly namespacedKinds: readonly GroupKind[];
  /** Kinds of the cluster-scoped objects they deploy. */
  readonly clusterKinds: readonly GroupKind[];
}

export const IN_CLUSTER = 'https://kubernetes.default.svc';

/**
 * The Argo CD project of the CrownLabs Applications, least privilege: one source repository, this
 * cluster only, and only the namespaces and kinds the tree deploys (src/sinks/gitops.ts derives
 * them from the rendered objects). An empty cluster whitelist permits no cluster-scoped kind.
 */
export class ArgoProject extends Construct {
  constructor(scope: Construct, id: string, props: ArgoProjectProps) {
    super(scope, id);
    new AppProject(this, 'project', {
      metadata: { name: props.name, namespace: props.argocdNamespace },
      spec: {
        description: 'CrownLabs resources rendered by crownlabs-composer',
        sourceRepos: [props.repoUrl],
        destinations: props.namespaces.map((namespace) => ({ server: IN_CLUSTER, namespace })),
        clusterResourceWhitelist: props.clusterKinds.map(({ group, kind }) => ({ group, kind })),
        // Empty would mean "every kind" to Argo CD (a nil list): the tree always has its Applications.
        namespaceResourceWhitelist: props.namespacedKinds.map(({ group, kind }) => ({ group, kind })),
      },
    });
  }
}
