// Where the app finds its data: the per-user data directory and the bundled
// demo model (installed, next to the build, or in the source tree).
#pragma once

#include <QString>

namespace hearth::app {

// $XDG_DATA_HOME/hearth (~/.local/share/hearth).
QString default_data_dir();

// The demo model: <prefix>/share/hearth/models next to the executable when
// installed (relocatable), the configured install prefix, or the source tree
// during development. Empty when none exists.
QString find_demo_model();

}  // namespace hearth::app
