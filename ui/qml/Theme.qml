pragma Singleton
import QtQuick

// Colours and metrics of Hearth's look, for a light and a dark variant.
// Warm neutrals with an ember accent, echoing the app icon.
QtObject {
    property bool dark: false
    // Base point size; follows the font size setting.
    property real fontSize: 11

    readonly property color window: dark ? "#1b1815" : "#fbf9f6"
    readonly property color sidebar: dark ? "#161310" : "#f3eee7"
    readonly property color surface: dark ? "#25211d" : "#ffffff"
    readonly property color surfaceAlt: dark ? "#2e2924" : "#f6f1ea"
    readonly property color userBubble: dark ? "#3a2b1f" : "#fbe7d3"
    readonly property color codeBackground: dark ? "#12100e" : "#f4f1ec"
    readonly property color border: dark ? "#3a342e" : "#e4ddd3"
    readonly property color text: dark ? "#ece5dc" : "#2a231d"
    readonly property color textMuted: dark ? "#a39a8f" : "#7a6f64"
    readonly property color accent: dark ? "#f08a24" : "#d9661f"
    readonly property color accentText: "#ffffff"
    readonly property color accentSoft: dark ? "#4a3020" : "#fde3cc"
    readonly property color selection: dark ? "#3b2f26" : "#eadfd2"
    readonly property color hover: dark ? "#26211c" : "#ebe4da"
    readonly property color danger: dark ? "#ff7a6b" : "#c0392b"
    readonly property color dangerSoft: dark ? "#4a2320" : "#fbe3df"
    readonly property color success: dark ? "#7bc47f" : "#2e7d32"
    readonly property color weights: dark ? "#6c8ebf" : "#4f77b0"
    readonly property color kvCache: dark ? "#f08a24" : "#d9661f"
    readonly property color scratch: dark ? "#9b8cc4" : "#8a74c0"
    // Document sources in the context gauge.
    readonly property color sources: dark ? "#d9a441" : "#b07d16"

    readonly property int radius: 10
    readonly property int smallRadius: 6
    readonly property int spacing: 12
    readonly property int contentMaxWidth: 820
    readonly property string monoFamily: "DejaVu Sans Mono"
}
