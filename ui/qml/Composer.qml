import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import Hearth.Ui

// Where the user writes. Enter sends, Shift+Enter starts a new line. Without
// a model the field is disabled and says why.
Item {
    id: composer
    required property ChatController chat
    required property ModelController model
    signal loadDemoRequested()

    function focusInput() { input.forceActiveFocus() }
    function submit() {
        if (!chat.canSend || input.text.trim().length === 0)
            return
        chat.send(input.text)
        input.clear()
    }

    implicitHeight: column.implicitHeight + 24

    ColumnLayout {
        id: column
        anchors.left: parent.left
        anchors.right: parent.right
        anchors.bottom: parent.bottom
        anchors.margins: 24
        anchors.topMargin: 0
        anchors.bottomMargin: 12
        spacing: 6

        Rectangle {
            Layout.fillWidth: true
            implicitHeight: Math.min(Math.max(input.implicitHeight, 44), 220) + 12
            radius: Theme.radius + 4
            color: Theme.surface
            border.color: input.activeFocus ? Theme.accent : Theme.border
            border.width: input.activeFocus ? 2 : 1

            RowLayout {
                anchors.fill: parent
                anchors.margins: 6
                anchors.leftMargin: 12
                spacing: 6

                ScrollView {
                    Layout.fillWidth: true
                    Layout.fillHeight: true
                    TextArea {
                        id: input
                        enabled: composer.model.ready
                        wrapMode: TextEdit.Wrap
                        placeholderText: composer.model.ready ? qsTr("Message Hearth…") : composer.chat.composerHint
                        placeholderTextColor: Theme.textMuted
                        color: Theme.text
                        background: null
                        verticalAlignment: TextEdit.AlignVCenter
                        Accessible.name: qsTr("Message")
                        Accessible.description: composer.chat.composerHint
                        Keys.onPressed: event => {
                            if ((event.key === Qt.Key_Return || event.key === Qt.Key_Enter)
                                    && !(event.modifiers & Qt.ShiftModifier)) {
                                composer.submit()
                                event.accepted = true
                            }
                        }
                    }
                }

                RoundButton {
                    id: sendButton
                    readonly property bool stopping: composer.chat.generating
                    Layout.alignment: Qt.AlignBottom
                    implicitWidth: 38
                    implicitHeight: 38
                    enabled: stopping || (composer.chat.canSend && input.text.trim().length > 0)
                    icon.source: Qt.resolvedUrl("../icons/" + (stopping ? "stop" : "send") + ".svg")
                    icon.color: enabled ? Theme.accentText : Theme.textMuted
                    icon.width: 18
                    icon.height: 18
                    display: AbstractButton.IconOnly
                    Accessible.name: stopping ? qsTr("Stop reply") : qsTr("Send message")
                    ToolTip.visible: hovered
                    ToolTip.text: stopping ? qsTr("Stop (Esc)") : qsTr("Send (Enter)")
                    onClicked: stopping ? composer.chat.stop() : composer.submit()
                    background: Rectangle {
                        radius: width / 2
                        color: sendButton.enabled ? (sendButton.stopping ? Theme.text : Theme.accent) : Theme.surfaceAlt
                        border.width: sendButton.visualFocus ? 2 : 0
                        border.color: Theme.text
                    }
                }
            }
        }

        RowLayout {
            Layout.fillWidth: true
            visible: !composer.model.ready
            Label {
                Layout.fillWidth: true
                text: composer.chat.composerHint
                wrapMode: Text.WordWrap
                color: Theme.textMuted
                font.pointSize: Theme.fontSize * 0.9
            }
            Button {
                visible: composer.model.demoAvailable && !composer.model.loading
                text: qsTr("Load demo model")
                onClicked: composer.loadDemoRequested()
            }
        }
    }
}
