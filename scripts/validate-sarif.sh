#!/usr/bin/env bash
# Validates a SARIF file the way docs/bench-analyze.md reports it: against the SARIF 2.1.0 JSON
# schema and Microsoft's SARIF validation rules, both from the npm package
# @microsoft/sarif-multitool-linux (installed into $SARIF_TOOLS_DIR on first use).
#
# Usage: scripts/validate-sarif.sh report/efficiency/analysis.sarif
set -euo pipefail
SARIF="$(realpath "${1:?usage: scripts/validate-sarif.sh FILE.sarif}")"
TOOLS="${SARIF_TOOLS_DIR:-/tmp/sarif-multitool}"
PKG="$TOOLS/node_modules/@microsoft/sarif-multitool-linux"
if [ ! -f "$PKG/Sarif.Multitool" ]; then
    npm install --prefix "$TOOLS" --no-audit --no-fund --silent @microsoft/sarif-multitool-linux@5.7.0
fi
chmod u+x "$PKG/Sarif.Multitool"

python3 - "$PKG/sarif-2.1.0.json" "$SARIF" <<'PY'
import json, sys
try:
    import jsonschema
except ImportError:
    sys.exit("pip install jsonschema for the schema check")
schema, doc = (json.load(open(p)) for p in sys.argv[1:3])
errors = sorted(jsonschema.Draft7Validator(schema).iter_errors(doc), key=str)
for e in errors:
    print(f"schema: {'/'.join(map(str, e.absolute_path))}: {e.message}")
print(f"JSON schema (sarif-2.1.0.json of the multitool): {len(errors)} error(s)")
sys.exit(1 if errors else 0)
PY

OUT="$(mktemp -d)/validation.sarif"
DOTNET_SYSTEM_GLOBALIZATION_INVARIANT=1 "$PKG/Sarif.Multitool" validate -o "$OUT" "$SARIF" |
    grep -E 'error|warning|note|completed' || true
python3 - "$OUT" <<'PY'
import json, sys
results = json.load(open(sys.argv[1]))["runs"][0].get("results", [])
errors = [r for r in results if r.get("level", "warning") == "error"]
print(f"Sarif.Multitool validate: {len(errors)} error(s), {len(results) - len(errors)} other result(s)")
sys.exit(1 if errors else 0)
PY
