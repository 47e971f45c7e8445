#!/usr/bin/env bash
# Regenerates docs/scenario-format.md's key tables from the schema
# (loader/schema.cpp), between the doc's markers. Needs a build:
# scripts/gen_docs.sh [BUILD_DIR]   (default build)
set -euo pipefail
cd "$(dirname "$0")/.."
dir="${1:-build}"
cmake --build "$dir" --target ddpsim_schema_doc >/dev/null
doc=docs/scenario-format.md
begin='<!-- generated from loader/schema.cpp by scripts/gen_docs.sh: edit the schema, not this part -->'
end='<!-- end of the generated part -->'
grep -qF "$begin" "$doc" && grep -qF "$end" "$doc" || { echo "gen_docs: $doc lacks the markers" >&2; exit 1; }
tmp=$(mktemp)
"$dir/scenarios/ddpsim_schema_doc" > "$tmp.gen"
awk -v b="$begin" -v e="$end" -v gen="$tmp.gen" '
  $0 == b { print; while ((getline line < gen) > 0) print line; skip = 1; next }
  index($0, e) == 1 { skip = 0 }
  !skip { print }' "$doc" > "$tmp"
mv "$tmp" "$doc"
rm -f "$tmp.gen"
echo "gen_docs: $doc regenerated"
