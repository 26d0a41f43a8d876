import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import Hearth.Ui

// A fenced code block: language label, copy button, monospace text that
// scrolls sideways instead of wrapping.
Rectangle {
    id: block
    property string code
    property string language
    property bool copied: false
    signal copyRequested(string text)

    implicitHeight: header.height + body.implicitHeight + 1
    radius: Theme.smallRadius + 2
    color: Theme.codeBackground
    border.color: Theme.border
    Accessible.role: Accessible.EditableText
    Accessible.name: language ? qsTr("%1 code").arg(language) : qsTr("Code")

    Timer {
        id: copiedTimer
        interval: 1500
        onTriggered: block.copied = false
    }

    Rectangle {
        id: header
        width: parent.width
        height: 32
        color: "transparent"
        RowLayout {
            anchors.fill: parent
            anchors.leftMargin: 12
            anchors.rightMargin: 4
            Label {
                text: block.language || qsTr("code")
                color: Theme.textMuted
                font.pointSize: Theme.fontSize * 0.85
                font.family: Theme.monoFamily
                Layout.fillWidth: true
            }
            ToolButton {
                id: copyButton
                text: block.copied ? qsTr("Copied") : qsTr("Copy")
                icon.source: Qt.resolvedUrl("../icons/" + (block.copied ? "check" : "copy") + ".svg")
                icon.width: 14
                icon.height: 14
                icon.color: Theme.textMuted
                font.pointSize: Theme.fontSize * 0.85
                Accessible.name: qsTr("Copy code")
                onClicked: {
                    block.copyRequested(block.code)
                    block.copied = true
                    copiedTimer.restart()
                }
            }
        }
        Rectangle {
            anchors.bottom: parent.bottom
            width: parent.width
            height: 1
            color: Theme.border
        }
    }

    Flickable {
        id: body
        anchors.top: header.bottom
        anchors.left: parent.left
        anchors.right: parent.right
        implicitHeight: codeText.implicitHeight + 20
        height: implicitHeight
        contentWidth: codeText.implicitWidth + 24
        contentHeight: height
        clip: true
        flickableDirection: Flickable.HorizontalFlick
        boundsBehavior: Flickable.StopAtBounds
        ScrollBar.horizontal: ScrollBar { policy: body.contentWidth > body.width ? ScrollBar.AsNeeded : ScrollBar.AlwaysOff }
        TextEdit {
            id: codeText
            x: 12
            y: 10
            text: block.code
            readOnly: true
            selectByMouse: true
            textFormat: TextEdit.PlainText
            font.family: Theme.monoFamily
            font.pointSize: Theme.fontSize * 0.92
            color: Theme.text
            selectionColor: Theme.accent
            selectedTextColor: Theme.accentText
        }
    }
}
