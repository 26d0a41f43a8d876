import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import Hearth.Ui

// One catalog model: description, variant selector, fit indicator and
// breakdown, download controls with progress, and the actions for installed
// variants (load, switch quant level, verify, delete).
Rectangle {
    id: card
    required property var picker
    required property string modelId
    required property string name
    required property string description
    required property string license
    required property real parameters
    // A mixture of experts' parameters per token (0: dense): memory holds them
    // all, speed follows these.
    required property real activeParameters
    required property string draftModel
    // "embedding": a model for the Documents page, not for chat.
    required property string kind
    required property int contextLength
    required property var variants
    required property string recommendedQuant
    required property var installedQuants
    // Compare levels was asked for on this model (PickerPage opens it).
    signal compareRequested()

    property int selected: {
        for (let i = 0; i < variants.length; ++i)
            if (variants[i].quant === recommendedQuant) return i;
        return variants.length > 0 ? variants.length - 1 : 0;
    }
    readonly property var current: variants.length > 0 ? variants[Math.min(selected, variants.length - 1)] : ({})

    implicitHeight: content.implicitHeight + 2 * Theme.spacing
    radius: Theme.radius
    color: Theme.surface
    border.color: Theme.border

    ColumnLayout {
        id: content
        anchors.fill: parent
        anchors.margins: Theme.spacing
        spacing: 6

        RowLayout {
            Layout.fillWidth: true
            Label {
                text: card.name
                font.bold: true
                font.pointSize: Theme.fontSize + 2
                color: Theme.text
            }
            Label {
                text: (card.activeParameters > 0
                       ? qsTr("%1B parameters (%2B active per token) · %3 · context %4")
                             .arg((card.parameters / 1e9).toFixed(1)).arg((card.activeParameters / 1e9).toFixed(1))
                       : qsTr("%1B parameters · %3 · context %4").arg((card.parameters / 1e9).toFixed(1)))
                      .arg(card.license).arg(card.contextLength)
                color: Theme.textMuted
                font.pointSize: Theme.fontSize - 1
            }
            Item { Layout.fillWidth: true }
            FitBadge {
                fit: card.current.fits || "no"
                gpuLayers: card.current.gpuLayers || 0
                nLayer: card.current.nLayer || 0
            }
        }
        Label {
            Layout.fillWidth: true
            text: card.description
            wrapMode: Text.WordWrap
            color: Theme.text
        }
        Label {
            // Speculative decoding: the catalog's pick of a draft for this model.
            objectName: "draftSuggestion"
            Layout.fillWidth: true
            visible: card.draftModel.length > 0
            text: qsTr("Faster replies: download %1 too and choose it as the draft model in Settings.").arg(card.draftModel)
            wrapMode: Text.WordWrap
            color: Theme.textMuted
            font.pointSize: Theme.fontSize - 1
        }
        RowLayout {
            Layout.fillWidth: true
            spacing: 4
            Repeater {
                model: card.variants
                delegate: Button {
                    required property var modelData
                    required property int index
                    text: modelData.quant + (modelData.recommended ? " ★" : "") + (modelData.installed ? " ✓" : "")
                    checkable: true
                    checked: index === card.selected
                    onClicked: card.selected = index
                    ToolTip.visible: hovered
                    ToolTip.text: modelData.qualityNote + "\n" + (modelData.sizeIsEstimate ? "≈ " : "")
                                  + card.picker.formatBytes(modelData.sizeBytes)
                    Accessible.name: qsTr("Quant level %1").arg(modelData.quant)
                }
            }
            Item { Layout.fillWidth: true }
        }
        Label {
            Layout.fillWidth: true
            wrapMode: Text.WordWrap
            color: Theme.textMuted
            font.pointSize: Theme.fontSize - 1
            text: (card.current.qualityNote || "") + "  " + qsTr("Download: %1%2")
                    .arg(card.current.sizeIsEstimate ? "≈ " : "")
                    .arg(card.picker.formatBytes(card.current.sizeBytes || 0))
        }
        Label {
            objectName: "verifyNote"
            Layout.fillWidth: true
            wrapMode: Text.WordWrap
            color: Theme.textMuted
            font.pointSize: Theme.fontSize - 1
            font.italic: true
            text: card.current.verifyNote || ""
            visible: text !== ""
        }
        FitBreakdown {
            Layout.fillWidth: true
            variant: card.current
            picker: card.picker
        }

        // Download in progress.
        RowLayout {
            Layout.fillWidth: true
            visible: (card.current.state || "") !== ""
            ProgressBar {
                Layout.fillWidth: true
                from: 0; to: 1
                value: card.current.progress || 0
            }
            Label {
                color: Theme.textMuted
                text: card.current.state === "downloading"
                      ? qsTr("%1/s · %2 left").arg(card.picker.formatBytes(card.current.speed || 0))
                            .arg(card.current.eta >= 0 ? Math.round(card.current.eta) + " s" : "?")
                      : card.current.state || ""
            }
            Button {
                text: card.current.state === "paused" || card.current.state === "failed" ? qsTr("Resume") : qsTr("Pause")
                onClicked: card.current.state === "paused" || card.current.state === "failed"
                           ? card.picker.resume(card.modelId, card.current.quant)
                           : card.picker.pause(card.modelId, card.current.quant)
            }
            Button {
                text: qsTr("Cancel")
                onClicked: card.picker.cancel(card.modelId, card.current.quant)
            }
        }
        Label {
            Layout.fillWidth: true
            visible: card.current.state === "failed"
            text: card.current.error || ""
            color: Theme.danger
            wrapMode: Text.WordWrap
        }

        RowLayout {
            Layout.fillWidth: true
            visible: (card.current.state || "") === ""
            Button {
                visible: !card.current.installed
                enabled: card.current.fits !== "no"
                highlighted: true
                text: qsTr("Download %1").arg(card.current.quant || "")
                onClicked: card.picker.download(card.modelId, card.current.quant)
            }
            Button {
                visible: !!card.current.installed
                highlighted: true
                text: card.kind === "embedding" ? qsTr("Use for Documents") : qsTr("Load")
                onClicked: card.picker.load(card.modelId, card.current.quant)
            }
            Button {
                visible: card.installedQuants.length > 0 && card.installedQuants.indexOf(card.current.quant) < 0
                text: qsTr("Switch to %1").arg(card.current.quant || "")
                ToolTip.visible: hovered
                ToolTip.text: qsTr("Downloads this level if needed, then reloads the model keeping the conversation")
                onClicked: card.picker.switchQuant(card.modelId, card.current.quant)
            }
            Button {
                readonly property bool hashing: card.picker.verifying === card.modelId + ":" + (card.current.quant || "")
                visible: !!card.current.installed
                enabled: card.picker.verifying === ""
                text: hashing ? qsTr("Checking… %1%").arg(Math.round(card.picker.verifyProgress * 100))
                              : qsTr("Verify")
                onClicked: card.picker.verify(card.modelId, card.current.quant)
            }
            Button {
                visible: !!card.current.installed
                text: qsTr("Delete")
                onClicked: card.picker.remove(card.modelId, card.current.quant)
            }
            Button {
                objectName: "compareLevelsButton"
                visible: card.installedQuants.length > 0 && card.kind !== "embedding"
                text: qsTr("Compare levels…")
                onClicked: card.compareRequested()
            }
            Item { Layout.fillWidth: true }
        }
    }
}
