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

    Repeater {
        model: root.segments
        delegate: Loader {
            required property var modelData
            Layout.fillWidth: true
            sourceComponent: modelData.kind === "code" ? codeComponent : proseComponent
            property var segment: modelData
        }
    }

    Component {
        id: proseComponent
        TextEdit {
            text: segment.text
            textFormat: TextEdit.MarkdownText
            readOnly: true
            selectByMouse: true
            selectByKeyboard: true
            wrapMode: TextEdit.Wrap
            color: Theme.text
            selectionColor: Theme.accent
            selectedTextColor: Theme.accentText
            font.pointSize: Theme.fontSize
            activeFocusOnTab: false
            onLinkActivated: link => Qt.openUrlExternally(link)
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
