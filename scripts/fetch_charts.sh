#!/usr/bin/env bash
# The HTML report's chart libraries: npm ci of report/vega (pinned by its
# package-lock.json) and the three browser builds copied to OUT. Run by the
# build (report/CMakeLists.txt). On failure (offline, no registry) it warns
# and leaves OUT without them: the report then writes tables only.
# Usage: fetch_charts.sh NPM SOURCE_DIR WORK_DIR OUT_DIR
set -uo pipefail
npm="$1"; src="$2"; work="$3"; out="$4"
mkdir -p "$work" "$out"
cp "$src/package.json" "$src/package-lock.json" "$work/"
if ! (cd "$work" && "$npm" ci --no-audit --no-fund --silent >npm.log 2>&1); then
  echo "fetch_charts: npm ci failed (see $work/npm.log): the HTML report will have tables, not charts" >&2
  rm -f "$out"/*.js
  touch "$out/fetched"
  exit 0
fi
for f in vega/build/vega.min.js vega-lite/build/vega-lite.min.js vega-embed/build/vega-embed.min.js; do
  cp "$work/node_modules/$f" "$out/" || exit 1
done
touch "$out/fetched"
