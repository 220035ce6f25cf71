# crownlabs-composer: one image for the controller, the image-list updater and the bastion sidecars
# (`crownlabs controller|imagelist|bastion-keys|ssh-tracker`). The TypeScript sources are bundled by
# esbuild into /app/.cache at build time (src/runtime/build.mjs): the processes load plain JavaScript.

FROM node:20-bookworm-slim AS deps
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund && npm cache clean --force

FROM node:20-bookworm-slim
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
COPY src ./src
COPY constructs ./constructs
COPY imports ./imports
RUN node src/runtime/build.mjs
# Numeric user: Kubernetes can verify runAsNonRoot. The root filesystem can be read-only: the
# bundles are made above (the tsx fallback would cache under /tmp, an emptyDir in the Deployments).
USER 10001:10001
ENTRYPOINT ["/usr/bin/tini", "--", "node", "/app/bin/crownlabs.js"]
CMD ["--help"]
