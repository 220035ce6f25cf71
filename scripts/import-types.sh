#!/usr/bin/env bash
# Regenerates the typed cdk8s classes in imports/ from the vendored CRDs (offline).
# `cdk8s import` names its output after the API group, so each group is imported from one
# multi-document file; the k8s core API comes from cdk8s-plus-27 (`import * as k8s from 'cdk8s-plus-27/lib/imports/k8s.js'`)
# because `cdk8s import k8s` downloads the schema from the internet.
set -euo pipefail
cd "$(dirname "$0")/.."
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# Files are joined with explicit document separators: some start with comments and no `---`.
join() { local out=$1; shift; for f in "$@"; do printf '\n---\n'; cat "$f"; done > "$out"; }
join "$tmp/crownlabs.yaml" imports/crds/crownlabs.polito.it_*.yaml
mkdir -p "$tmp/e62be9e"
join "$tmp/e62be9e/crownlabs.yaml" imports/crds/e62be9e/crownlabs.polito.it_*.yaml
join "$tmp/kubevirt.yaml" imports/crds/kubevirt.io_virtualmachines.yaml imports/crds/kubevirt.io_virtualmachineinstances.yaml
join "$tmp/cdi.yaml" imports/crds/cdi.kubevirt.io_datavolumes.yaml
join "$tmp/argoproj.yaml" imports/crds/argoproj.io_applications.yaml imports/crds/argoproj.io_appprojects.yaml
# --no-save: cdk8s import would otherwise rewrite cdk8s.yaml (dropping its comments) with `imports:`
# entries naming these temporary files, which the next plain `cdk8s import` would then fail on.
# CDK8S_CHECK_UPGRADE=false: the CLI's upgrade check needs the internet and prints a stack trace offline.
for f in crownlabs kubevirt cdi argoproj; do
  CDK8S_CHECK_UPGRADE=false npx cdk8s import --no-save --language typescript --output imports "$tmp/$f.yaml"
done
# The API level e62be9e (src/inputs/api-level.ts): the same group, so its own folder.
CDK8S_CHECK_UPGRADE=false npx cdk8s import --no-save --language typescript --output imports/e62be9e "$tmp/e62be9e/crownlabs.yaml"
