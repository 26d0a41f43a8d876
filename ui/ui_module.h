// Where the QML module's root document lives inside the resources.
#pragma once

namespace hearth::ui {
inline constexpr const char* kMainQmlUrl = "qrc:/Hearth/Ui/qml/Main.qml";
}  // namespace hearth::ui
