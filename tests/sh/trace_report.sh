# ranks: 4
# SPDX-License-Identifier: MIT
# MPLUA_TRACE records a whole batch job; scripts/trace_report.lua turns the
# file into a page a real browser renders: headless Chromium (scripts/setup.sh
# installs Debian's `chromium`; without it this test fails) lays out one lane
# per rank and one arrow per message of a ring (N ranks, 3 rounds: 3N arrows),
# and its screenshot is not blank.
set -eu
N=${1:?usage: $0 RANKS}
src=$(cd "$(dirname "$0")/../.." && pwd)
. "$(dirname "$0")/lib/common.bash"

cat >ring.lua <<'LUA'
mp.exec(function()
  local c = mp.world
  for r = 1, 3 do
    c:send((c.rank + 1) % c.size, r)
    assert(c:recv((c.rank - 1) % c.size) == r)
  end
end)
print("ring done")
LUA
MPLUA_TRACE=run.json run -b ring.lua >out 2>err || { echo "FAIL: traced ring" >&2; cat err >&2; exit 1; }
grep -q "ring done" out
"$MPLUA" --nompi "$src/scripts/trace_report.lua" run.json -o run.html >rep 2>&1 ||
  { echo "FAIL: trace_report" >&2; cat rep >&2; exit 1; }
for f in run.html run.timeline.svg run.matrix.svg; do
  [ -s "$f" ] || { echo "FAIL: $f not written" >&2; exit 1; }
done
grep -q "passes the checker" run.html || { echo "FAIL: the trace fails the checker" >&2; exit 1; }
lanes=$(grep -c '<g class="lane"' run.timeline.svg)
arrows=$(grep -c '<line class="arrow" data-kind="p2p"' run.timeline.svg)
[ "$lanes" = "$N" ] || { echo "FAIL: $lanes lanes in the SVG, want $N" >&2; exit 1; }
[ "$arrows" = $((3 * N)) ] || { echo "FAIL: $arrows arrows in the SVG, want $((3 * N))" >&2; exit 1; }
if grep -q '<script\|src="http\|href="http' run.timeline.svg run.matrix.svg; then
  echo "FAIL: the SVGs are not self-contained" >&2; exit 1
fi
grep -q 'src="http\|<link ' run.html && { echo "FAIL: the page uses the network" >&2; exit 1; }

# the browser: it must exist (setup.sh installs it), run as root in CI
browser=$(command -v chromium || command -v chromium-browser || true)
[ -n "$browser" ] || { echo "FAIL: chromium is not installed (scripts/setup.sh installs it)" >&2; exit 1; }
chrome() {
  timeout 240 "$browser" --headless --no-sandbox --disable-gpu --disable-dev-shm-usage \
    --no-first-run --user-data-dir="$tmp/profile" --window-size=1300,1000 "$@" 2>>chrome.err
}
chrome --dump-dom "file://$tmp/run.html" >dom.html ||
  { echo "FAIL: chromium --dump-dom" >&2; tail -20 chrome.err >&2; exit 1; }
body=$(grep -o '<body[^>]*>' dom.html || true)
want="<body data-lanes=\"$N\" data-arrows=\"$((3 * N))\" data-laid-out=\"yes\">"
[ "$body" = "$want" ] || { echo "FAIL: the browser laid out '$body', want '$want'" >&2; exit 1; }
chrome --screenshot="$tmp/shot.png" "file://$tmp/run.html" >/dev/null ||
  { echo "FAIL: chromium --screenshot" >&2; tail -20 chrome.err >&2; exit 1; }
# a blank 1300x1000 page is a PNG of about 6 KB; this page's lanes, spans,
# arrows and heat maps make it several times larger
size=$(wc -c <shot.png)
[ "$(head -c 8 shot.png | od -An -c | tr -d ' ')" = '211PNG\r\n032\n' ] ||
  { echo "FAIL: the screenshot is not a PNG" >&2; exit 1; }
[ "$size" -gt 20000 ] || { echo "FAIL: the screenshot looks blank ($size bytes)" >&2; exit 1; }
echo "trace_report ok ($N ranks, $arrows arrows, screenshot $size bytes)"
