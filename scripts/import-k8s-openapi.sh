#!/usr/bin/env bash
# Re-vendors the Kubernetes OpenAPI v3 schemas that `crownlabs validate` checks rendered objects
# against, offline, from the Go module cache (imports/k8s-openapi/, see SOURCE.md there).
#
#   scripts/import-k8s-openapi.sh [VERSION]      # default: the version named in SOURCE.md's header
#
# The documents come from k8s.io/kubernetes@VERSION/api/openapi-spec/v3/. The module is fetched
# with `go mod download` (a no-op when the module cache already holds it; GOPROXY=off works then).
# k8s.io/kubernetes's go.mod has `replace` directives, which `go get`/`go install` refuse, but
# `go mod download MODULE@VERSION` from a throwaway module only fetches the zip: that is all we need.
#
# Each document is pruned to what validation reads (`openapi`, `info`, `components.schemas`),
# `description`s are dropped, and it is written minified. `index.json` maps every kind of the
# document's own group-version to its schema and scope (namespaced or not, read from `paths`
# before they are dropped).
set -euo pipefail
cd "$(dirname "$0")/.."
VERSION=${1:-v1.37.2}
OUT=imports/k8s-openapi
GROUP_VERSIONS=(
  api__v1
  apis__apps__v1
  apis__batch__v1
  apis__networking.k8s.io__v1
  apis__rbac.authorization.k8s.io__v1
  apis__policy__v1
  apis__coordination.k8s.io__v1
  apis__admissionregistration.k8s.io__v1
)

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
(
  cd "$tmp"
  go mod init crownlabs-composer/import-k8s-openapi >/dev/null 2>&1
  GOFLAGS=-mod=mod go mod download -json "k8s.io/kubernetes@$VERSION" > download.json
)
DIR=$(node -e 'const d = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8")); if (d.Error) { console.error(d.Error); process.exit(1); } console.log(d.Dir)' "$tmp/download.json")
SPEC="$DIR/api/openapi-spec/v3"
[ -d "$SPEC" ] || { echo "no OpenAPI v3 folder in $DIR" >&2; exit 1; }

mkdir -p "$OUT"
rm -f "$OUT"/*_openapi.json "$OUT"/index.json
node --input-type=module - "$SPEC" "$OUT" "$VERSION" "${GROUP_VERSIONS[@]}" <<'EOF'
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
const [spec, out, version, ...groupVersions] = process.argv.slice(2);

const prune = (node) => {
  if (Array.isArray(node)) return node.map(prune);
  if (!node || typeof node !== 'object') return node;
  const o = {};
  for (const [k, v] of Object.entries(node)) {
    if (k === 'description') continue;
    // `properties` maps field names: a field called "description" is kept.
    o[k] = k === 'properties' ? Object.fromEntries(Object.entries(v).map(([n, s]) => [n, prune(s)])) : prune(v);
  }
  return o;
};

const index = { source: `k8s.io/kubernetes@${version}/api/openapi-spec/v3`, kinds: {} };
let total = 0;
for (const gv of groupVersions) {
  const file = `${gv}_openapi.json`;
  const doc = JSON.parse(readFileSync(join(spec, file), 'utf8'));
  // api__v1 → group "", version v1; apis__apps__v1 → apps/v1.
  const parts = gv.split('__');
  const [group, ver] = parts[0] === 'api' ? ['', parts[1]] : [parts[1], parts[2]];
  const namespaced = new Map();
  for (const [path, item] of Object.entries(doc.paths ?? {})) {
    for (const op of Object.values(item)) {
      const gvk = op && typeof op === 'object' ? op['x-kubernetes-group-version-kind'] : undefined;
      if (!gvk || gvk.group !== group || gvk.version !== ver) continue;
      const key = gvk.kind;
      namespaced.set(key, (namespaced.get(key) ?? false) || path.includes('/namespaces/{namespace}/'));
    }
  }
  for (const [name, schema] of Object.entries(doc.components.schemas)) {
    for (const gvk of schema['x-kubernetes-group-version-kind'] ?? []) {
      if (gvk.group !== group || gvk.version !== ver || !namespaced.has(gvk.kind)) continue;
      const apiVersion = group ? `${group}/${ver}` : ver;
      index.kinds[`${apiVersion}/${gvk.kind}`] = { file, schema: name, namespaced: namespaced.get(gvk.kind) };
    }
  }
  const pruned = { openapi: doc.openapi, info: doc.info, components: { schemas: prune(doc.components.schemas) } };
  const text = JSON.stringify(pruned);
  writeFileSync(join(out, file), text + '\n');
  total += text.length + 1;
  console.log(`${file}: ${(text.length / 1024).toFixed(0)} KiB`);
}
index.kinds = Object.fromEntries(Object.entries(index.kinds).sort(([a], [b]) => (a < b ? -1 : 1)));
writeFileSync(join(out, 'index.json'), JSON.stringify(index, null, 1) + '\n');
console.log(`${Object.keys(index.kinds).length} kinds, ${(total / 1024).toFixed(0)} KiB of schemas`);
EOF
