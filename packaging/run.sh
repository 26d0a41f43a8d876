#!/usr/bin/env bash
# Installs what is missing, configures, builds and starts the Hearth desktop
# app with the bundled demo model. Extra arguments go to the app.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

bash packaging/install-deps.sh
cmake --preset ci
cmake --build --preset ci -j "$(nproc)" --target hearth hearth-cli

if [ -z "${DISPLAY:-}" ] && [ -z "${WAYLAND_DISPLAY:-}" ] && [ -z "${QT_QPA_PLATFORM:-}" ]; then
  echo "run.sh: no display found (DISPLAY and WAYLAND_DISPLAY are unset)." >&2
  echo "        Run this from a desktop session, or try: xvfb-run -a packaging/run.sh" >&2
  exit 3
fi
exec build/ci/app/hearth --model "$root/resources/models/stories260K.gguf" "$@"
