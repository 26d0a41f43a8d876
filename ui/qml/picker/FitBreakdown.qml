import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import Hearth.Ui

// The memory estimate of one variant as a stacked bar (weights, KV cache,
// scratch) against the budget it is placed in, with the numbers.
ColumnLayout {
    id: root
    property var variant: ({})
    property var picker: null
    readonly property real total: variant.totalBytes || 0
    readonly property real budget: {
        if (!picker) return total;
        const ram = picker.ramAvailableBytes, vram = picker.vramFreeBytes;
        return Math.max(total, variant.fits === "gpu" ? vram : ram);
    }
    spacing: 4

    Rectangle {
        Layout.fillWidth: true
        implicitHeight: 8
        radius: 4
        color: Theme.surfaceAlt
        Row {
            anchors.fill: parent
            Rectangle {
                width: root.budget > 0 ? parent.width * (root.variant.weightsBytes || 0) / root.budget : 0
                height: parent.height; color: Theme.weights; radius: 4
            }
            Rectangle {
                width: root.budget > 0 ? parent.width * (root.variant.kvBytes || 0) / root.budget : 0
                height: parent.height; color: Theme.kvCache
            }
            Rectangle {
                width: root.budget > 0 ? parent.width * (root.variant.scratchBytes || 0) / root.budget : 0
                height: parent.height; color: Theme.scratch
            }
        }
    }
    Label {
        Layout.fillWidth: true
        wrapMode: Text.WordWrap
        color: Theme.textMuted
        font.pointSize: Theme.fontSize - 1
        // An estimated file size makes the weights and the total estimates too.
        readonly property string approx: root.variant && root.variant.sizeIsEstimate ? "≈ " : ""
        text: root.picker ? qsTr("Weights %1 + KV cache %2 + scratch %3 = %4")
                              .arg(approx + root.picker.formatBytes(root.variant.weightsBytes))
                              .arg(root.picker.formatBytes(root.variant.kvBytes))
                              .arg(root.picker.formatBytes(root.variant.scratchBytes))
                              .arg(approx + root.picker.formatBytes(root.variant.totalBytes))
                          : ""
    }
}
