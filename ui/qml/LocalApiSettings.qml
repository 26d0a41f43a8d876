import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import Hearth.Ui

// Settings -> Local API: an OpenAI-compatible server on this computer for
// other programs (editors, scripts). Off by default; every request needs the
// token shown here; only this computer can connect unless the address says
// otherwise (with a warning).
ColumnLayout {
    id: root
    required property LocalApiController api
    Layout.fillWidth: true
    spacing: 18

    SettingRow {
        title: qsTr("Serve the loaded model to other programs")
        description: qsTr("An OpenAI-compatible API (chat completions, completions, models). Your own chats always come first.")
        Switch {
            objectName: "localApiSwitch"
            checked: root.api.enabled
            Accessible.name: qsTr("Local API")
            onToggled: root.api.enabled = checked
        }
    }
    SettingRow {
        visible: root.api.enabled
        title: qsTr("Address")
        description: root.api.running ? qsTr("Point OpenAI clients at this base URL.")
                                      : (root.api.error.length > 0 ? root.api.error : qsTr("Starting…"))
        RowLayout {
            Layout.fillWidth: true
            TextField {
                objectName: "localApiUrl"
                Layout.fillWidth: true
                readOnly: true
                text: root.api.url
                Accessible.name: qsTr("Local API address")
            }
        }
    }
    SettingRow {
        visible: root.api.enabled && root.api.running
        title: qsTr("Access token")
        description: qsTr("Clients send it as a bearer token. A new token locks out programs that have the old one.")
        RowLayout {
            Layout.fillWidth: true
            TextField {
                id: tokenField
                Layout.fillWidth: true
                readOnly: true
                echoMode: showToken.checked ? TextInput.Normal : TextInput.Password
                text: root.api.token
                Accessible.name: qsTr("Access token")
            }
            CheckBox { id: showToken; text: qsTr("Show") }
            Button {
                objectName: "copyTokenButton"
                text: qsTr("Copy")
                onClicked: root.api.copyToken()
            }
            Button {
                text: qsTr("New token")
                flat: true
                onClicked: root.api.regenerateToken()
            }
        }
    }
    SettingRow {
        visible: root.api.enabled && root.api.running
        title: qsTr("Activity")
        Label {
            objectName: "localApiActivity"
            Layout.fillWidth: true
            color: Theme.text
            text: qsTr("%1 waiting or running · %2 served · %3 tok/s").arg(root.api.pending).arg(root.api.served)
                      .arg(Number(root.api.tokensPerSecond).toLocaleString(Qt.locale(), "f", 1))
        }
    }
    SettingRow {
        visible: root.api.enabled
        title: qsTr("Parallel requests")
        description: qsTr("Requests answered together. Each holds its own context memory (shown in the memory estimate above).")
        LabeledSlider {
            Layout.fillWidth: true
            accessibleName: qsTr("Parallel requests")
            from: 1; to: root.api.maxParallel; stepSize: 1
            value: root.api.parallel
            format: v => String(v)
            onMoved: v => root.api.parallel = v
        }
    }
    SettingRow {
        visible: root.api.enabled
        title: qsTr("Context per request")
        LabeledSlider {
            Layout.fillWidth: true
            accessibleName: qsTr("Context per request")
            from: 256; to: 32768; stepSize: 256
            value: root.api.contextLength
            format: v => qsTr("%1 tokens").arg(v)
            onMoved: v => root.api.contextLength = v
        }
    }
    SettingRow {
        visible: root.api.enabled
        title: qsTr("Listen on")
        description: root.api.loopbackOnly
                     ? qsTr("Only programs on this computer can connect.")
                     : qsTr("Warning: other computers that can reach this address can use the model with the token.")
        RowLayout {
            Layout.fillWidth: true
            TextField {
                Layout.fillWidth: true
                text: root.api.host
                Accessible.name: qsTr("Listen address")
                onEditingFinished: root.api.host = text
            }
            SpinBox {
                from: 1024; to: 65535
                editable: true
                value: root.api.port
                textFromValue: v => String(v)
                valueFromText: t => parseInt(t)
                Accessible.name: qsTr("Port")
                onValueModified: root.api.port = value
            }
        }
    }
}
