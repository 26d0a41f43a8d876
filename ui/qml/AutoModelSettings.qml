import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import Hearth.Ui

// Settings -> Auto model: a small model answers what it can and hands the rest
// to a large one (on this computer or an endpoint). The two thresholds are the
// small model's own scores; the log lists every decision with both, so they
// can be tuned from real questions.
ColumnLayout {
    id: root
    required property AutoModelController auto
    Layout.fillWidth: true
    spacing: 18

    Component.onCompleted: root.auto.refreshCandidates()

    component ModelChooser: ComboBox {
        property string path
        signal chosen(string path)
        Layout.fillWidth: true
        textRole: "label"
        valueRole: "path"
        model: root.auto.candidates
        currentIndex: indexOfValue(path)
        displayText: currentIndex >= 0 ? currentText : (path.length > 0 ? path : qsTr("Choose a model"))
        onActivated: chosen(currentValue)
    }

    SettingRow {
        title: qsTr("Small model")
        description: qsTr("Answers first: routine questions, quickly and cheaply.")
        ModelChooser {
            objectName: "autoSmallModel"
            Accessible.name: qsTr("Small model")
            path: root.auto.smallPath
            onChosen: p => root.auto.smallPath = p
        }
    }
    SettingRow {
        title: qsTr("Large model")
        description: qsTr("Gets code, long messages, long conversations, questions the small model does not "
                          + "know, and any reply you ask it for.")
        ModelChooser {
            objectName: "autoLargeModel"
            Accessible.name: qsTr("Large model")
            path: root.auto.largePath
            onChosen: p => root.auto.largePath = p
        }
    }
    SettingRow {
        title: qsTr("Familiarity needed")
        description: qsTr("How well the small model must know the kind of text asked about. Lower keeps more "
                          + "questions on the small model.")
        LabeledSlider {
            Layout.fillWidth: true
            accessibleName: qsTr("Familiarity needed")
            from: -12; to: -1; stepSize: 0.5
            value: root.auto.minFamiliarity
            format: v => Number(v).toLocaleString(Qt.locale(), "f", 1)
            onMoved: v => root.auto.minFamiliarity = v
        }
    }
    SettingRow {
        title: qsTr("Confidence needed")
        description: qsTr("How sure the small model must be of the start of its own answer. Lower keeps more "
                          + "answers on the small model.")
        LabeledSlider {
            Layout.fillWidth: true
            accessibleName: qsTr("Confidence needed")
            from: -6; to: -0.5; stepSize: 0.25
            value: root.auto.minConfidence
            format: v => Number(v).toLocaleString(Qt.locale(), "f", 2)
            onMoved: v => root.auto.minConfidence = v
        }
    }
    RowLayout {
        Button {
            objectName: "useAutoModel"
            text: root.auto.active ? qsTr("Reload Auto") : qsTr("Use Auto")
            enabled: root.auto.problem.length === 0
            onClicked: root.auto.use()
        }
        Label {
            Layout.fillWidth: true
            text: root.auto.problem.length > 0 ? root.auto.problem
                  : root.auto.active ? qsTr("In use: each reply says which model wrote it.") : ""
            color: Theme.textMuted
            wrapMode: Text.WordWrap
        }
    }
}
