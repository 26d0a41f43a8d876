import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import Hearth.Ui

// The open conversation: messages (streaming Markdown, a reasoning model's
// thinking folded above each answer), the composer, the conversation's
// reasoning switch and overflow policy.
Item {
    id: view
    required property ChatController chat
    required property ModelController model
    property AutoModelController autoModel: null
    signal loadDemoRequested()

    function focusComposer() { composer.focusInput() }

    ColumnLayout {
        anchors.fill: parent
        spacing: 0

        ListView {
            id: messages
            Layout.fillWidth: true
            Layout.fillHeight: true
            clip: true
            model: view.chat.messages
            spacing: 18
            topMargin: 24
            bottomMargin: 24
            activeFocusOnTab: true
            keyNavigationEnabled: true
            boundsBehavior: Flickable.StopAtBounds
            Accessible.role: Accessible.List
            Accessible.name: qsTr("Messages")
            ScrollBar.vertical: ScrollBar {}
            // Follow a streaming reply only while the user is at the bottom.
            property bool pinnedToEnd: true
            onMovementEnded: pinnedToEnd = atYEnd
            onContentHeightChanged: if (pinnedToEnd) positionViewAtEnd()
            onCountChanged: { pinnedToEnd = true; positionViewAtEnd() }

            delegate: MessageDelegate {
                width: Math.min(messages.width - 48, Theme.contentMaxWidth)
                x: (messages.width - width) / 2
                chat: view.chat
                canAct: view.chat.canSend
                autoModel: view.autoModel !== null && view.autoModel.active
            }
        }

        ColumnLayout {
            visible: messages.count === 0
            Layout.alignment: Qt.AlignHCenter
            Layout.bottomMargin: 24
            spacing: 6
            Image {
                source: Qt.resolvedUrl("../resources/icons/hearth.svg")
                sourceSize: Qt.size(56, 56)
                Layout.alignment: Qt.AlignHCenter
                opacity: 0.9
                Accessible.ignored: true
            }
            Label {
                text: qsTr("What shall we talk about?")
                font.pointSize: Theme.fontSize * 1.5
                font.weight: Font.DemiBold
                color: Theme.text
                Layout.alignment: Qt.AlignHCenter
            }
            Label {
                text: view.model.ready ? qsTr("Everything stays on this computer.")
                                       : view.chat.composerHint
                color: Theme.textMuted
                Layout.alignment: Qt.AlignHCenter
            }
        }

        Composer {
            id: composer
            Layout.fillWidth: true
            Layout.maximumWidth: Theme.contentMaxWidth + 48
            Layout.alignment: Qt.AlignHCenter
            chat: view.chat
            model: view.model
            onLoadDemoRequested: view.loadDemoRequested()
        }

        // The open conversation's reasoning switch (when the model offers one) and
        // overflow policy, under the composer's right edge and so right above the
        // context gauge of the status line.
        RowLayout {
            Layout.alignment: Qt.AlignRight
            Layout.rightMargin: Math.max(24, (parent.width - Theme.contentMaxWidth - 48) / 2 + 24)
            Layout.bottomMargin: 4
            spacing: 16

            ReasoningControl {
                objectName: "reasoningControl"
                visible: view.model.reasoningChoices.length > 0
                choices: view.model.reasoningChoices
                choice: view.chat.conversationReasoning
                onChosen: value => view.chat.setConversationReasoning(value)
            }
            OverflowPolicyControl {
                policy: view.chat.conversationOverflow
                defaultPolicy: view.chat.defaultOverflow
                onChosen: value => view.chat.setConversationOverflow(value)
            }
        }
    }
}
