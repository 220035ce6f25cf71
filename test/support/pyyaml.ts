import { spawnSync } from 'node:child_process';

/**
 * PyYAML (`yaml.safe_load`), the YAML 1.1 reader cloud-init uses, run once for a whole batch of
 * texts: one python3 process reads JSON lines (one YAML text each) and writes one JSON line back
 * per text. Values JSON cannot show as they are (dates, NaN, non-string keys, ...) come back
 * tagged as `{ "<python type>": repr }`, so that they differ from any plain JSON value.
 */
const SCRIPT = String.raw`
import json, math, sys, yaml

def plain(v):
    if v is None or isinstance(v, (bool, int, str)):
        return v
    if isinstance(v, float):
        return v if math.isfinite(v) else {"float": repr(v)}
    if isinstance(v, list):
        return [plain(x) for x in v]
    if isinstance(v, dict):
        if all(isinstance(k, str) for k in v):
            return {k: plain(x) for k, x in v.items()}
        return {"dict with non-string keys": repr(v)}
    return {type(v).__name__: repr(v)}

out = []
# split on \n only: splitlines() would also split on NEL, LS and PS, which JSON leaves raw.
for line in sys.stdin.buffer.read().decode("utf-8").split("\n"):
    if not line:
        continue
    try:
        out.append(json.dumps({"ok": plain(yaml.safe_load(json.loads(line)))}))
    except Exception as e:
        out.append(json.dumps({"error": type(e).__name__ + ": " + str(e)}))
sys.stdout.write("\n".join(out) + "\n")
`;

export const PYTHON = '/usr/bin/python3';

export type PyYamlResult = { ok: unknown } | { error: string };

export function pyyamlLoad(texts: readonly string[]): PyYamlResult[] {
  if (texts.length === 0) return [];
  const run = spawnSync(PYTHON, ['-c', SCRIPT], {
    input: texts.map((t) => JSON.stringify(t)).join('\n'),
    maxBuffer: 256 * 1024 * 1024,
    encoding: 'utf8',
  });
  if (run.error || run.status !== 0) {
    throw new Error(`${PYTHON} with PyYAML failed (.ci/prereqs installs python3-yaml): ${run.error?.message ?? run.stderr}`);
  }
  const lines = run.stdout.split('\n').filter((l) => l !== '');
  if (lines.length !== texts.length) throw new Error(`PyYAML answered ${lines.length} of ${texts.length} texts`);
  return lines.map((l) => JSON.parse(l) as PyYamlResult);
}

/** One text through PyYAML: its value, or the error PyYAML raised. */
export function pyyamlLoadOne(text: string): PyYamlResult {
  return pyyamlLoad([text])[0];
}
