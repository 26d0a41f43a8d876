import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import Hearth.Ui

// One message. User messages sit in a bubble on the right and can be edited
// (which creates a branch); replies are full-width Markdown with copy,
// regenerate, the branch switcher and their speed figures. A reasoning
// model's thinking sits above its answer in a block that folds away.
FocusScope {
    id: message
    required property ChatController chat
    required property var messageId
    required property string role
    required property string text
    required property var segments
    required property string state
    required property int branchIndex
    required property int branchCount
    required property double ttftMs
    required property double tokensPerSecond
    required property string reasoning
    required property double reasoningMs
    // A reply: the document passages its question was given (see MessageListModel).
    required property var sources
    required property string origin
    // The loaded model is the Auto pair: replies offer "Ask the large model".
    property bool autoModel: false
    required property int index
    property bool canAct: true
    property bool editing: false
    readonly property bool isUser: role === "user"
    readonly property bool streaming: state === "streaming"

    implicitHeight: column.implicitHeight
    activeFocusOnTab: true
    Accessible.role: Accessible.StaticText
    Accessible.name: (isUser ? qsTr("You said: %1") : qsTr("Hearth replied: %1")).arg(text)

    HoverHandler { id: hover }

    ColumnLayout {
        id: column
        width: parent.width
        spacing: 6

        RowLayout {
            visible: !message.isUser
            spacing: 8
            Image {
                source: Qt.resolvedUrl("../resources/icons/hearth.svg")
                sourceSize: Qt.size(22, 22)
                Accessible.ignored: true
            }
            Label {
                text: qsTr("Hearth")
                font.weight: Font.DemiBold
                color: Theme.text
            }
            BusyIndicator {
                visible: message.streaming
                running: visible
                Layout.preferredWidth: 20
                Layout.preferredHeight: 20
                Accessible.name: qsTr("Writing")
            }
        }

        // The user's bubble (or its editor).
        Rectangle {
            visible: message.isUser
            Layout.alignment: Qt.AlignRight
            Layout.maximumWidth: message.width * 0.8
            Layout.preferredWidth: message.editing ? message.width * 0.8
                                                   : Math.min(userText.implicitWidth + 32, message.width * 0.8)
            implicitHeight: (message.editing ? editor.implicitHeight : userText.implicitHeight) + 20
            radius: Theme.radius + 4
            color: Theme.userBubble

            MarkdownView {
                id: userText
                visible: !message.editing
                anchors.fill: parent
                anchors.margins: 10
                anchors.leftMargin: 16
                anchors.rightMargin: 16
                segments: message.segments
                chat: message.chat
            }

            ColumnLayout {
                id: editor
                visible: message.editing
                anchors.fill: parent
                anchors.margins: 10
                TextArea {
                    id: editArea
                    Layout.fillWidth: true
                    wrapMode: TextEdit.Wrap
                    Accessible.name: qsTr("Edit your message")
                    background: null
                    Keys.onPressed: event => {
                        if ((event.key === Qt.Key_Return || event.key === Qt.Key_Enter)
                                && !(event.modifiers & Qt.ShiftModifier)) {
                            saveButton.clicked(); event.accepted = true
                        } else if (event.key === Qt.Key_Escape) {
                            message.editing = false; event.accepted = true
                        }
                    }
                }
                RowLayout {
                    Layout.alignment: Qt.AlignRight
                    Button {
                        text: qsTr("Cancel")
                        onClicked: message.editing = false
                    }
                    Button {
                        id: saveButton
                        text: qsTr("Send as new branch")
                        highlighted: true
                        enabled: message.canAct && editArea.text.trim().length > 0
                        onClicked: {
                            message.chat.editMessage(message.messageId, editArea.text)
                            message.editing = false
                        }
                    }
                }
            }
        }

        ThinkingBlock {
            visible: !message.isUser && message.reasoning.length > 0
            Layout.fillWidth: true
            reasoning: message.reasoning
            reasoningMs: message.reasoningMs
            thinking: message.streaming && message.text.length === 0
        }

        MarkdownView {
            objectName: "answerText"
            visible: !message.isUser && (message.text.length > 0)
            Layout.fillWidth: true
            segments: message.segments
            chat: message.chat
        }

        SourcesBlock {
            visible: !message.isUser && message.sources.length > 0
            Layout.fillWidth: true
            sources: message.sources
        }

        Label {
            visible: message.state === "error" || message.state === "interrupted"
            text: message.state === "error" ? qsTr("This reply failed.") : qsTr("This reply was interrupted.")
            color: Theme.danger
        }

        // Actions; always shown on the newest message, on hover or focus for the others.
        RowLayout {
            id: actions
            Layout.alignment: message.isUser ? Qt.AlignRight : Qt.AlignLeft
            spacing: 2
            opacity: message.editing || message.streaming ? 0
                     : (hover.hovered || message.activeFocus
                        || message.index === message.ListView.view.count - 1 ? 1 : 0.0)
            visible: !message.editing
            Behavior on opacity { NumberAnimation { duration: 120 } }

            BranchSwitcher {
                visible: message.branchCount > 1
                index: message.branchIndex
                count: message.branchCount
                enabled: message.canAct
                onPrevious: message.chat.switchBranch(message.messageId, -1)
                onNext: message.chat.switchBranch(message.messageId, 1)
            }
            IconButton {
                iconName: "copy"
                tip: qsTr("Copy message")
                onClicked: message.chat.copyText(message.text)
            }
            IconButton {
                visible: message.isUser
                iconName: "edit"
                tip: qsTr("Edit message")
                enabled: message.canAct
                onClicked: { editArea.text = message.text; message.editing = true; editArea.forceActiveFocus() }
            }
            IconButton {
                visible: !message.isUser
                iconName: "refresh"
                tip: qsTr("Regenerate reply")
                enabled: message.canAct
                onClicked: message.chat.regenerate(message.messageId)
            }
            IconButton {
                objectName: "askLargeModel"
                visible: !message.isUser && message.autoModel
                iconName: "refresh"
                tip: qsTr("Ask the large model (a new branch)")
                enabled: message.canAct
                onClicked: message.chat.askLargeModel(message.messageId)
            }
            Label {
                visible: !message.isUser && message.tokensPerSecond > 0
                text: qsTr("%1 tok/s · first token %2 ms")
                      .arg(message.tokensPerSecond.toFixed(1)).arg(Math.round(message.ttftMs))
                      + (message.origin !== "" ? " · " + message.origin : "")
                color: Theme.textMuted
                font.pointSize: Theme.fontSize * 0.85
                leftPadding: 6
            }
        }
    }
}
