#!/usr/bin/env bash
# CI's container step (.ci/run): the Dockerfile built with podman on a base
# made here (no image registry is reachable: scripts/container/base-image.sh),
# then the compose stack of deploy/compose.yaml brought up with podman-compose
# (PostgreSQL and Redis images made here the same way, from Debian's
# packages), and a GraphQL and a REST request answered through it.
#
#   bash scripts/container/check.sh            # the whole check
#   KEEP=1 bash scripts/container/check.sh     # leave the stack running
#
# Prints each phase's time (the base is made once per machine, the image's
# dependency layer is reused until the manifests change), the image's size and
# the answers. Needs root, podman, runc,
# debootstrap, podman-compose and the CNI dnsname plugin (Debian's packages:
# podman recommends the last; without it containers cannot find each other by name).
set -euo pipefail
cd "$(dirname "$0")/../.."
source scripts/container/podman-env.sh

check_started=$(date +%s)
BASE=$(bash scripts/container/base-image.sh)
echo "base: $BASE ($(($(date +%s) - check_started)) s)"
REVISION=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
API_IMAGE=localhost/chat-user-service:ci

echo "== image: podman build on $BASE"
started=$(date +%s)
# --network host: the build's npm install reaches the registry as this machine does.
# The machine's npm cache (which CI's own install has just filled with every
# package of the lock file) is the build's: its install unpacks tarballs
# instead of fetching them (cold builds here, on a machine loaded by other
# work: 482 s without it, 339 and 405 s with it).
podman build --format docker --network host --volume "$(npm config get cache):/root/.npm" \
  --build-arg NODE_IMAGE="$BASE" --build-arg NPM_INSTALL=install --build-arg BUILD_REVISION="$REVISION" \
  -t "$API_IMAGE" . >/tmp/chatsvc-image-build.log 2>&1 || {
  tail -40 /tmp/chatsvc-image-build.log
  exit 1
}
echo "built in $(($(date +%s) - started)) s; size: $(podman image inspect "$API_IMAGE" --format '{{.Size}}' | awk '{printf "%.0f MB", $1/1e6}') (base $(podman image inspect "$BASE" --format '{{.Size}}' | awk '{printf "%.0f MB", $1/1e6}'))"
podman image inspect "$API_IMAGE" --format 'healthcheck: {{json .Config.Healthcheck.Test}}; user: {{.Config.User}}; cmd: {{json .Config.Cmd}}'
# Only what runs: no sources, no compiler, no Prisma CLI, no development package.
podman run --rm --no-healthcheck --network none "$API_IMAGE" sh -c '
  test ! -e src && test ! -e node_modules/typescript && test ! -e node_modules/prisma && test ! -e node_modules/@swc/core && test ! -e node_modules/esbuild &&
  echo "runtime tree: $(du -sm node_modules | cut -f1) MB of node_modules, $(du -sm dist | cut -f1) MB of dist"'
podman run --rm --no-healthcheck --network none "$API_IMAGE" node dist/cli/admin.js --version

echo "== images for the compose stack: PostgreSQL and Redis from Debian's packages on the same base"
started=$(date +%s)
for name in postgres redis; do
  podman build --network host --build-arg BASE="$BASE" -t "localhost/chatsvc-$name:ci" -f "scripts/container/$name.Containerfile" scripts/container >/tmp/chatsvc-$name-build.log 2>&1 || {
    tail -20 /tmp/chatsvc-$name-build.log
    exit 1
  }
done

echo "built in $(($(date +%s) - started)) s"
[ -x /usr/lib/cni/dnsname ] || echo "warning: no CNI dnsname plugin (golang-github-containernetworking-plugin-dnsname): service names will not resolve"
echo "== compose: deploy/compose.yaml up (podman-compose $(podman-compose version 2>/dev/null | sed -n 's/.*podman-composer\? version *//p' | head -1))"
PORT=$(node -e "const s=require('net').createServer().listen(0,'127.0.0.1',()=>{console.log(s.address().port);s.close()})")
export API_IMAGE POSTGRES_IMAGE=localhost/chatsvc-postgres:ci REDIS_IMAGE=localhost/chatsvc-redis:ci API_PORT=$PORT
PROJECT="chatsvc-ci-$$"
compose() { podman-compose -p "$PROJECT" -f deploy/compose.yaml "$@"; }
cleanup() {
  if [ -z "${KEEP:-}" ]; then compose down -v >/dev/null 2>&1 || true; fi
}
trap cleanup EXIT
# The services of the stack by name: podman-compose 1.0 does not know profiles (the observability one needs images CI cannot make).
compose up -d --no-build postgres redis migrate api >/tmp/chatsvc-compose.log 2>&1 || {
  tail -40 /tmp/chatsvc-compose.log
  exit 1
}
base="http://127.0.0.1:$PORT"
for i in $(seq 1 120); do
  if [ "$(curl -s -o /dev/null -w '%{http_code}' "$base/readyz")" = 200 ]; then break; fi
  if [ "$i" = 120 ]; then
    echo "the stack did not become ready"
    for service in postgres redis migrate api; do
      echo "--- $service"
      podman logs "${PROJECT}_${service}_1" 2>&1 | tail -15
    done
    exit 1
  fi
  sleep 1
done
echo "ready after ${i} s"

# An application and a user made by the image's admin CLI, then one lookup each way.
admin() { podman exec "${PROJECT}_api_1" node dist/cli/admin.js "$@" | tail -1; }
app=$(admin app:create --name compose-check)
key=$(node -e 'console.log(JSON.parse(process.argv[1]).apiKey)' "$app")
appId=$(node -e 'console.log(JSON.parse(process.argv[1]).application.id)' "$app")
admin user:create --app "$appId" --login compose-user --password password123 --external-user-id 42 >/dev/null
rest=$(curl -s -H "Authorization: ApiKey $key" "$base/users/external/42.json")
graphql=$(curl -s -H "Authorization: ApiKey $key" -H 'content-type: application/json' -d '{"query":"{ userByExternalId(externalUserId: 42) { login } }"}' "$base/graphql")
echo "REST:    $rest" | cut -c1-160
echo "GraphQL: $graphql"
node -e '
  const [rest, graphql] = process.argv.slice(1).map((t) => JSON.parse(t));
  if (rest.user?.login !== "compose-user" || graphql.data?.userByExternalId?.login !== "compose-user") { console.error("unexpected answers"); process.exit(1); }
' "$rest" "$graphql"
echo "compose stack: PASS ($(($(date +%s) - check_started)) s in all)"
