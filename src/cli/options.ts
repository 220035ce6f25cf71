import { Option, type Command } from 'commander';
import type { Problem } from '../inputs/problems.ts';
import { loadConfig, type ComposerConfig } from '../config/config.ts';
import { CONFIG_KEYS, envVarName, type ConfigKeyDef } from '../config/keys.ts';

/**
 * Adds `--config FILE` and one flag per configuration key to a command. The key flags work on the
 * command but are left out of its --help (about 60 of them would bury the command's own flags):
 * `crownlabs help config` lists them all.
 */
export function addConfigOptions(cmd: Command): Command {
  cmd.option('--config <file>', "YAML configuration file; environment CROWNLABS_* and the key flags override it (all keys: 'crownlabs help config', docs/configuration.md)");
  for (const def of CONFIG_KEYS as readonly ConfigKeyDef[]) {
    if (!def.flag) continue; // environment only
    const opt = new Option(`${def.flag} <value>`, `${def.doc} [env ${envVarName(def.key)}]`).hideHelp();
    cmd.addOption(def.type === 'enum' && def.enumValues ? opt.choices([...def.enumValues]) : opt);
  }
  cmd.addHelpText('after', "\nConfiguration: each key of the config file also has a flag (e.g. --website-base-url) and a\nCROWNLABS_* variable; flags > environment > --config file > defaults. All keys: crownlabs help config");
  return cmd;
}

/** `crownlabs help config`: every configuration key, generated from the one table (src/config/keys.ts). */
export function configHelp(): string {
  const lines = [
    'Configuration keys of crownlabs',
    '',
    'Each key is set, from lowest to highest precedence, by its default, the --config YAML file',
    '(`key: value`), its environment variable, or its flag on the command line. Secrets marked',
    '"environment only" are never read from the file or a flag.',
    '',
  ];
  for (const def of CONFIG_KEYS as readonly ConfigKeyDef[]) {
    const dflt = flagText(def);
    const where = [def.flag ? `${def.flag} <value>` : 'environment only', envVarName(def.key), `default: ${dflt === '' ? '""' : dflt}`];
    if (def.enumValues) where.push(`one of: ${def.enumValues.join(', ')}`);
    lines.push(def.key, `  ${where.join('  ·  ')}`, ...wrap(def.doc, 96).map((l) => `  ${l}`), '');
  }
  return lines.join('\n');
}

/** A key's default as its flag takes it: `k=v&k=v` for a map, `a,b` for a list. */
function flagText(def: ConfigKeyDef): string {
  const d = def.default as unknown;
  if (Array.isArray(d)) return d.join(',');
  if (d && typeof d === 'object') return Object.entries(d as Record<string, string>).map(([k, v]) => `${k}=${v}`).join('&');
  return String(d);
}

function wrap(text: string, width: number): string[] {
  const out: string[] = [];
  let line = '';
  for (const word of text.split(/\s+/)) {
    if (line && line.length + 1 + word.length > width) {
      out.push(line);
      line = word;
    } else line = line ? `${line} ${word}` : word;
  }
  if (line) out.push(line);
  return out;
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
