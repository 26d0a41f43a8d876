import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import Hearth.Ui

// First run: what Hearth is, the one-click demo model, and the way to real models.
Item {
    id: page
    required property ModelController model
    signal settingsRequested()
    signal modelsRequested()

    ColumnLayout {
        anchors.centerIn: parent
        width: Math.min(parent.width - 64, 560)
        spacing: 14

        Image {
            source: Qt.resolvedUrl("../resources/icons/hearth.svg")
            sourceSize: Qt.size(96, 96)
            Layout.alignment: Qt.AlignHCenter
            Accessible.ignored: true
        }
        Label {
            text: qsTr("Welcome to Hearth")
            font.pointSize: Theme.fontSize * 2
            font.weight: Font.DemiBold
            color: Theme.text
            Layout.alignment: Qt.AlignHCenter
        }
        Label {
            text: qsTr("Chat with language models that run entirely on this computer. Nothing you write leaves it.")
            wrapMode: Text.WordWrap
            horizontalAlignment: Text.AlignHCenter
            color: Theme.textMuted
            Layout.fillWidth: true
        }

        Item { Layout.preferredHeight: 8 }

        Button {
            id: demoButton
            Layout.alignment: Qt.AlignHCenter
            text: page.model.loading ? qsTr("Loading…") : qsTr("Try the demo model")
            enabled: page.model.demoAvailable && !page.model.loading
            highlighted: true
            focus: true
            font.pointSize: Theme.fontSize * 1.1
            Accessible.name: qsTr("Load the bundled demo model")
            onClicked: page.model.loadDemo()
            padding: 14
            leftPadding: 28
            rightPadding: 28
            background: Rectangle {
                radius: Theme.radius
                color: demoButton.enabled ? (demoButton.down ? Qt.darker(Theme.accent, 1.15) : Theme.accent) : Theme.border
                border.width: demoButton.visualFocus ? 2 : 0
                border.color: Theme.text
            }
            contentItem: Label {
                text: demoButton.text
                font: demoButton.font
                color: Theme.accentText
                horizontalAlignment: Text.AlignHCenter
            }
        }
        ProgressBar {
            visible: page.model.loading
            value: page.model.progress
            Layout.alignment: Qt.AlignHCenter
            Layout.preferredWidth: 280
            Accessible.name: qsTr("Loading progress")
        }
        Label {
            text: page.model.demoAvailable
                  ? qsTr("stories260K: a tiny model that writes children's stories. It loads in a moment and shows how Hearth works.")
                  : qsTr("The demo model is not installed with this copy of Hearth.")
            wrapMode: Text.WordWrap
            horizontalAlignment: Text.AlignHCenter
            color: Theme.textMuted
            font.pointSize: Theme.fontSize * 0.9
            Layout.fillWidth: true
        }

        Rectangle {
            Layout.fillWidth: true
            Layout.topMargin: 10
            implicitHeight: realModels.implicitHeight + 28
            radius: Theme.radius
            color: Theme.surface
            border.color: Theme.border
            ColumnLayout {
                id: realModels
                anchors.fill: parent
                anchors.margins: 14
                spacing: 6
                Label {
                    text: qsTr("Ready for a real assistant?")
                    font.weight: Font.DemiBold
                    color: Theme.text
                }
                Label {
                    text: qsTr("Pick a model that fits your computer, such as Llama 3.2, Qwen 2.5 or Phi-3.5, from the model picker. Hearth checks that it fits in memory before downloading.")
                    wrapMode: Text.WordWrap
                    color: Theme.textMuted
                    Layout.fillWidth: true
                }
                Button {
                    text: qsTr("Choose a model…")
                    Accessible.name: qsTr("Open the model picker")
                    onClicked: page.modelsRequested()
                }
            }
        }
    }
}
