import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import Hearth.Ui

// Renders a message's segments: prose through Qt's Markdown support (lists,
// tables, emphasis, links), fenced code through CodeBlock with a copy button.
ColumnLayout {
    id: root
    property var segments: []
    property ChatController chat
    spacing: 8

    // Links in a reply come from the model: only http, https and mailto are
    // opened, and only after the user saw the full URL (LinkOpener decides;
    // the dialog asks or says why a link is refused).
    function askToOpen(link) {
        const verdict = linkOpener.check(link)
        linkDialogLoader.active = true
        const dialog = linkDialogLoader.item
        dialog.allowed = verdict.allowed
        dialog.url = verdict.url
        dialog.reason = verdict.reason
        dialog.open()
    }

    LinkOpener {
        id: linkOpener
    }

    // Created on the first click: most messages never need it.
    Loader {
        id: linkDialogLoader
        active: false
        sourceComponent: Dialog {
            id: linkDialog
            property bool allowed: false
            property string url: ""
            property string reason: ""
            objectName: "linkDialog"
            parent: Overlay.overlay
            anchors.centerIn: parent
            width: Math.min(520, parent ? parent.width - 40 : 520)
            modal: true
            title: allowed ? qsTr("Open this link?") : qsTr("Link not opened")
            standardButtons: allowed ? (Dialog.Open | Dialog.Cancel) : Dialog.Ok
            onAccepted: if (allowed) linkOpener.open(url)
            contentItem: ColumnLayout {
                spacing: 8
                Label {
                    Layout.fillWidth: true
                    visible: !linkDialog.allowed
                    text: linkDialog.reason
                    wrapMode: Text.Wrap
                }
                TextArea {
                    objectName: "linkDialogUrl"
                    Layout.fillWidth: true
                    text: linkDialog.url
                    readOnly: true
                    selectByMouse: true
                    wrapMode: TextEdit.WrapAnywhere
                    textFormat: TextEdit.PlainText
                }
            }
        }
    }

    // An integer model: while a reply streams, the segments change ~30 times
    // a second, and only a change in their number creates or destroys items;
    // the existing ones just receive their new text.
    Repeater {
        model: root.segments.length
        delegate: Loader {
            required property int index
            readonly property var segment: root.segments[index] || ({ kind: "prose", text: "", language: "" })
            Layout.fillWidth: true
            sourceComponent: segment.kind === "code" ? codeComponent : proseComponent
        }
    }

    Component {
        id: proseComponent
        TextEdit {
            text: segment.html
            textFormat: TextEdit.RichText
            readOnly: true
            selectByMouse: true
            selectByKeyboard: true
            wrapMode: TextEdit.Wrap
            color: Theme.text
            selectionColor: Theme.accent
            selectedTextColor: Theme.accentText
            font.pointSize: Theme.fontSize
            activeFocusOnTab: false
            onLinkActivated: link => root.askToOpen(link)
            HoverHandler {
                enabled: parent.hoveredLink.length > 0
                cursorShape: Qt.PointingHandCursor
            }
        }
    }

    Component {
        id: codeComponent
        CodeBlock {
            code: segment.text
            language: segment.language
            onCopyRequested: text => root.chat ? root.chat.copyText(text) : undefined
        }
    }
}
