// Prints the README's configuration table from the one table of keys (src/config/keys.ts).
import { CONFIG_KEYS, envVarName, type ConfigKeyDef } from '../src/config/keys.ts';

const rows = (CONFIG_KEYS as readonly ConfigKeyDef[]).map((d) => {
  const def = typeof d.default === 'object' ? JSON.stringify(d.default) : String(d.default);
  return `| \`${d.key}\` | ${d.flag ? `\`${d.flag}\`` : '—'} | \`${envVarName(d.key)}\` | \`${def === '' ? '""' : def}\` | ${d.doc.replace(/\|/g, '\\|')} |`;
});
process.stdout.write(['| key (config file) | flag | environment | default | meaning |', '|---|---|---|---|---|', ...rows].join('\n') + '\n');
