#!/usr/bin/env bash
# Rewrites tests/golden/ from this build's predictions. Commit the result
# with a message that says why each prediction changed.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/build.sh build >/dev/null
UPDATE_GOLDEN=1 ctest --test-dir build -R '^golden\.' --output-on-failure
git status --short tests/golden
