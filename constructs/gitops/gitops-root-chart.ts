import { Chart } from 'cdk8s';
import type { Construct } from 'constructs';
import { ArgoApplication, type ArgoApplicationProps } from './argo-application.ts';
import { ArgoProject, type GroupKind } from './argo-project.ts';

export interface GitopsRootChartProps {
  readonly argocdNamespace: string;
  readonly project: string;
  readonly repoUrl: string;
  readonly revision: string;
  /** Folder of the child Applications (app of apps). */
  readonly appsPath: string;
  /** What the project permits: the namespaces and kinds the tree deploys. */
  readonly namespaces: readonly string[];
  readonly namespacedKinds: readonly GroupKind[];
  readonly clusterKinds: readonly GroupKind[];
}

/** The root of the tree: the project and the app-of-apps Application that syncs every child. */
export class GitopsRootChart extends Chart {
  constructor(scope: Construct, id: string, props: GitopsRootChartProps) {
    super(scope, id, { disableResourceNameHashes: true });
    new ArgoProject(this, 'project', {
      name: props.project,
      argocdNamespace: props.argocdNamespace,
      repoUrl: props.repoUrl,
      namespaces: props.namespaces,
      namespacedKinds: props.namespacedKinds,
      clusterKinds: props.clusterKinds,
    });
    new ArgoApplication(this, 'root', {
      name: 'crownlabs-root',
      argocdNamespace: props.argocdNamespace,
      project: props.project,
      repoUrl: props.repoUrl,
      revision: props.revision,
      path: props.appsPath,
      namespace: props.argocdNamespace,
      syncWave: 0,
    });
  }
}

export interface GitopsAppsChartProps {
  readonly apps: readonly Omit<ArgoApplicationProps, 'argocdNamespace' | 'project' | 'repoUrl' | 'revision'>[];
  readonly argocdNamespace: string;
  readonly project: string;
  readonly repoUrl: string;
  readonly revision: string;
}

/** The child Applications: one per workspace, per tenant and per chunk of a namespace's instances. */
export class GitopsAppsChart extends Chart {
  constructor(scope: Construct, id: string, props: GitopsAppsChartProps) {
    super(scope, id, { disableResourceNameHashes: true });
    for (const app of props.apps) {
      new ArgoApplication(this, app.name, { ...app, argocdNamespace: props.argocdNamespace, project: props.project, repoUrl: props.repoUrl, revision: props.revision });
    }
  }
}
