import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import Hearth.Ui

// One conversation in the sidebar: click or Enter opens it, F2 renames,
// Delete deletes (with undo), the menu button and right click offer the rest.
ItemDelegate {
    id: row
    required property ChatController chat
    required property var conversationId
    required property string title
    required property bool pinned
    required property bool archived
    property bool current: false
    property bool renaming: false
    signal activated()

    function startRename() { renaming = true; renameField.text = title; renameField.forceActiveFocus(); renameField.selectAll() }

    highlighted: current
    Accessible.name: pinned ? qsTr("%1, pinned").arg(title) : title
    Accessible.description: qsTr("Conversation. Press F2 to rename, Delete to delete.")
    onClicked: activated()
    Keys.onReturnPressed: activated()
    Keys.onEnterPressed: activated()
    Keys.onPressed: event => {
        if (event.key === Qt.Key_F2) { startRename(); event.accepted = true }
        else if (event.key === Qt.Key_Delete) { chat.deleteConversation(conversationId); event.accepted = true }
        else if (event.key === Qt.Key_Menu) { menu.popup(); event.accepted = true }
    }
    topPadding: 8
    bottomPadding: 8
    leftPadding: 10
    rightPadding: 4

    background: Rectangle {
        radius: Theme.smallRadius
        color: row.current ? Theme.selection : (row.hovered ? Theme.hover : "transparent")
        border.width: row.visualFocus || (row.ListView.isCurrentItem && row.ListView.view.activeFocus) ? 2 : 0
        border.color: Theme.accent
    }

    contentItem: RowLayout {
        spacing: 6
        Image {
            visible: row.pinned
            source: Qt.resolvedUrl("../icons/pin.svg")
            sourceSize: Qt.size(14, 14)
            opacity: 0.55
            Accessible.ignored: true
        }
        Label {
            visible: !row.renaming
            text: row.title
            elide: Text.ElideRight
            color: Theme.text
            font.weight: row.current ? Font.DemiBold : Font.Normal
            Layout.fillWidth: true
        }
        TextField {
            id: renameField
            visible: row.renaming
            Layout.fillWidth: true
            Accessible.name: qsTr("New title")
            onAccepted: { row.chat.renameConversation(row.conversationId, text); row.renaming = false }
            Keys.onEscapePressed: row.renaming = false
            onActiveFocusChanged: if (!activeFocus) row.renaming = false
        }
        IconButton {
            iconName: "more"
            tip: qsTr("More actions for %1").arg(row.title)
            opacity: row.hovered || row.current || activeFocus ? 1 : 0
            onClicked: menu.popup(this, 0, height)
        }
    }

    TapHandler {
        acceptedButtons: Qt.RightButton
        onTapped: menu.popup()
    }

    Menu {
        id: menu
        MenuItem {
            text: qsTr("Rename")
            onTriggered: row.startRename()
        }
        MenuItem {
            text: row.pinned ? qsTr("Unpin") : qsTr("Pin")
            onTriggered: row.chat.setPinned(row.conversationId, !row.pinned)
        }
        MenuItem {
            text: row.archived ? qsTr("Unarchive") : qsTr("Archive")
            onTriggered: row.chat.setArchived(row.conversationId, !row.archived)
        }
        MenuSeparator {}
        MenuItem {
            text: qsTr("Delete")
            onTriggered: row.chat.deleteConversation(row.conversationId)
        }
    }
}
