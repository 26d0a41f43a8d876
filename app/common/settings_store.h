// The one place that maps Settings to QSettings keys and back.
#pragma once

#include <hearth/settings/settings.h>

class QSettings;

namespace hearth::app {

// Reads every field; missing or malformed values fall back to the defaults and
// everything is clamped to its valid range.
settings::Settings load_settings(const QSettings& store);

// Writes every field (and syncs), so the file always holds a complete set.
void save_settings(QSettings& store, const settings::Settings& settings);

}  // namespace hearth::app
