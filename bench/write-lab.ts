import { writeFileSync, mkdirSync } from 'node:fs';
import jsYaml from 'js-yaml';
import { generateLab } from '../test/support/generate-lab.ts';
const [n, t, w, dir] = process.argv.slice(2);
mkdirSync(dir, { recursive: true });
const by = new Map<string, unknown[]>();
for (const o of generateLab({ instances: +n, tenants: +t, workspaces: +w })) {
  const f = o.kind === 'Instance' ? `instances-${o.metadata.namespace}.yaml` : `${o.kind.toLowerCase()}s.yaml`;
  by.set(f, [...(by.get(f) ?? []), o]);
}
for (const [f, objs] of by) writeFileSync(`${dir}/${f}`, objs.map((o) => jsYaml.dump(o)).join('---\n'));
