/**
 * The platform install from the configuration: which shards, which components, the config file
 * they share, and the RBAC derived for each (src/platform/derive-rbac.ts).
 */
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { App, Yaml, type ApiObjectProps } from 'cdk8s';
import { stringify } from 'yaml';
import { PlatformChart } from '../../constructs/platform/platform-chart.ts';
import type { PlatformInstallProps } from '../../constructs/platform/platform-install.ts';
import { TenantWebhooks } from '../../constructs/platform/tenant-webhooks.ts';
import { BASTION } from '../../constructs/bastion/bastion-deployment.ts';
import { InstanceQuotaWebhook } from '../../constructs/platform/instance-quota-webhook.ts';
import type { KubeObject } from '../inputs/types.ts';
import { crownlabsCrdsDir, kindExistsAt, webhookExistsAt } from '../inputs/api-level.ts';
import { exposure, parseGatewayRef } from '../model/exposition.ts';
import type { ComposerConfig } from '../config/config.ts';
import { CONFIG_KEYS, type ConfigKeyDef } from '../config/keys.ts';
import { crdsDir } from '../paths.ts';
import { KIND_RESOURCES } from '../kube/resources.ts';
import { childKinds } from '../controller/child-kinds.ts';
import { deriveBastionRules, deriveControllerRbac, deriveImageListRules } from './derive-rbac.ts';
import { labHostsOf } from './lab-hosts.ts';

export const PLATFORM_SECRET = 'crownlabs-composer-secrets';

export function shardsOf(config: ComposerConfig): string[] {
  return config.platformShards.length ? [...config.platformShards] : [config.targetLabel.value];
}

export function leaseName(shard: string): string {
  return `crownlabs-composer-${shard}`;
}

/**
 * The configuration file every component reads (`--config`), in the config file's own syntax.
 * Secret keys never go into it (the controller reads them from the Secret), nor do the platform
 * keys, which shape the install.
 */
export function configFileOf(config: ComposerConfig): string {
  const out: Record<string, unknown> = {};
  for (const def of CONFIG_KEYS as readonly ConfigKeyDef[]) {
    if (def.secret || def.key.startsWith('platform')) continue;
    const v = (config as unknown as Record<string, unknown>)[def.key];
    if (def.omitWhenDefault && JSON.stringify(v) === JSON.stringify(def.default)) continue;
    out[def.key] = def.type === 'label' ? `${(v as { key: string }).key}=${(v as { value: string }).value}` : v;
  }
  return stringify(out);
}

/** The CrownLabs CRDs vendored in `dir` (`crownlabs.polito.it_*` files, by name), each file's documents in order. */
export function readCrownLabsCrds(dir: string = crdsDir()): ApiObjectProps[] {
  const files = readdirSync(dir).filter((n) => n.startsWith('crownlabs.polito.it_')).sort();
  return files.flatMap((f) => Yaml.load(join(dir, f)) as ApiObjectProps[]);
}

/** The shared auth mode behind a Gateway: one OIDC policy on the Gateway (docs/behaviour.md §17). */
function gatewayAuth(config: ComposerConfig): PlatformInstallProps['gatewayAuth'] {
  const gateway = parseGatewayRef(config.gatewayRef);
  if (!exposure(config.exposition).httpRoute || config.authMode !== 'shared' || !config.platformGatewayAuth || !gateway) return undefined;
  return { gateway, issuerUrl: config.oidcIssuerUrl, clientId: config.oidcClientId };
}

