#!/usr/bin/env bash
# Renders final_report.html from the fixture project with the real CLI and screenshots it in
# headless Chromium at desktop and phone widths, to check the page by eye.
#
#   apt-get install -y chromium        # Debian package; no network needed afterwards
#   scripts/screenshot-report.sh [OUT_DIR]    # default docs/screenshots
#
# Two reports are rendered: the fixture as steps 1–2 leave it (strategies and experiments
# missing), and the same with tests/fixtures/report-measured/ (fixture strategies and
# experiments) to show the before/after chart — those numbers are test fixtures, not
# measurements — and a real `audit --dry-run` of the fixture code on this machine.
set -euo pipefail
cd "$(dirname "$0")/.."
out="${1:-docs/screenshots}"
mkdir -p "$out"
browser="$(command -v chromium || command -v chromium-browser || command -v google-chrome || true)"
if [ -z "$browser" ]; then
  echo "chromium not found: apt-get install -y chromium" >&2
  exit 2
fi
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

cargo build --quiet
bin=target/debug/efficiency-audit

# 1. As steps 1–2 leave it.
"$bin" --quiet --output-dir "$work/plain" report --from tests/fixtures/report --source-root tests/fixtures/report
# 2. With fixture strategies and experiments.
mkdir -p "$work/measured-in"
cp tests/fixtures/report/theoretical_limits.yaml tests/fixtures/report/analysis.json "$work/measured-in/"
cp tests/fixtures/report-measured/strategies.json tests/fixtures/report-measured/experiments.json "$work/measured-in/"
"$bin" --quiet --output-dir "$work/measured" report --from "$work/measured-in" --source-root tests/fixtures/report

# 3. A real `audit` on this machine (ceilings measured here, the rules on the fixture code).
mkdir -p "$work/real"
cp -r tests/fixtures/report/src "$work/real/"
git -C "$work/real" init -q
(cd "$work/real" && "$OLDPWD/$bin" --quiet audit . --dry-run >/dev/null) || true

shoot() { # html png width height
  "$browser" --headless --no-sandbox --disable-gpu --disable-background-networking \
    --disable-component-update --no-first-run --disable-sync --hide-scrollbars \
    --screenshot="$2" --window-size="$3,$4" "file://$1" 2>/dev/null
  echo "wrote $2 (${3}×${4})"
}
shoot "$work/plain/final_report.html" "$PWD/$out/report-desktop.png" 1280 3400
shoot "$work/plain/final_report.html" "$PWD/$out/report-phone.png" 390 6200
shoot "$work/measured/final_report.html" "$PWD/$out/report-measured-desktop.png" 1280 3800
shoot "$work/real/report/efficiency/final_report.html" "$PWD/$out/report-audit-this-machine-desktop.png" 1280 3600
