# crownlabs-composer: one image for the controller, the image-list updater and the bastion sidecars
# (`crownlabs controller|imagelist|bastion-keys|ssh-tracker`). The TypeScript sources are bundled by
# esbuild at build time (src/runtime/build.mjs, stage `build`): the runtime image holds the bundles
# in /app/.cache and the production dependencies only — no esbuild, no tsx (both devDependencies).
#
# Base: Node 24 LTS on Debian 12 (bookworm) slim, pinned by digest so that a rebuild gets the same
# bytes. The digest is the multi-architecture index of node:24-bookworm-slim as pinned in several
# unrelated public Dockerfiles (found with a code search, November 2026; Docker could not be run
# where this was written). To refresh it (and pick up security fixes), run
#   docker buildx imagetools inspect node:24-bookworm-slim
# and copy the "Digest:" line of the index here. Every stage uses the same image: the bundle's file
# name carries the Node version (src/runtime/bundle.mjs), so build and runtime must agree.
ARG NODE_IMAGE=node:24-bookworm-slim@sha256:0e0ff40c39bc087845bfb27465a0df4ea419520094bc35842ff83dd8cbe6f9b6

# Bundles: all dependencies (esbuild is a devDependency), then the product's entry modules.
FROM ${NODE_IMAGE} AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json ./
COPY src ./src
COPY constructs ./constructs
COPY imports ./imports
RUN node src/runtime/build.mjs

# Production dependencies only. --omit=optional drops cdk8s-plus-27's optional release tooling
# (backport and ~150 packages it pulls: 33 MB) that nothing here loads; no install scripts needed.
FROM ${NODE_IMAGE} AS deps
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --omit=optional --ignore-scripts --no-audit --no-fund && npm cache clean --force

FROM ${NODE_IMAGE}
# tcpdump for the SSH tracker. It runs as non-root: the file capabilities let it capture, and the
# bastion's Pod adds NET_RAW/NET_ADMIN to that container only (see constructs/bastion).
RUN apt-get update \
 && apt-get install -y --no-install-recommends tcpdump libcap2-bin tini \
 && setcap cap_net_raw,cap_net_admin+eip "$(command -v tcpdump)" \
 && apt-get purge -y libcap2-bin && rm -rf /var/lib/apt/lists/* \
 && groupadd --gid 10001 crownlabs && useradd --uid 10001 --gid 10001 --no-create-home --shell /usr/sbin/nologin crownlabs
WORKDIR /app
ENV NODE_ENV=production
COPY --from=deps /app/node_modules ./node_modules
COPY package.json tsconfig.json ./
COPY bin ./bin
# The sources stay: bin/crownlabs.js finds its bundle by a hash of them.
COPY src ./src
COPY constructs ./constructs
COPY imports ./imports
COPY --from=build /app/.cache ./.cache
# Fails the build unless the CLI starts from the bundles alone (no esbuild, no tsx here).
RUN node bin/crownlabs.js --version
# Numeric user: Kubernetes can verify runAsNonRoot. The root filesystem can be read-only: the
# bundles are made above, and nothing writes under /app (/tmp is an emptyDir in the Deployments).
USER 10001:10001
ENTRYPOINT ["/usr/bin/tini", "--", "node", "/app/bin/crownlabs.js"]
CMD ["--help"]