export function platformInstallProps(config: ComposerConfig): PlatformInstallProps {
  const shards = shardsOf(config);
  const rbac = deriveControllerRbac(config, shards.map(leaseName));
  const key = config.targetLabel.key;
  // The default whitelist is the target label itself: each shard whitelists its own value.
  const wl = Object.entries(config.namespaceWhitelist);
  const perShardWhitelist = wl.length === 1 && wl[0][0] === key;
  const inactivity = config.platformInstanceAutomation.includes('inactive-termination');
  return {
    namespace: config.platformNamespace,
    image: config.platformImage,
    crds: config.platformInstallCrds ? readCrownLabsCrds(crownlabsCrdsDir(config.apiLevel)) : undefined,
    targetLabelKey: key,
    shards,
    shardArgs: (shard) => [
      ...(perShardWhitelist ? ['--namespace-whitelist', `${key}=${shard}`] : []),
      ...config.platformInstanceAutomation.map((name) => `--enable-instance-${name}`),
      ...(inactivity && config.platformPrometheusUrl ? ['--monitoring-prometheus-url', config.platformPrometheusUrl] : []),
      // Our bastion's tracker is its own container, not upstream's `bastion-operator`.
      ...(inactivity && config.platformBastion ? ['--monitoring-bastion-ssh-availability', `count(up{container="${BASTION.trackerContainer}"})`] : []),
    ],
    mail: inactivity && config.platformMailSecret ? { configSecret: config.platformMailSecret, templatesConfigMap: config.platformMailTemplates || undefined } : undefined,
    controllerReplicas: config.platformControllerReplicas,
    controllerResources: { cpu: config.platformControllerCpu, memory: config.platformControllerMemory },
    configYaml: configFileOf(config),
    secretName: PLATFORM_SECRET,
    controllerRules: rbac.clusterRules,
    labHosts: labHostsOf(config),
    leaseRules: rbac.leaseRules,
    leaseName,
    serviceMonitor: config.platformServiceMonitor,
    gatewayAuth: gatewayAuth(config),
    webhookCaBundle: config.platformWebhookCaBundle || undefined,
    webhookCertificate: config.platformWebhookCertificate || undefined,
    webhooks: (scope, id, wiring) => {
      new TenantWebhooks(scope, id, wiring);
      if (webhookExistsAt('instance-quota', config.apiLevel)) new InstanceQuotaWebhook(scope, `${id}-instance`, wiring);
    },
    labelPolicy: {
      resources: labelledResources(),
      // gitops mode: Argo CD applies our tree, the sandboxes' and MyDrive claims' objects included.
      writers: [`system:serviceaccount:${config.argocdNamespace}:argocd-application-controller`, ...config.platformLabelWriters],
      mydrivePvcsNamespace: config.mydrivePvcsNamespace,
    },
    bastion: config.platformBastion ? { sshdImage: config.platformBastionSshdImage, rules: deriveBastionRules() } : undefined,
    imageList: config.platformImageListRegistryUrl
      ? {
          registryUrl: config.platformImageListRegistryUrl,
          name: config.platformImageListName,
          advertisedRegistryName: config.platformImageListAdvertisedRegistryName,
          updateIntervalSeconds: config.platformImageListUpdateInterval,
          rules: deriveImageListRules(config.platformImageListName),
        }
      : undefined,
  };
}

/** The namespaced kinds the controller watches by our label (`childKinds`), by API group. */
export function labelledResources(): { group: string; resources: string[] }[] {
  const byGroup = new Map<string, string[]>();
  for (const { apiVersion, kind } of childKinds()) {
    const res = KIND_RESOURCES[`${apiVersion}/${kind}`];
    if (!res?.namespaced) continue;
    const group = apiVersion.includes('/') ? apiVersion.slice(0, apiVersion.indexOf('/')) : '';
    byGroup.set(group, [...(byGroup.get(group) ?? []), res.plural]);
  }
  return [...byGroup].map(([group, resources]) => ({ group, resources }));
}

/** Adds the `platform` chart (shared ClusterRoles + the install) to an App. */
export function platformChart(app: App, config: ComposerConfig): PlatformChart {
  return new PlatformChart(app, 'platform', { sandboxClusterRole: config.sandboxClusterRole, sharedVolumes: kindExistsAt('SharedVolume', config.apiLevel), install: platformInstallProps(config) });
}

/** Every object of the install, in chart order. */
export function renderPlatform(config: ComposerConfig): KubeObject[] {
  return platformChart(new App(), config).toJson() as KubeObject[];
}
