// How the "Auto" model is named where a model file's path would be (the load
// request, the last model in the settings, a conversation's model). There is
// one Auto model, whose pair of models is in the settings; the name cannot be
// mistaken for a file path or a remote model ("remote:...").
#pragma once

#include <QString>

namespace hearth::ui {

inline constexpr const char* kAutoModelPath = "auto:small+large";

inline bool is_auto_model_path(const QString& path) { return path == QLatin1String(kAutoModelPath); }

}  // namespace hearth::ui
