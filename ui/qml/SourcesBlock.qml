import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import Hearth.Ui

// The numbered sources a reply was given from the conversation's documents.
// Each chip opens the passage as the model saw it, with the file and lines it
// came from and a button that opens the file; sources the reply cites as [n]
// are highlighted.
ColumnLayout {
    id: block
    property var sources: []
    spacing: 4
    objectName: "sourcesBlock"

    Label {
        text: qsTr("Sources")
        color: Theme.textMuted
        font.pointSize: Theme.fontSize * 0.85
        font.weight: Font.DemiBold
    }

    Flow {
        Layout.fillWidth: true
        spacing: 6
        Repeater {
            model: block.sources
            delegate: Button {
                required property var modelData
                objectName: "source" + modelData.number
                text: "[" + modelData.number + "] " + modelData.label
                flat: !modelData.cited
                highlighted: modelData.cited
                font.pointSize: Theme.fontSize * 0.85
                Accessible.name: qsTr("Source %1: %2").arg(modelData.number).arg(modelData.label)
                ToolTip.visible: hovered
                ToolTip.text: modelData.path
                onClicked: { viewer.source = modelData; viewer.open() }
            }
        }
    }

    Popup {
        id: viewer
        property var source: null
        modal: true
        parent: Overlay.overlay
        anchors.centerIn: parent
        width: Math.min(720, (parent ? parent.width : 720) - 48)
        height: Math.min(560, (parent ? parent.height : 560) - 48)
        padding: 16

        ColumnLayout {
            anchors.fill: parent
            spacing: 8
            Label {
                Layout.fillWidth: true
                text: viewer.source ? "[" + viewer.source.number + "] " + viewer.source.label : ""
                font.weight: Font.DemiBold
                elide: Text.ElideMiddle
            }
            Label {
                Layout.fillWidth: true
                text: viewer.source ? qsTr("%1 · library “%2”").arg(viewer.source.path).arg(viewer.source.library) : ""
                color: Theme.textMuted
                elide: Text.ElideMiddle
            }
            ScrollView {
                Layout.fillWidth: true
                Layout.fillHeight: true
                TextArea {
                    readOnly: true
                    wrapMode: TextEdit.Wrap
                    text: viewer.source ? viewer.source.text : ""
                    Accessible.name: qsTr("The passage as the model read it")
                }
            }
            RowLayout {
                Layout.alignment: Qt.AlignRight
                Button {
                    text: qsTr("Open file")
                    onClicked: Qt.openUrlExternally("file://" + viewer.source.path)
                }
                Button {
                    text: qsTr("Close")
                    onClicked: viewer.close()
                }
            }
        }
    }
}
