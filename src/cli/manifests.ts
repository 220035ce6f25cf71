import { writeFileSync } from 'node:fs';
import type { Command } from 'commander';
import { stringify } from 'yaml';
import { App, Chart } from 'cdk8s';
import { ArgoApplication } from '../../constructs/gitops/argo-application.ts';
import { ArgoCdSettings } from '../../constructs/gitops/argocd-settings.ts';
import type { KubeObject } from '../api/types.ts';
import type { ComposerConfig } from '../config/config.ts';
import { renderPlatform } from '../platform/install.ts';
import { objectsToYaml } from '../sinks/yaml-emitter.ts';
import { addConfigOptions, configFromOptions } from './options.ts';
import { EXIT_INPUT, EXIT_OK, EXIT_USAGE, reportProblems } from './report.ts';

interface ManifestsOptions {
  output?: string;
  stdout?: boolean;
  argocdApplication?: string;
  argocdCm?: boolean;
  [key: string]: unknown;
}

/** `crownlabs manifests`: the install of crownlabs-composer itself (the `platform` chart). */
export function registerManifests(program: Command): void {
  const cmd = program
    .command('manifests')
    .description('render the install of crownlabs-composer (CRDs, namespace, RBAC derived from what the controller renders and reads, Deployments, Services, PDBs) as one YAML stream')
    .option('-o, --output <file>', 'write to this file (default: stdout)')
    .option('--stdout', 'write to stdout (the default)')
    .option('--argocd-application <path>', 'instead, render the Argo CD Application `crownlabs-platform` that syncs the install committed at <path> of gitopsRepoUrl')
    .option('--argocd-cm', 'instead, render the argocd-cm keys the gitops tree needs (resource health checks, resource tracking method), to server-side apply into Argo CD\'s argocd-cm');
  addConfigOptions(cmd).action((opts: ManifestsOptions) => {
    process.exitCode = runManifests(opts);
  });
}

export function runManifests(opts: ManifestsOptions): number {
  const { config, problems } = configFromOptions(opts);
  if (reportProblems(problems)) return EXIT_INPUT;
  if (opts.argocdApplication && opts.argocdCm) {
    process.stderr.write('crownlabs manifests: --argocd-application and --argocd-cm render different things: give one\n');
    return EXIT_USAGE;
  }
  const objects = opts.argocdCm ? argocdSettings(config) : opts.argocdApplication ? platformApplication(config, opts.argocdApplication) : renderPlatform(config);
  // The Lua scripts stay readable as literal block scalars (the emitter quotes multi-line strings).
  const yaml = opts.argocdCm ? objects.map((o) => `---\n${stringify(o, { blockQuote: 'literal', lineWidth: 0 })}`).join('') : objectsToYaml(objects);
  if (opts.output && !opts.stdout) writeFileSync(opts.output, yaml);
  else process.stdout.write(yaml);
  return EXIT_OK;
}

/** The Argo CD Application of the platform itself (same construct as the gitops tree's). */
export function platformApplication(config: ComposerConfig, path: string): KubeObject[] {
  const chart = new Chart(new App(), 'platform-application');
  new ArgoApplication(chart, 'platform', {
    name: 'crownlabs-platform',
    argocdNamespace: config.argocdNamespace,
    project: config.argocdProject,
    repoUrl: config.gitopsRepoUrl,
    revision: config.gitopsRevision,
    path,
    // Before the lab's own Applications: they need the CRDs and the shared ClusterRoles.
    syncWave: -1,
  });
  return chart.toJson() as KubeObject[];
}

/** The argocd-cm keys the gitops tree relies on (health checks, tracking method). */
export function argocdSettings(config: ComposerConfig): KubeObject[] {
  const chart = new Chart(new App(), 'argocd-settings');
  new ArgoCdSettings(chart, 'settings', { argocdNamespace: config.argocdNamespace });
  return chart.toJson() as KubeObject[];
}
