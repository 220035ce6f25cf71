#!/usr/bin/env bash
# scripts/ensure-docker-registry.sh — Debian packages the image-list and SSH-bastion tests run for
# real, installed only when missing (idempotent, like .ci/prereqs; a second run installs nothing):
#   docker-registry  /usr/bin/docker-registry, a real Docker Registry HTTP API v2 (imagelist tests)
#   apache2-utils    htpasswd -B, the bcrypt htpasswd file of the basic-auth registry run
#   tcpdump          the packet source of `crownlabs ssh-tracker` (SYN capture, needs CAP_NET_RAW)
#   iproute2         `ip netns` / veth pairs of the tracker test
# The registry package's systemd unit is not used: tests start their own registry on a free port.
set -euo pipefail

pkgs=(docker-registry apache2-utils tcpdump iproute2)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if ((${#missing[@]})); then
  if [[ $(id -u) -ne 0 ]]; then
    echo "ensure-docker-registry: missing packages ${missing[*]} and not root; install them first" >&2
    exit 1
  fi
  echo "ensure-docker-registry: apt-get install ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  # A service started by the package's postinst would hold port 5000: don't start services.
  policy=/usr/sbin/policy-rc.d
  created_policy=0
  if [[ ! -e $policy ]]; then
    printf '#!/bin/sh\nexit 101\n' >"$policy" && chmod +x "$policy" && created_policy=1
  fi
  trap '[[ $created_policy -eq 1 ]] && rm -f "$policy"' EXIT
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
command -v docker-registry >/dev/null && command -v htpasswd >/dev/null && command -v tcpdump >/dev/null && command -v ip >/dev/null
