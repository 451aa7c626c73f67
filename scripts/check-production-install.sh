#!/usr/bin/env bash
# Proves the deployable tree docs/operation.md's "Deploying" section describes: in a
# clone of the last commit, `npm install` (its postinstall generates the Prisma
# client and compiles dist/), then `npm prune --omit=dev --omit=optional`, then
# src/ removed (nothing may read it at run time). What is left must hold no
# compiler, loader, Prisma CLI or code generator, and must run: `npm start`
# with NODE_ENV=production against a fresh database on a PostgreSQL server
# answers /readyz (started without DATABASE_URL it says that the embedded
# database is not installed); the admin CLI creates an application and a user there; a
# REST and a GraphQL lookup with the application's API key find that user;
# SIGTERM stops it with exit 0. The database and the copy are removed afterwards.
#
# Speed: the copy's node_modules starts as hard links to this checkout's
# (`cp -al`; npm removes packages, it does not rewrite files in place), so the
# install takes seconds instead of ~50 s of unpacking. What is checked is the
# same: the tree npm leaves is exactly the production tree of the lock file.
# PROD_CHECK_FRESH=1 (or another filesystem) installs from scratch.
#
# Usage: scripts/check-production-install.sh [postgres://user@host:port/db]
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
PG_URL="${1:-${CI_PG_URL:-postgres://postgres@127.0.0.1:5432/postgres}}"
DB="prod_check_$$_$RANDOM"
DB_URL="${PG_URL%/*}/$DB"
WORK="$(mktemp -d "${TMPDIR:-/tmp}/prod-check.XXXXXX")"
APP="$WORK/app"
PID=""

cleanup() {
  if [ -n "$PID" ] && kill -0 "$PID" 2>/dev/null; then kill -TERM -- "-$PID" 2>/dev/null || true; fi
  psql -q "$PG_URL" -c "DROP DATABASE IF EXISTS $DB WITH (FORCE)" >/dev/null 2>&1 || true
  rm -rf "$WORK"
}
trap cleanup EXIT
fail() {
  echo "production install: $*" >&2
  [ -s "$WORK/service.log" ] && { echo "--- service log:" >&2; cat "$WORK/service.log" >&2; }
  exit 1
}

git -c advice.detachedHead=false clone -q "$ROOT" "$APP"
cd "$APP"
# The checkout's commit (a clone of a worktree checks out the repository's HEAD).
git -c advice.detachedHead=false checkout -q "$(git -C "$ROOT" rev-parse HEAD)"
if [ "${PROD_CHECK_FRESH:-0}" != 1 ] && [ -d "$ROOT/node_modules" ] && cp -al "$ROOT/node_modules" node_modules 2>/dev/null; then
  rm -f node_modules/.package-lock.json
else
  rm -rf node_modules
fi

# The build machine's steps.
npm install --prefer-offline --no-audit --no-fund --loglevel=error
test -f dist/main.js && test -f dist/cli/admin.js && test -f dist/__generated__/prisma/client.js || fail "npm install did not build dist/"
npm prune --omit=dev --omit=optional --no-audit --no-fund --loglevel=error
rm -rf src

# No development tooling is left: compilers and loaders, the Prisma CLI and its
# engines, code generators, test tools (the embedded database is optional too).
# (npm prune leaves emptied scope folders such as @esbuild/ behind: a package is its package.json.)
for dev in typescript tsx esbuild @esbuild/linux-x64 @swc/core prisma @prisma/engines @prisma/schema-engine-wasm effect \
  @graphql-codegen/cli @eddeee888/gcg-typescript-resolver-files jest @electric-sql/pglite; do
  [ ! -e "node_modules/$dev/package.json" ] || fail "the pruned tree still has $dev"
done
for bin in tsc tsx esbuild swc prisma graphql-codegen jest; do
  [ ! -e "node_modules/.bin/$bin" ] || fail "the pruned tree still has node_modules/.bin/$bin"
done
echo "production install: node_modules $(du -sh node_modules | cut -f1), dist $(du -sh dist | cut -f1)"

# Without the embedded database, no DATABASE_URL is a configuration error that says why.
NO_DB="$(env -u DATABASE_URL NODE_ENV=production SECRETS_KEY="$(openssl rand -hex 32)" PGLITE_DIR="$WORK/pglite" node dist/main.js 2>&1)" &&
  fail "started without DATABASE_URL and without the embedded database: $NO_DB"
grep -q 'DATABASE_URL: required: this install has no embedded database' <<<"$NO_DB" || fail "without DATABASE_URL it said: $NO_DB"

psql -q "$PG_URL" -c "CREATE DATABASE $DB" >/dev/null
export NODE_ENV=production DATABASE_URL="$DB_URL" SECRETS_KEY="$(openssl rand -hex 32)"
: >"$WORK/service.log"
# Its own process group, so that the trap stops npm and the node it started.
HOST=127.0.0.1 PORT=0 setsid npm start >"$WORK/service.log" 2>&1 &
PID=$!

ADDRESS=""
for _ in $(seq 1 300); do
  ADDRESS="$(grep -o '"address":"http[^"]*"' "$WORK/service.log" | head -1 | cut -d'"' -f4 || true)"
  [ -n "$ADDRESS" ] && break
  kill -0 "$PID" 2>/dev/null || break
  sleep 0.1
done
[ -n "$ADDRESS" ] || fail "the service did not start"
READY="$(curl -fsS "$ADDRESS/readyz")" || fail "GET /readyz failed"
echo "production install: $ADDRESS/readyz → $READY"

# The compiled admin CLI, against the database the service runs on.
APP_JSON="$(npm run -s admin -- app:create --name prod-check)" || fail "admin app:create failed"
APP_ID="$(node -p 'JSON.parse(process.argv[1]).application.id' "$APP_JSON")"
API_KEY="$(node -p 'JSON.parse(process.argv[1]).apiKey' "$APP_JSON")"
npm run -s admin -- user:create --app "$APP_ID" --login prodcheck --password prodcheck123 --external-user-id 4242 >/dev/null ||
  fail "admin user:create failed"
echo "production install: admin CLI created application $APP_ID and a user"

REST="$(curl -fsS "$ADDRESS/users/external/4242.json" -H "Authorization: ApiKey $API_KEY")" || fail "GET /users/external/4242.json failed"
[ "$(node -p 'JSON.parse(process.argv[1]).user.login' "$REST")" = prodcheck ] || fail "REST lookup answered $REST"
GRAPHQL="$(curl -fsS "$ADDRESS/graphql" -H "Authorization: ApiKey $API_KEY" -H 'Content-Type: application/json' \
  --data '{"query":"{ userByExternalId(externalUserId: 4242) { login } }"}')" || fail "POST /graphql failed"
[ "$(node -p 'JSON.parse(process.argv[1]).data.userByExternalId.login' "$GRAPHQL")" = prodcheck ] || fail "GraphQL lookup answered $GRAPHQL"
echo "production install: REST and GraphQL lookups answered"

# SIGTERM to the service itself (its log lines carry its pid), as a supervisor
# sends it to `node dist/main.js`: it stops cleanly, and npm exits with its code.
NODE_PID="$(grep -o '"pid":[0-9]*' "$WORK/service.log" | head -1 | cut -d: -f2)"
kill -TERM "$NODE_PID"
CODE=0
wait "$PID" || CODE=$?
PID=""
[ "$CODE" = 0 ] || fail "npm start exited $CODE after SIGTERM"
echo "production install: stopped cleanly on SIGTERM"
