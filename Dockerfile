# The deployable tree of docs/operation.md's "Deploying", as an image. Not built where it
# was written (no Docker there, no registry but npm's): keep it to the steps
# scripts/check-production-install.sh proves.

# Build: a full install (its postinstall generates the Prisma client and
# compiles dist/), then everything that does not run pruned away.
FROM node:24-bookworm-slim AS build
WORKDIR /app
COPY . .
RUN npm ci --no-audit --no-fund && npm prune --omit=dev --omit=optional

# Run: the compiled service, its runtime dependencies and the files it reads
# (the SDL, the migrations it applies at start). No compiler, no Prisma CLI.
FROM node:24-bookworm-slim
ENV NODE_ENV=production HOST=0.0.0.0 PORT=4000
WORKDIR /app
COPY --from=build /app/package.json ./
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY --from=build /app/schema ./schema
COPY --from=build /app/prisma/migrations ./prisma/migrations
USER node
EXPOSE 4000
# node itself, not npm: SIGTERM from the container runtime reaches the service.
# DATABASE_URL and SECRETS_KEY come from the environment the image runs in.
CMD ["node", "--max-semi-space-size=16", "dist/main.js"]
