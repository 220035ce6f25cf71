// A generated lab written as one file per tenant namespace: write-lab.ts N T W DIR [LEVEL]
// (LEVEL, or BENCH_API_LEVEL, picks the API level whose shape the inputs have; default 2e8aeb9).
import { writeFileSync, mkdirSync } from 'node:fs';
import jsYaml from 'js-yaml';
import { generateLab } from '../test/support/generate-lab.ts';
import { benchApiLevel } from './level.ts';
const [n, t, w, dir, levelArg] = process.argv.slice(2);
const level = benchApiLevel(levelArg);
mkdirSync(dir, { recursive: true });
const by = new Map<string, unknown[]>();
for (const o of generateLab({ instances: +n, tenants: +t, workspaces: +w }, level)) {
  const f = o.kind === 'Instance' ? `instances-${o.metadata.namespace}.yaml` : `${o.kind.toLowerCase()}s.yaml`;
  by.set(f, [...(by.get(f) ?? []), o]);
}
for (const [f, objs] of by) writeFileSync(`${dir}/${f}`, objs.map((o) => jsYaml.dump(o)).join('---\n'));
