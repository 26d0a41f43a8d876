#!/usr/bin/env bash
# Installs what is missing, configures, builds and runs Hearth's whole test
# suite; ends with ctest's summary. Usage: packaging/test.sh [extra ctest args]
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
