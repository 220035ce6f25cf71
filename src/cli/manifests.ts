import { writeFileSync } from 'node:fs';
import type { Command } from 'commander';
import { renderPlatform } from '../platform/install.ts';
import { objectsToYaml } from '../sinks/yaml-emitter.ts';
import { addConfigOptions, configFromOptions } from './options.ts';
import { EXIT_INPUT, EXIT_OK, reportProblems } from './report.ts';

interface ManifestsOptions {
  output?: string;
  stdout?: boolean;
  [key: string]: unknown;
}

/** `crownlabs manifests`: the install of crownlabs-composer itself (the `platform` chart). */
export function registerManifests(program: Command): void {
  const cmd = program
    .command('manifests')
    .description('render the install of crownlabs-composer (CRDs, namespace, RBAC derived from what the controller renders and reads, Deployments, Services, PDBs) as one YAML stream')
    .option('-o, --output <file>', 'write to this file (default: stdout)')
    .option('--stdout', 'write to stdout (the default)');
  addConfigOptions(cmd).action((opts: ManifestsOptions) => {
    process.exitCode = runManifests(opts);
  });
}

export function runManifests(opts: ManifestsOptions): number {
  const { config, problems } = configFromOptions(opts);
  if (reportProblems(problems)) return EXIT_INPUT;
  const yaml = objectsToYaml(renderPlatform(config));
  if (opts.output && !opts.stdout) writeFileSync(opts.output, yaml);
  else process.stdout.write(yaml);
  return EXIT_OK;
}
