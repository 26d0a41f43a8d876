import QtQuick
import QtQuick.Controls
import Hearth.Ui

// A small coloured label saying where a variant runs: GPU, partial offload,
// CPU only, or does not fit.
Rectangle {
    id: badge
    property string fit: "no"
    property int gpuLayers: 0
    property int nLayer: 0

    readonly property color tone: fit === "gpu" ? Theme.success
                                 : fit === "partial" ? Theme.weights
                                 : fit === "cpu" ? Theme.textMuted : Theme.danger
    implicitWidth: label.implicitWidth + 14
    implicitHeight: label.implicitHeight + 6
    radius: height / 2
    color: "transparent"
    border.color: tone
    border.width: 1

    Label {
        id: label
        anchors.centerIn: parent
        color: badge.tone
        font.pointSize: Theme.fontSize - 1
        text: badge.fit === "gpu" ? qsTr("Fits on GPU")
            : badge.fit === "partial" ? qsTr("Partial offload: %1/%2 layers").arg(badge.gpuLayers).arg(badge.nLayer)
            : badge.fit === "cpu" ? qsTr("CPU only")
            : qsTr("Does not fit")
    }
    Accessible.role: Accessible.StaticText
    Accessible.name: label.text
}
