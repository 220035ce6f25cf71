import { Construct } from 'constructs';
import { AppProject } from '../../imports/argoproj.io.ts';

export interface ArgoProjectProps {
  readonly name: string;
  readonly argocdNamespace: string;
  readonly repoUrl: string;
}

/** The Argo CD project of the CrownLabs Applications: one source repository, this cluster only. */
export class ArgoProject extends Construct {
  constructor(scope: Construct, id: string, props: ArgoProjectProps) {
    super(scope, id);
    new AppProject(this, 'project', {
      metadata: { name: props.name, namespace: props.argocdNamespace },
      spec: {
        description: 'CrownLabs resources rendered by crownlabs-composer',
        sourceRepos: [props.repoUrl],
        destinations: [{ server: 'https://kubernetes.default.svc', namespace: '*' }],
        clusterResourceWhitelist: [{ group: '*', kind: '*' }],
        namespaceResourceWhitelist: [{ group: '*', kind: '*' }],
      },
    });
  }
}
