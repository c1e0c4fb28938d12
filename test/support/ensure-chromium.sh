#!/usr/bin/env bash
# Installs Debian's Chromium for the browser test when it is missing (idempotent; a no-op
# when /usr/bin/chromium exists). Never downloads a browser build of its own.
set -euo pipefail
if [ -x /usr/bin/chromium ]; then exit 0; fi
if ! command -v apt-get >/dev/null 2>&1; then
  echo "ensure-chromium: /usr/bin/chromium is missing and apt-get is not available; install Chromium yourself" >&2
  exit 1
fi
SUDO=""
if [ "$(id -u)" != "0" ]; then SUDO="sudo"; fi
echo "ensure-chromium: installing Debian's chromium package…" >&2
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq chromium >/dev/null
test -x /usr/bin/chromium
