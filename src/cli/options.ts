import { Option, type Command } from 'commander';
import type { Problem } from '../api/problems.ts';
import { loadConfig, type ComposerConfig } from '../config/config.ts';
import { CONFIG_KEYS, envVarName, type ConfigKeyDef } from '../config/keys.ts';

/** Adds `--config FILE` and one flag per configuration key to a command. */
export function addConfigOptions(cmd: Command): Command {
  cmd.option('--config <file>', 'YAML configuration file (keys in docs/configuration.md; environment CROWNLABS_* and flags override it)');
  for (const def of CONFIG_KEYS as readonly ConfigKeyDef[]) {
    if (!def.flag) continue; // environment only
    const opt = new Option(`${def.flag} <value>`, `${def.doc} [env ${envVarName(def.key)}]`);
    cmd.addOption(def.type === 'enum' && def.enumValues ? opt.choices([...def.enumValues]) : opt);
  }
  return cmd;
}

/** The effective configuration of a command: defaults < file < environment < flags. */
export function configFromOptions(opts: Record<string, unknown>, env: NodeJS.ProcessEnv = process.env): { config: ComposerConfig; problems: Problem[] } {
  const flags: Record<string, unknown> = {};
  for (const def of CONFIG_KEYS as readonly ConfigKeyDef[]) {
    if (!def.flag) continue;
    const value = opts[new Option(def.flag).attributeName()];
    if (value !== undefined) flags[def.key] = value;
  }
  return loadConfig({ file: opts.config as string | undefined, env, flags });
}
