#!/usr/bin/env bash
# Installs Debian's chromium for the console's browser tests (tests/console,
# driven over the DevTools protocol by chromedp). Idempotent: does nothing
# when /usr/bin/chromium exists. Needs root (or sudo) and apt; the browser
# comes from the distribution's own archive, never downloaded by a test.
set -euo pipefail
if [ -x /usr/bin/chromium ]; then
  exit 0
fi
if ! command -v apt-get >/dev/null 2>&1; then
  echo "chromium.sh: no apt-get; install chromium by hand (the console tests skip without it unless CI is set)" >&2
  exit 0
fi
sudo=""
if [ "$(id -u)" != 0 ]; then
  sudo="sudo"
fi
$sudo apt-get update -qq >&2
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq chromium >&2
