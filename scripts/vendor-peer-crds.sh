#!/usr/bin/env bash
# Re-vendors the third-party CRDs of the test clusters' peers (imports/crds/,
# test/integration/cluster-setup.ts): Gateway API, Envoy Gateway's SecurityPolicy and MetalLB's
# (at the version of scripts/test-cluster.d/metallb/go.mod, the controller the test cluster runs),
# copied unchanged from the Go modules of the pinned releases (all Apache-2.0). `go mod download` is a no-op when the module cache already holds them
# (GOPROXY=off works then).
#
#   scripts/vendor-peer-crds.sh
#
# Envoy Gateway ships its CRDs twice: as Helm templates (charts/gateway-crds-helm/, wrapped in
# `{{- if .Values.crds.envoyGateway.enabled }}`) and as plain YAML under the gateway-helm chart's
# crds/ folder; the plain copy is taken.
set -euo pipefail
cd "$(dirname "$0")/.."
GATEWAY_API=sigs.k8s.io/gateway-api@v1.6.3
ENVOY_GATEWAY=github.com/envoyproxy/gateway@v1.9.1
METALLB=go.universe.tf/metallb@$(awk '$1 == "go.universe.tf/metallb" { print $2; exit }' scripts/test-cluster.d/metallb/go.mod)
OUT=imports/crds
export PATH="$PATH:/usr/local/go/bin"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
module_dir() { # module_dir MODULE@VERSION — the module's folder in the module cache
  (
    cd "$tmp"
    [ -f go.mod ] || go mod init crownlabs-composer/vendor-peer-crds >/dev/null 2>&1
    GOFLAGS=-mod=mod go mod download -json "$1"
  ) | node -e 'let s = ""; process.stdin.on("data", (d) => (s += d)).on("end", () => { const d = JSON.parse(s); if (d.Error) { console.error(d.Error); process.exit(1); } console.log(d.Dir); })'
}

dir=$(module_dir "$GATEWAY_API")
for kind in httproutes gateways gatewayclasses referencegrants; do
  cp "$dir/config/crd/standard/gateway.networking.k8s.io_$kind.yaml" "$OUT/"
done
dir=$(module_dir "$ENVOY_GATEWAY")
cp "$dir/charts/gateway-helm/charts/crds/crds/generated/gateway.envoyproxy.io_securitypolicies.yaml" "$OUT/"
dir=$(module_dir "$METALLB")
cp "$dir"/config/crd/bases/metallb.io_*.yaml "$OUT/"
chmod 644 "$OUT"/gateway.networking.k8s.io_*.yaml "$OUT"/gateway.envoyproxy.io_*.yaml "$OUT"/metallb.io_*.yaml
