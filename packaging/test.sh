#!/usr/bin/env bash
# Installs what is missing, configures, builds and runs Hearth's whole test
# suite, then the aarch64 cross tests; ends with ctest's summary.
# Usage: packaging/test.sh [extra ctest args for the main suite]
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

bash packaging/install-deps.sh

# Tests run headless: Qt's offscreen platform, and Mesa's software Vulkan
# device (lavapipe) so the Vulkan backend is exercised without a GPU.
export QT_QPA_PLATFORM=offscreen
lvp_icd=$(ls /usr/share/vulkan/icd.d/lvp_icd.*.json 2>/dev/null | head -n 1 || true)
if [ -n "$lvp_icd" ]; then
  export VK_ICD_FILENAMES="$lvp_icd"
  export VK_DRIVER_FILES="$lvp_icd"
fi

cmake --preset ci
cmake --build --preset ci -j "$(nproc)"
ctest --preset ci "$@"

# The aarch64 kernels: the engine's CPU parts cross-built and their tests
# (label cross) run under qemu-user (docs/cross.md). A cold build of this
# tree and its tests takes about 6 minutes on 2 cores.
cmake --preset cross-aarch64
cmake --build --preset cross-aarch64 -j "$(nproc)"
ctest --preset cross-aarch64 -L cross
