import * as k8s from 'cdk8s-plus-27/lib/imports/k8s.js';
import { Construct } from 'constructs';
import { LABEL } from '../../src/model/labels.ts';

export interface WorkspaceNamespaceProps {
  readonly name: string;
  readonly labels: Record<string, string>;
}

/** The namespace `workspace-<name>` holding a workspace's Templates (docs/behaviour.md §4.2 row 1). */
export class WorkspaceNamespace extends Construct {
  constructor(scope: Construct, id: string, props: WorkspaceNamespaceProps) {
    super(scope, id);
    new k8s.KubeNamespace(this, 'namespace', { metadata: { name: props.name, labels: { ...props.labels, [LABEL.type]: 'workspace' } } });
  }
}
