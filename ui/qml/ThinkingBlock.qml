import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import Hearth.Ui

// A reasoning model's thinking above its answer. Open and growing while the
// model thinks; folded away once the answer starts (or the reply ends), with
// a header saying how long it thought; a click (or Enter/Space) opens it
// again. A reply read back from storage starts folded.
ColumnLayout {
    id: block
    objectName: "thinkingBlock"
    // The reasoning text (plain: models write it as notes, not Markdown).
    property string reasoning
    // How long it thought, in ms; negative while unknown.
    property double reasoningMs: -1
    // Still thinking: the reply streams and its answer has not started.
    property bool thinking: false
    // The user's choice while thinking (fold it away) and after (open it).
    property bool userCollapsed: false
    property bool userExpanded: false
    readonly property bool expanded: thinking ? !userCollapsed : userExpanded
    readonly property string headerText: {
        if (thinking)
            return qsTr("Thinking…")
        if (reasoningMs < 0)
            return qsTr("Thoughts")
        if (reasoningMs < 1000)
            return qsTr("Thought for less than a second")
        return qsTr("Thought for %1 s").arg(Math.round(reasoningMs / 1000))
    }
    spacing: 4

    // Whatever the user chose while it was thinking, the answer folds it away.
    onThinkingChanged: { userCollapsed = false; userExpanded = false }

    state: thinking && expanded ? "thinking" : (expanded ? "expanded" : "collapsed")
    states: [
        State { name: "thinking"; PropertyChanges { target: chevron; rotation: 90 } },
        State { name: "expanded"; PropertyChanges { target: chevron; rotation: 90 } },
        State { name: "collapsed"; PropertyChanges { target: chevron; rotation: 0 } }
    ]

    AbstractButton {
        id: header
        objectName: "thinkingHeader"
        Layout.fillWidth: false
        focusPolicy: Qt.StrongFocus
        text: block.headerText
        Accessible.role: Accessible.Button
        Accessible.name: block.headerText
        Accessible.description: block.expanded ? qsTr("Hide the model's thinking") : qsTr("Show the model's thinking")
        onClicked: {
            if (block.thinking)
                block.userCollapsed = !block.userCollapsed
            else
                block.userExpanded = !block.userExpanded
        }
        leftPadding: 6
        rightPadding: 10
        topPadding: 4
        bottomPadding: 4
        contentItem: RowLayout {
            spacing: 4
            Image {
                id: chevron
                source: Qt.resolvedUrl("../icons/chevron-right.svg")
                sourceSize: Qt.size(14, 14)
                opacity: 0.7
                Accessible.ignored: true
                Behavior on rotation { NumberAnimation { duration: 120 } }
            }
            Label {
                objectName: "thinkingHeaderLabel"
                text: header.text
                color: header.hovered || header.activeFocus ? Theme.text : Theme.textMuted
                font.pointSize: Theme.fontSize * 0.9
                font.italic: block.thinking
            }
        }
        background: Rectangle {
            radius: Theme.smallRadius
            color: header.down ? Theme.selection : (header.hovered ? Theme.hover : Theme.surfaceAlt)
            border.width: header.visualFocus ? 2 : 0
            border.color: Theme.accent
        }
    }

    // The thinking itself, set off by an accent rule on its left.
    Item {
        objectName: "thinkingBody"
        visible: block.expanded && block.reasoning.length > 0
        Layout.fillWidth: true
        implicitHeight: body.implicitHeight + 8
        Rectangle {
            width: 2
            height: parent.height
            radius: 1
            color: Theme.border
        }
        TextEdit {
            id: body
            x: 14
            y: 4
            width: parent.width - x
            text: block.reasoning
            textFormat: TextEdit.PlainText
            readOnly: true
            selectByMouse: true
            wrapMode: TextEdit.Wrap
            color: Theme.textMuted
            selectionColor: Theme.selection
            selectedTextColor: Theme.text
            font.pointSize: Theme.fontSize * 0.95
            Accessible.name: qsTr("The model's thinking")
        }
    }
}
