import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import Hearth.Ui

// Tokens in the context against the maximum, with a tick where turns were
// dropped or summarized; hovering a tick says what happened. The document
// sources of the last question show as their own segment.
RowLayout {
    id: gauge
    property int used: 0
    property int maximum: 0
    property var markers: []
    property int sources: 0
    readonly property real fraction: maximum > 0 ? Math.min(1, used / maximum) : 0
    spacing: 8
    Accessible.role: Accessible.ProgressBar
    Accessible.name: qsTr("Context: %1 of %2 tokens").arg(used).arg(maximum)

    Rectangle {
        id: track
        Layout.fillWidth: true
        implicitHeight: 8
        radius: 4
        color: Theme.border

        Rectangle {
            width: track.width * gauge.fraction
            height: parent.height
            radius: 4
            color: gauge.fraction > 0.9 ? Theme.danger : Theme.accent
        }
        // The sources' share, drawn at the end of the used part.
        Rectangle {
            objectName: "sourcesSegment"
            visible: gauge.sources > 0 && gauge.maximum > 0
            readonly property real share: gauge.maximum > 0 ? Math.min(gauge.fraction, gauge.sources / gauge.maximum) : 0
            x: track.width * (gauge.fraction - share)
            width: track.width * share
            height: parent.height
            radius: 4
            color: Theme.sources
            HoverHandler { id: sourcesHover }
            ToolTip.visible: sourcesHover.hovered
            ToolTip.text: qsTr("Document sources: about %1 tokens").arg(gauge.sources)
        }

        Repeater {
            model: gauge.markers
            delegate: Rectangle {
                required property var modelData
                x: track.width * modelData.position - width / 2
                y: -3
                width: 3
                height: track.height + 6
                radius: 1
                color: modelData.kind === "summarized" ? Theme.scratch : Theme.text
                Accessible.role: Accessible.Indicator
                Accessible.name: modelData.text
                HoverHandler { id: tickHover }
                ToolTip.visible: tickHover.hovered
                ToolTip.text: modelData.text
            }
        }
    }
    Label {
        text: qsTr("%1 / %2").arg(Number(gauge.used).toLocaleString(Qt.locale(), "f", 0))
                             .arg(Number(gauge.maximum).toLocaleString(Qt.locale(), "f", 0))
        color: Theme.textMuted
        font.pointSize: Theme.fontSize * 0.9
        Accessible.ignored: true
    }
}
