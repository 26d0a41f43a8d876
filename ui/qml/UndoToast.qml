import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import Hearth.Ui

// "Deleted ‘title’ — Undo", shown while a delete can still be taken back.
Rectangle {
    id: toast
    required property ChatController chat
    visible: chat.pendingDeleteTitle.length > 0
    implicitWidth: row.implicitWidth + 24
    implicitHeight: row.implicitHeight + 12
    radius: Theme.radius
    color: Theme.dark ? "#ece5dc" : "#2a231d"
    Accessible.role: Accessible.AlertMessage
    Accessible.name: label.text

    RowLayout {
        id: row
        anchors.centerIn: parent
        spacing: 12
        Label {
            id: label
            text: qsTr("Deleted “%1”").arg(toast.chat.pendingDeleteTitle)
            color: Theme.dark ? "#2a231d" : "#ece5dc"
            elide: Text.ElideRight
            Layout.maximumWidth: 360
        }
        Button {
            text: qsTr("Undo")
            flat: true
            Accessible.name: qsTr("Undo delete")
            onClicked: toast.chat.undoDelete()
            contentItem: Label {
                text: parent.text
                color: Theme.accent
                font.weight: Font.DemiBold
                horizontalAlignment: Text.AlignHCenter
            }
        }
    }
}
