import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import Hearth.Ui

// A one-line message across the top of the content area; hidden when empty.
Rectangle {
    id: banner
    property alias text: label.text
    property string tone: "info"  // info, warning, danger
    property bool dismissable: true
    signal dismissed()

    Layout.fillWidth: true
    visible: text.length > 0
    implicitHeight: row.implicitHeight + 16
    color: tone === "danger" ? Theme.dangerSoft : (tone === "warning" ? Theme.accentSoft : Theme.surfaceAlt)
    Accessible.role: Accessible.AlertMessage
    Accessible.name: text

    RowLayout {
        id: row
        anchors.fill: parent
        anchors.leftMargin: 16
        anchors.rightMargin: 8
        Label {
            id: label
            Layout.fillWidth: true
            wrapMode: Text.WordWrap
            color: banner.tone === "danger" ? Theme.danger : Theme.text
        }
        IconButton {
            visible: banner.dismissable
            iconName: "close"
            tip: qsTr("Dismiss")
            onClicked: banner.dismissed()
        }
    }
}
