import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import Hearth.Ui

// "Thinking: [Model default ▾]": the open conversation's reasoning switch, for
// a model whose template offers one: on/off (Qwen3, SmolLM3) or an effort
// level (gpt-oss). The owner hides it when the loaded model offers none.
RowLayout {
    id: control
    // ChatController.conversationReasoning: "default" or one of `choices`.
    property string choice: "default"
    // ModelController.reasoningChoices: {"off", "on"} or {"low", "medium", "high"}.
    property var choices: []
    // The user picked another entry; the owner stores it and updates `choice`.
    signal chosen(string choice)
    spacing: 6

    readonly property var options: ["default"].concat(choices)

    function optionText(value) {
        switch (value) {
        case "default": return qsTr("Model default")
        case "off": return qsTr("Off")
        case "on": return qsTr("On")
        case "low": return qsTr("Low effort")
        case "medium": return qsTr("Medium effort")
        case "high": return qsTr("High effort")
        }
        return value
    }

    Label {
        text: qsTr("Thinking:")
        color: Theme.textMuted
        font.pointSize: Theme.fontSize * 0.9
        Accessible.ignored: true
    }
    ComboBox {
        id: box
        objectName: "reasoningBox"
        Accessible.name: qsTr("Thinking")
        Accessible.description: qsTr("Now: %1").arg(box.displayText)
        font.pointSize: Theme.fontSize * 0.9
        model: control.options
        // A stored choice the model does not offer (another model's) shows as the default.
        currentIndex: Math.max(0, control.options.indexOf(control.choice))
        displayText: control.optionText(control.options[currentIndex])
        Layout.minimumWidth: Math.ceil(shownText.advanceWidth + leftPadding + rightPadding
                                       + contentItem.leftPadding + contentItem.rightPadding + 2)
        Layout.preferredWidth: Layout.minimumWidth
        popup.width: Math.max(width, 160)
        flat: true
        delegate: ItemDelegate {
            required property string modelData
            required property int index
            width: ListView.view.width
            text: control.optionText(modelData)
            font: box.font
            highlighted: box.highlightedIndex === index
        }
        onActivated: index => {
            if (control.options[index] !== control.choice) control.chosen(control.options[index])
        }
        ToolTip.visible: hovered
        ToolTip.delay: 600
        ToolTip.text: qsTr("Whether the model thinks before it answers in this conversation, and how hard.")

        TextMetrics { id: shownText; font: box.font; text: box.displayText }
    }
}
