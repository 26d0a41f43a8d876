import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import Hearth.Ui

// The model picker: search and filters on top, then one card per model.
Page {
    id: page
    property PickerViewModel picker: PickerViewModel {}
    // Models the configured remote endpoints serve, offered beside the files.
    property BackendsController backends: null
    // Compare levels; null hides the card's button.
    property QtObject compare: null
    signal backRequested()
    signal remoteModelChosen(string path)

    background: Rectangle { color: Theme.window }

    header: ColumnLayout {
        spacing: 8
        RowLayout {
            Layout.fillWidth: true
            Layout.margins: Theme.spacing
            Label {
                text: qsTr("Models")
                font.bold: true
                font.pointSize: Theme.fontSize + 4
                color: Theme.text
            }
            Label {
                text: qsTr("%1 of %2 · %3 RAM available · %4 VRAM free · context %5, %6 cache")
                        .arg(page.picker.visibleCount).arg(page.picker.totalCount)
                        .arg(page.picker.formatBytes(page.picker.ramAvailableBytes))
                        .arg(page.picker.formatBytes(page.picker.vramFreeBytes))
                        .arg(page.picker.contextLength).arg(page.picker.kvType)
                color: Theme.textMuted
            }
            Item { Layout.fillWidth: true }
        }
        RowLayout {
            Layout.fillWidth: true
            Layout.leftMargin: Theme.spacing
            Layout.rightMargin: Theme.spacing
            TextField {
                id: search
                Layout.fillWidth: true
                placeholderText: qsTr("Search models")
                onTextChanged: page.picker.filterText = text
                Accessible.name: qsTr("Search models")
            }
            ComboBox {
                id: sizeFilter
                model: [qsTr("Any size"), qsTr("Up to 1 GB"), qsTr("Up to 3 GB"), qsTr("Up to 6 GB")]
                readonly property var limits: [0, 1e9, 3e9, 6e9]
                onCurrentIndexChanged: page.picker.maxSizeBytes = limits[currentIndex]
                Accessible.name: qsTr("Size filter")
            }
            CheckBox {
                text: qsTr("Fits my machine")
                checked: page.picker.fitsOnly
                onToggled: page.picker.fitsOnly = checked
            }
        }
        RowLayout {
            Layout.fillWidth: true
            Layout.leftMargin: Theme.spacing
            Layout.rightMargin: Theme.spacing
            TextField {
                id: urlField
                Layout.fillWidth: true
                placeholderText: qsTr("Add a model: HTTPS link to a .gguf file, or a local path")
            }
            Button {
                text: qsTr("Add")
                enabled: urlField.text.length > 0
                onClicked: {
                    const ok = urlField.text.startsWith("https://") ? page.picker.addFromUrl(urlField.text)
                                                                    : page.picker.importLocalFile(urlField.text);
                    if (ok) urlField.text = "";
                }
            }
        }
        Flow {
            Layout.fillWidth: true
            Layout.leftMargin: Theme.spacing
            Layout.rightMargin: Theme.spacing
            spacing: 8
            visible: page.backends !== null && page.backends.remoteModels.length > 0
            Label {
                text: qsTr("Remote:")
                color: Theme.textMuted
            }
            Repeater {
                model: page.backends ? page.backends.remoteModels : []
                delegate: Button {
                    required property var modelData
                    objectName: "remoteModel_" + modelData.label
                    text: modelData.label
                    Accessible.name: qsTr("Use %1").arg(modelData.label)
                    onClicked: page.remoteModelChosen(modelData.path)
                }
            }
        }
        Label {
            Layout.fillWidth: true
            Layout.leftMargin: Theme.spacing
            visible: page.picker.lastError.length > 0
            text: page.picker.lastError
            color: Theme.danger
            wrapMode: Text.WordWrap
        }
    }

    ListView {
        id: list
        anchors.fill: parent
        anchors.margins: Theme.spacing
        spacing: Theme.spacing
        clip: true
        model: page.picker
        delegate: ModelCard {
            width: list.width
            picker: page.picker
            onCompareRequested: page.openCompare(modelId, name, variants)
        }
        ScrollBar.vertical: ScrollBar {}
    }

    // Made on first use: its chart (Qt Charts) needs the app's QApplication.
    function openCompare(id, name, variants) {
        compareLoader.active = true
        const d = compareLoader.item
        d.modelId = id
        d.modelName = name
        d.variants = variants
        d.open()
    }
    Loader {
        id: compareLoader
        active: false
        sourceComponent: CompareLevelsPage {
            objectName: "compareLevels"
            picker: page.picker
            compare: page.compare
            parent: Overlay.overlay
            width: Math.min(1100, page.width - 40)
            height: page.height - 40
            x: (page.width - width) / 2
            y: 20
        }
    }
}
