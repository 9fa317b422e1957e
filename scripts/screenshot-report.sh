#!/usr/bin/env bash
# Renders final_report.html from the fixture project with the real CLI and screenshots it in
# headless Chromium at desktop and phone widths, to check the page by eye.
#
#   apt-get install -y chromium        # Debian package; no network needed afterwards
#   scripts/screenshot-report.sh [OUT_DIR]    # default docs/screenshots
#
# Three reports are rendered: the fixture as steps 1–2 leave it, the same with the fixture
# ranking of tests/fixtures/report-strategies/ (test data, not measurements), and a real
# `audit --dry-run` of the fixture code on this machine. The before/after chart appears only
# with a step 4 outcome; its rendering is covered by the snapshot tests.
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
# 2. With a fixture ranking of strategies.
mkdir -p "$work/ranked-in"
cp tests/fixtures/report/theoretical_limits.yaml tests/fixtures/report/analysis.json "$work/ranked-in/"
cp tests/fixtures/report-strategies/strategies.json "$work/ranked-in/"
"$bin" --quiet --output-dir "$work/ranked" report --from "$work/ranked-in" --source-root tests/fixtures/report

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
shoot "$work/ranked/final_report.html" "$PWD/$out/report-strategies-desktop.png" 1280 3800
shoot "$work/real/report/efficiency/final_report.html" "$PWD/$out/report-audit-this-machine-desktop.png" 1280 3600
