import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import Hearth.Ui

// "When the context is full: [Use default (Drop oldest turns) ▾]": the open
// conversation's own overflow policy, or the global one it follows. The box always
// shows the policy the next message will use.
RowLayout {
    id: control
    // "default", "stop", "evict" or "summarize" (ChatController.conversationOverflow).
    property string policy: "default"
    // The global setting "default" stands for: "stop", "evict" or "summarize".
    property string defaultPolicy: "evict"
    // The user picked another entry; the owner stores it and updates `policy`.
    signal chosen(string policy)
    spacing: 6

    // The entries, in the box's order; the texts come from optionText so the default
    // entry can name the global policy without rebuilding the model.
    readonly property var options: ["default", "stop", "evict", "summarize"]

    function policyName(value) {
        switch (value) {
        case "stop": return qsTr("Stop")
        case "evict": return qsTr("Drop oldest turns")
        case "summarize": return qsTr("Summarize oldest turns")
        }
        return value
    }
    function optionText(value) {
        return value === "default" ? qsTr("Use default (%1)").arg(policyName(defaultPolicy))
                                   : policyName(value)
    }

    Label {
        text: qsTr("When the context is full:")
        color: Theme.textMuted
        font.pointSize: Theme.fontSize * 0.9
        Accessible.ignored: true
    }
    ComboBox {
        id: box
        objectName: "overflowPolicyBox"
        Accessible.name: qsTr("When the context is full")
        Accessible.description: qsTr("Now: %1").arg(box.displayText)
        font.pointSize: Theme.fontSize * 0.9
        model: control.options
        currentIndex: control.options.indexOf(control.policy)
        displayText: control.optionText(control.policy)
        // Wide enough for the current choice; the popup fits the longest entry.
        Layout.minimumWidth: Math.ceil(shownText.advanceWidth + chrome)
        Layout.preferredWidth: Layout.minimumWidth
        readonly property real chrome: leftPadding + rightPadding
                                       + contentItem.leftPadding + contentItem.rightPadding + 2
        popup.width: Math.max(width, Math.ceil(Math.max(defaultText.advanceWidth, summarizeText.advanceWidth))
                                     + 2 * chrome)
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
            if (control.options[index] !== control.policy) control.chosen(control.options[index])
        }
        ToolTip.visible: hovered
        ToolTip.delay: 600
        ToolTip.text: qsTr("What this conversation does when it fills the model's context. The default is set in Settings.")

        TextMetrics { id: shownText; font: box.font; text: box.displayText }
        TextMetrics { id: defaultText; font: box.font; text: control.optionText("default") }
        TextMetrics { id: summarizeText; font: box.font; text: control.optionText("summarize") }
    }
}
