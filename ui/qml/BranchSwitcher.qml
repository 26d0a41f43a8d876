import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import Hearth.Ui

// "< 2/3 >": which version of a message is shown, and arrows to switch.
RowLayout {
    id: switcher
    property int index: 1
    property int count: 1
    signal previous()
    signal next()
    spacing: 0
    Accessible.role: Accessible.Grouping
    Accessible.name: qsTr("Version %1 of %2").arg(index).arg(count)

    IconButton {
        iconName: "chevron-left"
        tip: qsTr("Previous version")
        enabled: switcher.enabled && switcher.index > 1
        onClicked: switcher.previous()
    }
    Label {
        text: qsTr("%1/%2").arg(switcher.index).arg(switcher.count)
        color: Theme.textMuted
        font.pointSize: Theme.fontSize * 0.9
        Accessible.ignored: true
    }
    IconButton {
        iconName: "chevron-right"
        tip: qsTr("Next version")
        enabled: switcher.enabled && switcher.index < switcher.count
        onClicked: switcher.next()
    }
}
