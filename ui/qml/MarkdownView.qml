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
