import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import QtQuick.Dialogs
import QtCharts
import Hearth.Ui

// Compare levels of one model: choose 2-4 levels (installed ones, or ones the
// quantizer can make from an installed F32/F16/BF16 file) and a prompt set;
// the comparison runs on the engine thread between chat replies. Results: a
// table, a chart of memory against drift (Qt Charts: Debian 12 has no Qt
// Graphs), the answers side by side and the recommendation.
Popup {
    id: dialog
    property PickerViewModel picker: null
    property QtObject compare: null
    property string modelId: ""
    property string modelName: ""
    property var variants: []
    property var choices: []
    property var chosen: ({})
    property string promptFile: ""
    property var chosenConversations: ({})
    modal: true
    padding: Theme.spacing
    background: Rectangle { color: Theme.window; border.color: Theme.border; radius: Theme.radius }

    onOpened: {
        const installed = []
        const quants = []
        for (let i = 0; i < variants.length; ++i) {
            quants.push(variants[i].quant)
            const path = picker ? picker.installedPath(modelId, variants[i].quant) : ""
            if (path.length > 0) installed.push({quant: variants[i].quant, path: path})
        }
        choices = compare ? compare.levelChoices(installed, quants) : []
        chosen = ({})
        chosenConversations = ({})
        if (compare) compare.refreshConversations()
    }

    function chosenLevels() {
        const out = []
        for (let i = 0; i < choices.length; ++i)
            if (chosen[choices[i].quant]) out.push(choices[i])
        return out
    }

    function drawChart() {
        chart.removeAllSeries()
        if (!compare) return
        const rows = compare.results
        let maxMib = 1, maxKld = 0.0001
        for (let i = 0; i < rows.length; ++i) {
            maxMib = Math.max(maxMib, rows[i].memoryBytes / 1048576)
            maxKld = Math.max(maxKld, rows[i].kldMean)
        }
        axisX.max = maxMib * 1.15
        axisY.max = maxKld * 1.2
        for (let i = 0; i < rows.length; ++i) {
            const s = chart.createSeries(ChartView.SeriesTypeScatter,
                                         rows[i].quant + ": " + rows[i].tgTps.toFixed(1) + " tok/s", axisX, axisY)
            s.markerSize = 14
            s.pointLabelsVisible = true
            s.pointLabelsFormat = rows[i].quant
            s.append(rows[i].memoryBytes / 1048576, rows[i].kldMean)
        }
    }

    Connections {
        target: dialog.compare
        function onResultsChanged() { dialog.drawChart() }
        // A made level is installed now: the card lists it.
        function onLevelMade(path) { if (dialog.picker) dialog.picker.rescanInstalled() }
    }

    FileDialog {
        id: promptDialog
        title: qsTr("Your prompts: a .jsonl file (one prompt per line) or a text")
        onAccepted: dialog.promptFile = selectedFile.toString().replace(/^file:\/\//, "")
    }
    FileDialog {
        id: saveDialog
        title: qsTr("Save chart")
        fileMode: FileDialog.SaveFile
        nameFilters: ["PNG (*.png)"]
        onAccepted: chart.grabToImage(r => r.saveToFile(selectedFile.toString().replace(/^file:\/\//, "")))
    }

    ScrollView {
        anchors.fill: parent
        contentWidth: availableWidth
        ColumnLayout {
            width: parent.width
            spacing: 10

            RowLayout {
                Layout.fillWidth: true
                Label {
                    text: qsTr("Compare levels of %1").arg(dialog.modelName)
                    font.bold: true
                    font.pointSize: Theme.fontSize + 3
                    color: Theme.text
                }
                Item { Layout.fillWidth: true }
                Button { text: qsTr("Close"); onClicked: dialog.close() }
            }
            Label {
                Layout.fillWidth: true
                wrapMode: Text.WordWrap
                color: Theme.textMuted
                text: qsTr("Choose 2 to 4 levels. The best level you have is the reference; levels marked " +
                           "\"make\" are quantized from it first and kept beside your other files.")
            }
            Flow {
                Layout.fillWidth: true
                spacing: 8
                Repeater {
                    model: dialog.choices
                    delegate: CheckBox {
                        required property var modelData
                        text: modelData.quant + (modelData.make ? qsTr(" (make)") : "")
                        checked: !!dialog.chosen[modelData.quant]
                        onToggled: {
                            const c = Object.assign({}, dialog.chosen)
                            c[modelData.quant] = checked
                            dialog.chosen = c
                        }
                    }
                }
            }
            CheckBox {
                objectName: "compareProtectImportant"
                visible: dialog.choices.some(c => c.make)
                enabled: !!dialog.compare
                checked: dialog.compare ? dialog.compare.protectImportant : true
                text: qsTr("Protect the most important weights of made levels (measured on a built-in text)")
                onToggled: dialog.compare.protectImportant = checked
            }
            RowLayout {
                Layout.fillWidth: true
                RadioButton { id: builtIn; checked: true; text: qsTr("Built-in prompts (chat, code, summary, non-English)") }
                RadioButton { id: ownFile; text: qsTr("My own prompts") }
                RadioButton {
                    id: fromConversations
                    objectName: "compareFromConversations"
                    text: qsTr("Questions from my conversations")
                }
                Button {
                    visible: ownFile.checked
                    text: dialog.promptFile.length > 0 ? dialog.promptFile : qsTr("Choose file…")
                    onClicked: promptDialog.open()
                }
            }
            // The conversations to take questions from: each question asked on
            // the branch last looked at is answered by every level.
            ListView {
                objectName: "compareConversations"
                Layout.fillWidth: true
                Layout.preferredHeight: Math.min(contentHeight, 140)
                visible: fromConversations.checked
                clip: true
                model: dialog.compare ? dialog.compare.conversations : []
                delegate: CheckBox {
                    required property var modelData
                    text: modelData.title.length > 0 ? modelData.title : qsTr("Untitled conversation")
                    checked: !!dialog.chosenConversations[modelData.id]
                    onToggled: {
                        const c = Object.assign({}, dialog.chosenConversations)
                        if (checked) c[modelData.id] = true
                        else delete c[modelData.id]
                        dialog.chosenConversations = c
                    }
                }
            }
            Label {
                visible: fromConversations.checked && (!dialog.compare || dialog.compare.conversations.length === 0)
                color: Theme.textMuted
                text: qsTr("No conversations yet.")
            }
            QualityFloorRow {
                Layout.fillWidth: true
                compare: dialog.compare
            }
            RowLayout {
                Layout.fillWidth: true
                Button {
                    objectName: "compareStart"
                    text: qsTr("Compare")
                    enabled: !!dialog.compare && !dialog.compare.running
                    onClicked: {
                        if (fromConversations.checked)
                            dialog.compare.startOnConversations(dialog.modelId, dialog.modelName, dialog.chosenLevels(),
                                                                Object.keys(dialog.chosenConversations).map(Number))
                        else
                            dialog.compare.start(dialog.modelId, dialog.modelName, dialog.chosenLevels(),
                                                 ownFile.checked ? dialog.promptFile : "builtin")
                    }
                }
                Button {
                    text: qsTr("Cancel")
                    visible: !!dialog.compare && dialog.compare.running
                    onClicked: dialog.compare.cancel()
                }
                ProgressBar {
                    Layout.fillWidth: true
                    visible: !!dialog.compare && dialog.compare.running
                    value: dialog.compare ? dialog.compare.progress : 0
                }
                Label {
                    text: dialog.compare ? dialog.compare.activity : ""
                    color: Theme.textMuted
                }
            }
            Label {
                Layout.fillWidth: true
                visible: text.length > 0
                wrapMode: Text.WordWrap
                color: "#c0392b"
                text: dialog.compare ? dialog.compare.error : ""
            }
            Label {
                objectName: "compareRecommendation"
                Layout.fillWidth: true
                wrapMode: Text.WordWrap
                font.bold: true
                color: Theme.text
                text: dialog.compare ? dialog.compare.recommendation : ""
            }
            // The table: one row per level, the reference first.
            GridLayout {
                Layout.fillWidth: true
                columns: 8
                visible: !!dialog.compare && dialog.compare.results.length > 0
                Repeater {
                    model: [qsTr("Level"), qsTr("File"), qsTr("Memory"), qsTr("Prefill tok/s"), qsTr("Decode tok/s"),
                            qsTr("Top-1 agree"), qsTr("KLD mean / p99"), qsTr("Same answer (tokens)")]
                    delegate: Label { required property string modelData; text: modelData; font.bold: true; color: Theme.text }
                }
                Repeater {
                    model: dialog.compare ? dialog.compare.results : []
                    delegate: Repeater {
                        required property var modelData
                        readonly property var row: modelData
                        model: [row.quant + (row.isBase ? qsTr(" (reference)") : "") + (row.made ? qsTr(" (made)") : ""),
                                dialog.compare.formatBytes(row.fileBytes),
                                dialog.compare.formatBytes(row.memoryBytes) + (row.fits === "no" ? qsTr(" (does not fit)") : ""),
                                row.ppTps.toFixed(1), row.tgTps.toFixed(1), (100 * row.top1).toFixed(1) + " %",
                                row.kldMean.toFixed(4) + " / " + row.kldP99.toFixed(4), row.greedySame.toFixed(1)]
                        delegate: Label { required property string modelData; text: modelData; color: Theme.text }
                    }
                }
            }
            ChartView {
                id: chart
                objectName: "compareChart"
                Layout.fillWidth: true
                Layout.preferredHeight: 360
                visible: !!dialog.compare && dialog.compare.results.length > 0
                antialiasing: true
                animationOptions: ChartView.NoAnimation
                title: qsTr("Memory (MiB) against drift from the reference (mean KL divergence)")
                ValueAxis { id: axisX; min: 0; max: 1; titleText: qsTr("memory (MiB)") }
                ValueAxis { id: axisY; min: 0; max: 0.001; titleText: qsTr("mean KL divergence") }
            }
            RowLayout {
                visible: chart.visible
                Button { text: qsTr("Save chart…"); onClicked: saveDialog.open() }
                Label {
                    color: Theme.textMuted
                    text: dialog.compare && dialog.compare.chartPath.length > 0
                          ? qsTr("Also saved as %1").arg(dialog.compare.chartPath) : ""
                }
            }
            // The answers side by side: one row per prompt, one column per level.
            Repeater {
                model: dialog.compare ? dialog.compare.prompts : []
                delegate: ColumnLayout {
                    id: answerRow
                    required property string modelData
                    required property int index
                    Layout.fillWidth: true
                    Label {
                        readonly property string category: dialog.compare && dialog.compare.promptCategories[answerRow.index]
                                                           ? dialog.compare.promptCategories[answerRow.index] : ""
                        text: (category.length > 0 ? "[" + category + "] " : "") + answerRow.modelData
                        textFormat: Text.PlainText
                        font.italic: true
                        wrapMode: Text.WordWrap
                        Layout.fillWidth: true
                        color: Theme.text
                    }
                    RowLayout {
                        Layout.fillWidth: true
                        Repeater {
                            model: dialog.compare ? dialog.compare.results : []
                            delegate: Label {
                                required property var modelData
                                Layout.fillWidth: true
                                Layout.preferredWidth: 1
                                wrapMode: Text.WordWrap
                                color: Theme.text
                                text: modelData.quant + ": " + (modelData.answers[answerRow.index] || "")
                                textFormat: Text.PlainText
                            }
                        }
                    }
                }
            }
        }
    }
}
