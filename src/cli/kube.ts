import { KubeConfig } from '@kubernetes/client-node';

/** The KubeConfig of a long-running command: `--kubeconfig FILE`, else $KUBECONFIG / ~/.kube/config / in-cluster. */
export function loadKubeConfig(file?: string): KubeConfig {
  const kc = new KubeConfig();
  if (file) kc.loadFromFile(file);
  else kc.loadFromDefault();
  return kc;
}
