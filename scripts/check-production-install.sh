#!/usr/bin/env bash
# Proves a production install works, as README's Development section says:
# a clone of the last commit, `npm install --omit=dev` (whose postinstall must
# generate the Prisma client without any dev dependency), then `npm start`
# with NODE_ENV=production against a fresh database on a PostgreSQL server,
# answering /readyz. The database and the copy are removed afterwards.
#
# Speed: the copy's node_modules starts as hard links to this checkout's
# (`cp -al`; npm removes the dev packages, it does not rewrite files in place),
# so the install takes ~10 s instead of ~50 s of unpacking. What is checked is
# the same: the tree npm leaves is exactly the production tree of the lock
# file. PROD_CHECK_FRESH=1 (or another filesystem) installs from scratch.
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

git -c advice.detachedHead=false clone -q "$ROOT" "$APP"
cd "$APP"
if [ "${PROD_CHECK_FRESH:-0}" != 1 ] && [ -d "$ROOT/node_modules" ] && cp -al "$ROOT/node_modules" node_modules 2>/dev/null; then
  rm -f node_modules/.package-lock.json
else
  rm -rf node_modules
fi
npm install --omit=dev --prefer-offline --no-audit --no-fund --loglevel=error

# The dev tools are gone, and the postinstall generated the client.
for dev in jest @graphql-codegen/cli @eddeee888/gcg-typescript-resolver-files @swc/core; do
  if [ -e "node_modules/$dev" ]; then echo "production install still has the dev dependency $dev" >&2; exit 1; fi
done
test -f src/__generated__/prisma/client.ts || { echo "postinstall did not generate the Prisma client" >&2; exit 1; }

psql -q "$PG_URL" -c "CREATE DATABASE $DB" >/dev/null
: >"$WORK/service.log"
# Its own process group, so that the trap stops npm and the node it started.
NODE_ENV=production DATABASE_URL="$DB_URL" SECRETS_KEY="$(openssl rand -hex 32)" HOST=127.0.0.1 PORT=0 \
  setsid npm start >"$WORK/service.log" 2>&1 &
PID=$!

ADDRESS=""
for _ in $(seq 1 300); do
  ADDRESS="$(grep -o '"address":"http[^"]*"' "$WORK/service.log" | head -1 | cut -d'"' -f4 || true)"
  [ -n "$ADDRESS" ] && break
  kill -0 "$PID" 2>/dev/null || break
  sleep 0.1
done
if [ -z "$ADDRESS" ]; then
  echo "the service did not start:" >&2
  cat "$WORK/service.log" >&2
  exit 1
fi
READY="$(curl -fsS "$ADDRESS/readyz")" || { echo "GET /readyz failed:" >&2; cat "$WORK/service.log" >&2; exit 1; }
echo "production install: $ADDRESS/readyz → $READY"
kill -TERM -- "-$PID"
wait "$PID" || true
PID=""
