import QtQuick
import QtQuick.Controls
import QtQuick.Dialogs
import QtQuick.Layouts
import Hearth.Ui

// Export (the open conversation or all, JSON or Markdown) and import (JSON, with a
// preview and a choice for conversations already stored). The work runs on the
// storage thread through the ArchiveController; this only asks for files.
IconButton {
    id: root
    required property ArchiveController archive
    required property ChatController chat

    iconName: "archive"
    tip: qsTr("Export and import")
    enabled: !archive.busy
    onClicked: menu.popup(root, 0, root.height)

    // What the save dialog is for: "json" or "markdown", and -1 for all conversations.
    property string exportFormat: "json"
    property var exportConversation: -1

    function startExport(format, conversation) {
        exportFormat = format
        exportConversation = conversation
        saveDialog.open()
    }

    Menu {
        id: menu
        MenuItem {
            text: qsTr("Export this conversation as JSON…")
            enabled: root.chat.currentConversationId >= 0
            onTriggered: root.startExport("json", root.chat.currentConversationId)
        }
        MenuItem {
            text: qsTr("Export this conversation as Markdown…")
            enabled: root.chat.currentConversationId >= 0
            onTriggered: root.startExport("markdown", root.chat.currentConversationId)
        }
        MenuSeparator {}
        MenuItem {
            text: qsTr("Export all conversations as JSON…")
            onTriggered: root.startExport("json", -1)
        }
        MenuItem {
            text: qsTr("Export all conversations as Markdown…")
            onTriggered: root.startExport("markdown", -1)
        }
        MenuSeparator {}
        MenuItem {
            text: qsTr("Import conversations from JSON…")
            onTriggered: openDialog.open()
        }
    }

    FileDialog {
        id: saveDialog
        fileMode: FileDialog.SaveFile
        title: qsTr("Export conversations")
        defaultSuffix: root.exportFormat === "json" ? "json" : "md"
        nameFilters: root.exportFormat === "json" ? [qsTr("Hearth JSON (*.json)")]
                                                  : [qsTr("Markdown (*.md)")]
        onAccepted: root.archive.exportTo(selectedFile, root.exportFormat, root.exportConversation)
    }

    FileDialog {
        id: openDialog
        fileMode: FileDialog.OpenFile
        title: qsTr("Import conversations")
        nameFilters: [qsTr("Hearth JSON (*.json)")]
        onAccepted: root.archive.previewImport(selectedFile)
    }

    Dialog {
        id: preview
        parent: Overlay.overlay
        anchors.centerIn: parent
        modal: true
        title: qsTr("Import conversations")
        visible: root.archive.previewReady
        standardButtons: Dialog.Cancel
        onRejected: root.archive.cancelImport()

        ColumnLayout {
            spacing: 10
            Label {
                text: qsTr("%1 conversation(s) with %2 message(s).")
                      .arg(root.archive.previewConversations).arg(root.archive.previewMessages)
                color: Theme.text
            }
            Label {
                visible: root.archive.previewExisting > 0
                text: qsTr("%1 of them are already in Hearth.").arg(root.archive.previewExisting)
                color: Theme.textMuted
            }
            RadioButton {
                id: skip
                visible: root.archive.previewExisting > 0
                checked: true
                text: qsTr("Skip the ones already here")
            }
            RadioButton {
                visible: root.archive.previewExisting > 0
                text: qsTr("Import them again as copies")
            }
            Button {
                text: qsTr("Import")
                highlighted: true
                onClicked: root.archive.importPreviewed(skip.checked ? "skip" : "copies")
            }
        }
    }
}
