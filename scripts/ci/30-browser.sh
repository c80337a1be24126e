# The research loop's tools (research/, e2e/research_test.go): headless
# Chromium for the browser fetcher, poppler-utils (pdftotext) for PDF text,
# ffmpeg for media → 16 kHz mono WAV, espeak-ng to speak the test audio.
# Tests that need them fail rather than skip when CI is set.
apt_install chromium ffmpeg espeak-ng poppler-utils fonts-liberation
export LETHE_TEST_CHROMIUM="$(command -v chromium)"
# Smoke test with the fetcher's flags: a browser that cannot start here
# fails this step with one clear message instead of failing every test.
dom=$(timeout 60 "$LETHE_TEST_CHROMIUM" --headless --no-sandbox --disable-gpu --disable-background-networking \
  --disable-component-update --disable-sync --no-first-run --dump-dom 'data:text/html,<p>lethe-ok</p>' 2>/dev/null)
[[ "$dom" == *lethe-ok* ]] || { echo "chromium does not start headless here" >&2; false; }
unset dom
