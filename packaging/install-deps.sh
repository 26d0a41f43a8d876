#!/usr/bin/env bash
# Installs every Debian 12 package that building, running and testing Hearth needs.
# Idempotent: packages already present are left alone and nothing is fetched.
set -euo pipefail

packages=(
  # toolchain
  build-essential cmake ninja-build pkg-config git
  clang libclang-rt-14-dev
  # Qt 6 (GUI, QML, tests)
  qt6-base-dev qt6-base-dev-tools qt6-declarative-dev qt6-declarative-dev-tools qt6-svg-dev
  qml6-module-qtquick qml6-module-qtquick-controls qml6-module-qtquick-layouts
  qml6-module-qtquick-window qml6-module-qtquick-templates qml6-module-qtqml
  qml6-module-qtqml-workerscript qml6-module-qtqml-models qml6-module-qttest
  qml6-module-qtquick-dialogs qml6-module-qt-labs-settings qml6-module-qtcore
  qml6-module-qt-labs-folderlistmodel qml6-module-qtquick-shapes
  # Compare levels' chart: Qt Charts (C++ and the QML ChartView); Debian 12's
  # Qt 6.4 has no Qt Graphs
  qt6-charts-dev qml6-module-qtcharts
  # Vulkan: headers, loader, shader compiler, software device for tests
  libvulkan-dev glslc glslang-tools spirv-tools mesa-vulkan-drivers vulkan-tools
  # libraries
  libspdlog-dev libfmt-dev libsqlite3-dev sqlite3 libgtest-dev libgmock-dev libbenchmark-dev
  libpcre2-dev libcpuinfo-dev libxxhash-dev nlohmann-json3-dev libssl-dev
  # the local API server's HTTP; node and npm run the official OpenAI SDK in its tests
  libcpp-httplib-dev nodejs
  # remote backends: API keys in the desktop's secret store (QtKeychain), and a real
  # Secret Service for its tests (gnome-keyring in a private D-Bus session)
  qtkeychain-qt6-dev gnome-keyring dbus-bin dbus-daemon libsecret-tools
  # documents: PDF text through Poppler's Qt 6 binding
  libpoppler-qt6-dev
  # documents: DOCX is a zip archive of XML parts (libzip reads the archive)
  libzip-dev
  # headless display for screenshots, image tools for test artefacts
  xvfb xauth imagemagick
  # packaging/gpu-check.sh writes its JSON lines (and its CI-mode test) with python3
  python3
  # ARM builds of the engine's CPU kernels (cmake --preset cross-aarch64,
  # docs/cross.md): the aarch64 cross compiler, and qemu-user to run the tests
  g++-aarch64-linux-gnu qemu-user
)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

# The server tests run the official OpenAI SDK (npm 'openai', pinned by the
# lockfile in tests/app/server/node) with node.
install_node_modules() {
  local dir
  dir="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/tests/app/server/node"
  if [ -d "$dir/node_modules/openai" ]; then return; fi
  if ! command -v npm >/dev/null; then
    $SUDO apt-get install -y -qq --no-install-recommends npm
  fi
  echo "install-deps: installing the OpenAI SDK for the server tests into $dir"
  npm ci --prefix "$dir" --no-audit --no-fund --omit=peer
}

SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi

if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#packages[@]} packages present"
  install_node_modules
  exit 0
fi

echo "install-deps: installing ${#missing[@]} packages: ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
install_node_modules
