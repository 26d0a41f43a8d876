import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import Hearth.Ui

// Settings -> Speculative decoding: drafts the model checks in one pass,
// so accepted drafts come almost free. Greedy replies are exactly the same
// with or without it; Hearth pauses drafting by itself where it does not pay.
ColumnLayout {
    id: root
    required property SpeculationController spec
    Layout.fillWidth: true
    spacing: 18

    SettingRow {
        title: qsTr("Drafts")
        description: root.spec.mode === "ngram"
                     ? qsTr("Guesses from what the conversation already says: free, best on edits, code and quotes.")
                     : root.spec.mode === "draft"
                       ? qsTr("A small model with the same vocabulary guesses ahead; the loaded model checks its guesses.")
                       : qsTr("Every token is computed one at a time.")
        ComboBox {
            objectName: "speculationMode"
            Layout.fillWidth: true
            Accessible.name: qsTr("Speculative decoding")
            textRole: "text"
            valueRole: "value"
            model: [ { text: qsTr("Off"), value: "off" },
                     { text: qsTr("From the conversation (n-gram)"), value: "ngram" },
                     { text: qsTr("Draft model"), value: "draft" } ]
            currentIndex: indexOfValue(root.spec.mode)
            onActivated: root.spec.mode = currentValue
        }
    }
    SettingRow {
        visible: root.spec.mode === "draft"
        title: qsTr("Draft model")
        description: root.spec.scanning ? qsTr("Looking through your models…") : root.spec.draftModelsNote
        ComboBox {
            id: draftChooser
            objectName: "draftModelChooser"
            Layout.fillWidth: true
            Accessible.name: qsTr("Draft model")
            enabled: root.spec.draftModels.length > 0
            textRole: "name"
            valueRole: "path"
            model: root.spec.draftModels
            currentIndex: indexOfValue(root.spec.draftModelPath)
            displayText: currentIndex >= 0 ? currentText
                         : (root.spec.draftModelPath.length > 0 ? root.spec.draftModelPath : qsTr("Choose a model"))
            onActivated: root.spec.draftModelPath = currentValue
        }
    }
    SettingRow {
        visible: root.spec.mode === "draft"
        title: qsTr("Run the draft model on")
        description: root.spec.gpuAvailable
                     ? qsTr("The CPU leaves the GPU to the model; the GPU (%1) drafts faster when it has room.").arg(root.spec.gpuName)
                     : qsTr("No Vulkan GPU was found: the draft model runs on the CPU.")
        ComboBox {
            objectName: "draftBackendChooser"
            Layout.fillWidth: true
            Accessible.name: qsTr("Run the draft model on")
            textRole: "text"
            valueRole: "value"
            // The GPU is offered only when one is present.
            model: root.spec.gpuAvailable
                   ? [ { text: qsTr("CPU"), value: "cpu" }, { text: qsTr("GPU (Vulkan)"), value: "vulkan" } ]
                   : [ { text: qsTr("CPU"), value: "cpu" } ]
            // By value, not indexOfValue(): the binding must follow the model's rows too.
            currentIndex: root.spec.draftBackend === "vulkan" ? (root.spec.gpuAvailable ? 1 : -1) : 0
            // A saved GPU choice with no GPU now: the engine says so in the status.
            displayText: currentIndex >= 0 ? currentText : qsTr("GPU (Vulkan), not found")
            onActivated: root.spec.draftBackend = currentValue
        }
    }
    SettingRow {
        visible: root.spec.mode !== "off"
        title: qsTr("Longest draft")
        description: qsTr("Hearth shortens drafts the model keeps rejecting; this is the most it tries.")
        LabeledSlider {
            Layout.fillWidth: true
            accessibleName: qsTr("Longest draft")
            from: 1; to: root.spec.maxDraft; stepSize: 1
            value: root.spec.draftMax
            format: v => qsTr("%1 tokens").arg(v)
            onMoved: v => root.spec.draftMax = v
        }
    }
    Label {
        objectName: "speculationStatus"
        Layout.fillWidth: true
        visible: root.spec.status.length > 0
        text: qsTr("Now: %1").arg(root.spec.status)
        color: Theme.textMuted
        wrapMode: Text.WordWrap
    }
}
