import QtQuick
import QtQuick.Controls
import QtQuick.Layouts

ApplicationWindow {
    id: window
    width: 1100
    height: 720
    visible: true
    title: qsTr("Hearth")

    header: ToolBar {
        RowLayout {
            anchors.fill: parent
            Label {
                text: qsTr("Hearth")
                font.bold: true
                Layout.leftMargin: 12
            }
            Item { Layout.fillWidth: true }
            ToolButton {
                text: qsTr("About")
                Accessible.name: qsTr("About Hearth")
                onClicked: aboutDialog.open()
            }
        }
    }

    Label {
        anchors.centerIn: parent
        text: qsTr("Welcome to Hearth: private chat with language models on your own machine.")
        wrapMode: Text.WordWrap
    }

    Dialog {
        id: aboutDialog
        title: qsTr("About Hearth")
        modal: true
        standardButtons: Dialog.Ok
        anchors.centerIn: parent
        Label {
            text: qsTr("Hearth %1\n\nBundled demo model: stories260K, a 260K-parameter model trained on TinyStories by Andrej Karpathy (MIT license).").arg(Qt.application.version)
            wrapMode: Text.WordWrap
            width: 420
        }
    }
}
