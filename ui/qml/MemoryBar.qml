import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import Hearth.Ui

// Weights, KV cache and scratch as stacked segments against the memory budget;
// red with an explanation when the total does not fit.
ColumnLayout {
    id: bar
    required property SettingsController settings
    readonly property real scale: Math.max(settings.totalBytes, settings.budgetBytes, 1)
    spacing: 6
    Accessible.role: Accessible.Chart
    Accessible.name: qsTr("Memory needed: weights %1, KV cache %2, scratch %3; budget %4")
                     .arg(settings.formatBytes(settings.weightsBytes))
                     .arg(settings.formatBytes(settings.kvBytes))
                     .arg(settings.formatBytes(settings.scratchBytes))
                     .arg(settings.formatBytes(settings.budgetBytes))

    Rectangle {
        id: track
        Layout.fillWidth: true
        implicitHeight: 18
        radius: 5
        color: Theme.surfaceAlt
        border.width: bar.settings.overLimit ? 2 : 1
        border.color: bar.settings.overLimit ? Theme.danger : Theme.border
        clip: true

        Row {
            x: 2
            y: 2
            height: parent.height - 4
            readonly property real usable: track.width - 4
            Rectangle {
                width: parent.usable * bar.settings.weightsBytes / bar.scale
                height: parent.height
                color: Theme.weights
            }
            Rectangle {
                width: parent.usable * bar.settings.kvBytes / bar.scale
                height: parent.height
                color: bar.settings.overLimit ? Theme.danger : Theme.kvCache
            }
            Rectangle {
                width: parent.usable * bar.settings.scratchBytes / bar.scale
                height: parent.height
                color: Theme.scratch
            }
        }
        // The budget line.
        Rectangle {
            x: 2 + (track.width - 4) * bar.settings.budgetBytes / bar.scale - 1
            width: 2
            height: parent.height
            color: Theme.text
            visible: bar.settings.hasModelShape
        }
    }

    Flow {
        Layout.fillWidth: true
        spacing: 16
        Repeater {
            model: [
                { name: qsTr("Weights"), bytes: bar.settings.weightsBytes, color: Theme.weights },
                { name: qsTr("KV cache"), bytes: bar.settings.kvBytes, color: Theme.kvCache },
                { name: qsTr("Scratch"), bytes: bar.settings.scratchBytes, color: Theme.scratch },
                { name: qsTr("Free RAM"), bytes: bar.settings.availableBytes, color: "transparent" }
            ]
            delegate: Row {
                required property var modelData
                spacing: 6
                Rectangle {
                    width: 10
                    height: 10
                    radius: 2
                    anchors.verticalCenter: parent.verticalCenter
                    color: modelData.color
                    border.color: Theme.border
                }
                Label {
                    text: qsTr("%1 %2").arg(modelData.name).arg(bar.settings.formatBytes(modelData.bytes))
                    color: Theme.textMuted
                    font.pointSize: Theme.fontSize * 0.9
                }
            }
        }
    }
    Label {
        Layout.fillWidth: true
        text: bar.settings.memoryExplanation
        wrapMode: Text.WordWrap
        color: bar.settings.overLimit ? Theme.danger : Theme.textMuted
        font.weight: bar.settings.overLimit ? Font.DemiBold : Font.Normal
    }
}
