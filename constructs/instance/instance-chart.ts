import { Chart } from 'cdk8s';
import type { Construct } from 'constructs';
import type { ComposerConfig } from '../../src/config/config.ts';
import { contentOrigin } from '../../src/model/customization-urls.ts';
import { claimMounts, type InstancePlan } from '../../src/model/instance-plan.ts';
import { CloudInitSecret } from './cloud-init.ts';
import { ContainerEnvironment } from './container-environment.ts';
import { Exposition, sharedAuthAnnotations } from './exposition.ts';
import { OAUTH2_PROXY_PORT, Oauth2Proxy } from './oauth2-proxy.ts';
import { PublicExposure } from './public-exposure.ts';
import { VirtualMachineEnvironment } from './virtual-machine.ts';
import { SharedVolumeMirrors } from './shared-volume-mirrors.ts';

export interface InstanceChartProps {
  readonly plan: InstancePlan;
  readonly config: ComposerConfig;
  /**
   * Labels put on every object of the chart besides the CrownLabs ones (ours: parent and manager).
   * @default none: only the CrownLabs labels
   */
  readonly chartLabels?: Record<string, string>;
}

/** Every object of one Instance (docs/behaviour.md §7), in the Instance's namespace. */
export class InstanceChart extends Chart {
  constructor(scope: Construct, id: string, props: InstanceChartProps) {
    super(scope, id, { namespace: props.plan.namespace, labels: props.chartLabels, disableResourceNameHashes: true });
    const { plan, config } = props;
    const labels = plan.objectLabels;
    const vmEnvs = plan.environments.filter((e) => e.isVM);
    const cloudInitNeeded = vmEnvs.some((e) => e.standardMode);
    if (cloudInitNeeded) {
      const nfs = vmEnvs.find((e) => e.standardMode && e.nfs)?.nfs;
      const claims = vmEnvs.filter((e) => e.standardMode).map(claimMounts).find((c) => c.length > 0) ?? [];
      new CloudInitSecret(this, 'cloud-init', { name: plan.cloudInitName, labels, publicKeys: plan.publicKeys, nfs, claims });
    }
    new SharedVolumeMirrors(this, 'shared-volume-mirrors', { environments: plan.environments, labels, storageClassName: config.mirrorStorageClass });
    plan.environments.forEach((env, index) => {
      // By position: ids built from environment names collide (`a` + `-oauth2-proxy` vs `a-oauth2-proxy`),
      // and a construct id clash is a crash, not a clear error (the objects' own collisions are reported).
      const scope = plan.environments.length > 1 ? `env-${index}` : 'env';
      if (env.exposed) {
        const auth = env.standardMode && env.env.guiEnabled ? config.authMode : undefined;
        let backendOverride;
        if (auth === 'per-instance') {
          const proxy = new Oauth2Proxy(this, `${scope}-oauth2-proxy`, {
            environment: env,
            instanceName: plan.instance.metadata.name,
            namespace: plan.namespace,
            uid: plan.uid,
            labels: env.objectLabels,
            allowedEmails: plan.allowedEmails,
            image: config.oauth2ProxyImage,
            issuerUrl: config.oidcIssuerUrl,
            clientId: config.oidcClientId,
            clientSecret: config.oidcClientSecret,
            cookieSecretSeed: config.cookieSecretSeed,
            exposure: plan.exposure,
            gateway: plan.gateway,
          });
          backendOverride = { serviceName: proxy.serviceName, portName: 'http', port: OAUTH2_PROXY_PORT };
        }
        new Exposition(this, `${scope}-exposition`, {
          environment: env,
          labels: env.objectLabels,
          selectorLabels: env.selectorLabels,
          authAnnotations: auth === 'shared' && config.instancesAuthUrl ? sharedAuthAnnotations(config.instancesAuthUrl) : undefined,
          backendOverride,
          exposure: plan.exposure,
          gateway: plan.gateway,
        });
      }
      if (env.isVM) {
        new VirtualMachineEnvironment(this, scope, {
          environment: env,
          running: plan.running,
          labels: env.objectLabels,
          selectorLabels: env.selectorLabels,
          cloudInitSecretName: env.standardMode ? plan.cloudInitName : undefined,
        });
      } else {
        new ContainerEnvironment(this, scope, {
          environment: env,
          labels: env.objectLabels,
          selectorLabels: env.selectorLabels,
          contentOrigin: contentOrigin(plan.instance, env.env.name),
          config,
        });
      }
    });
    if (plan.publicExposure?.state === 'allocated') new PublicExposure(this, 'public-exposure', { plan: plan.publicExposure, labels });
  }
}
