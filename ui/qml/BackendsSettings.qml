import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import Hearth.Ui

// Settings -> Backends: this computer and the remote OpenAI-compatible
// endpoints. Keys go to the system's secret store, never to the settings
// file; without a secret store the note says they last for this run only.
ColumnLayout {
    id: root
    required property BackendsController backends
    Layout.fillWidth: true
    spacing: 12
    // The endpoint being edited ("" while adding a new one).
    property string editingId: ""

    function edit(entry) {
        root.editingId = entry.id
        nameField.text = entry.name
        urlField.text = entry.baseUrl
        keyField.text = ""
        lanSwitch.checked = entry.allowLan
    }
    function clearForm() {
        root.editingId = ""
        nameField.text = ""
        urlField.text = ""
        keyField.text = ""
        lanSwitch.checked = false
    }

    SettingRow {
        title: qsTr("This computer")
        description: qsTr("Models in your models folder run here; nothing leaves this computer.")
    }

    Repeater {
        model: root.backends.endpoints
        delegate: ColumnLayout {
            required property var modelData
            Layout.fillWidth: true
            spacing: 4
            SettingRow {
                title: modelData.name
                description: modelData.baseUrl + (modelData.hasKey ? qsTr(" · API key stored") : qsTr(" · no API key"))
                                + (modelData.allowLan ? qsTr(" · LAN address allowed") : "")
                RowLayout {
                    Button {
                        objectName: "testConnection_" + modelData.name
                        text: qsTr("Test connection")
                        onClicked: root.backends.testConnection(modelData.id)
                    }
                    Button { text: qsTr("Edit"); onClicked: root.edit(modelData) }
                    Button {
                        text: qsTr("Remove")
                        onClicked: {
                            if (root.editingId === modelData.id) root.clearForm()
                            root.backends.removeEndpoint(modelData.id)
                        }
                    }
                }
            }
            Label {
                visible: root.backends.testedId === modelData.id
                Layout.fillWidth: true
                wrapMode: Text.WordWrap
                color: root.backends.testError.length > 0 ? Theme.danger : Theme.textMuted
                text: root.backends.testing ? qsTr("Connecting…")
                      : root.backends.testError.length > 0 ? root.backends.testError
                      : qsTr("Serves: %1").arg(root.backends.testModels.join(", ") || qsTr("no models"))
            }
        }
    }

    Label {
        text: root.editingId.length > 0 ? qsTr("Edit endpoint") : qsTr("Add an endpoint")
        font.weight: Font.DemiBold
        color: Theme.text
    }
    TextField {
        id: nameField
        objectName: "endpointName"
        Layout.fillWidth: true
        placeholderText: qsTr("Name, e.g. GPU box")
        Accessible.name: qsTr("Endpoint name")
    }
    TextField {
        id: urlField
        objectName: "endpointUrl"
        Layout.fillWidth: true
        placeholderText: qsTr("Base URL, e.g. https://gpu-box.example/v1")
        Accessible.name: qsTr("Base URL")
    }
    TextField {
        id: keyField
        objectName: "endpointKey"
        Layout.fillWidth: true
        echoMode: TextInput.Password
        placeholderText: root.editingId.length > 0 ? qsTr("API key (leave empty to keep the stored one)")
                                                   : qsTr("API key (optional)")
        Accessible.name: qsTr("API key")
    }
    SettingRow {
        title: qsTr("Allow a LAN address")
        description: qsTr("Plain http to a private network address (192.168.x.x, 10.x.x.x, *.local). Anyone on that network can read the traffic.")
        Switch { id: lanSwitch; Accessible.name: qsTr("Allow a LAN address") }
    }
    Label {
        visible: root.backends.keyNote.length > 0
        Layout.fillWidth: true
        wrapMode: Text.WordWrap
        color: Theme.textMuted
        text: root.backends.keyNote
    }
    Label {
        visible: root.backends.error.length > 0
        Layout.fillWidth: true
        wrapMode: Text.WordWrap
        color: Theme.danger
        text: root.backends.error
    }
    RowLayout {
        Button {
            objectName: "saveEndpoint"
            text: root.editingId.length > 0 ? qsTr("Save") : qsTr("Add endpoint")
            enabled: nameField.text.length > 0 && urlField.text.length > 0
            onClicked: {
                const ok = root.editingId.length > 0
                        ? root.backends.updateEndpoint(root.editingId, nameField.text, urlField.text, keyField.text,
                                                       lanSwitch.checked, false)
                        : root.backends.addEndpoint(nameField.text, urlField.text, keyField.text,
                                                    lanSwitch.checked).length > 0
                if (ok) root.clearForm()
            }
        }
        Button {
            visible: root.editingId.length > 0
            text: qsTr("Cancel")
            onClicked: root.clearForm()
        }
    }
}
