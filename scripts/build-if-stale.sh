#!/bin/sh
# Before `npm start` and `npm run admin`: rebuilds dist/ (scripts/build.mjs)
# when something under src/ is newer than the last build, so that a changed
# or freshly pulled tree never runs yesterday's JavaScript. The check is
# `find` rather than node: it runs before every start, and a node process
# costs ~0.15 s here where find costs a few ms. A tree without src/ (a deployed
# one) has nothing to compare; a directory's time changes when a file in it is
# added or removed, so those count too.
[ -d src ] || exit 0
if [ -f dist/.build.json ] && [ -z "$(find src -newer dist/.build.json -print 2>/dev/null | head -n 1)" ]; then exit 0; fi
exec node scripts/build.mjs --if-stale
