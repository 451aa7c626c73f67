# The deployable tree of docs/operation.md's "Deploying", as an image, built
# in CI with podman (scripts/container/check.sh) on a base made locally.
#
#   docker build -t chat-user-service .
#   podman build --format docker -t chat-user-service .      (docker format: keeps HEALTHCHECK)
#
# NODE_IMAGE: the official image, pinned by digest (node:24-bookworm-slim,
# Node 24.18.0; refresh with `docker buildx imagetools inspect node:24-bookworm-slim`).
# Where no registry is reachable, pass a base of your own with Node 24 and npm
# (CI: scripts/container/base-image.sh, Debian bookworm + Node from the npm registry).
ARG NODE_IMAGE=node:24-bookworm-slim@sha256:6f7b03f7c2c8e2e784dcf9295400527b9b1270fd37b7e9a7285cf83b6951452d

FROM ${NODE_IMAGE} AS build
WORKDIR /app
# `ci` as everyone should; `install` where the registry lacks other platforms'
# optional binaries that `npm ci` insists on (this project's CI: see .ci/run).
ARG NPM_INSTALL=ci
# The dependency manifests first: this layer (the install, minutes) is reused
# until they change. No scripts yet: the package's own postinstall needs the sources.
COPY package.json package-lock.json ./
RUN npm ${NPM_INSTALL} --ignore-scripts --no-audit --no-fund
# Then the sources: the Prisma client generated, dist/ compiled, everything
# that does not run pruned away (dev and optional dependencies).
COPY . .
RUN node scripts/postinstall.mjs && npm prune --omit=dev --omit=optional --no-audit --no-fund

# Run: the compiled service, its runtime dependencies and the files it reads
# (the SDL, the migrations `admin migrate` applies). No compiler, no sources,
# no Prisma CLI.
FROM ${NODE_IMAGE}
ARG BUILD_REVISION=unknown
ENV NODE_ENV=production HOST=0.0.0.0 PORT=4000 BUILD_REVISION=${BUILD_REVISION}
WORKDIR /app
COPY --from=build /app/package.json ./
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY --from=build /app/schema ./schema
COPY --from=build /app/prisma/migrations ./prisma/migrations
USER node
EXPOSE 4000
# The process answers (liveness); readiness, which also needs the database, is /readyz.
HEALTHCHECK --interval=10s --timeout=3s --start-period=20s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.PORT || 4000) + '/healthz').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
# node itself, not npm: SIGTERM from the container runtime reaches the service (the drain: docs/operation.md, Stopping).
# DATABASE_URL and SECRETS_KEY come from the environment the image runs in.
CMD ["node", "--max-semi-space-size=16", "dist/main.js"]
