import { ApiObject, type ApiObjectProps } from 'cdk8s';
import { Construct } from 'constructs';

export interface CrownLabsCrdsProps {
  /** The CustomResourceDefinitions, as parsed from the vendored files (src/platform/install.ts reads them), in order. */
  readonly crds: readonly ApiObjectProps[];
}

/** The CrownLabs CRDs of the install, protected from Argo CD's delete and prune. */
export class CrownLabsCrds extends Construct {
  constructor(scope: Construct, id: string, props: CrownLabsCrdsProps) {
    super(scope, id);
    for (const crd of props.crds) {
      const o = new ApiObject(this, crd.metadata?.name ?? `crd-${this.node.children.length}`, crd);
      // Deleting the install (or its Argo CD Application) must never delete every CrownLabs resource.
      o.metadata.addAnnotation('argocd.argoproj.io/sync-options', 'Delete=false,Prune=false');
    }
  }
}
