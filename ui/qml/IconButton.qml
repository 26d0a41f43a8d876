import QtQuick
import QtQuick.Controls
import Hearth.Ui

// A flat icon-only button with a tooltip; the tooltip text doubles as the
// accessible name so screen readers announce what the icon means.
ToolButton {
    id: control
    property string iconName
    property string tip
    property color iconColor: Theme.textMuted

    icon.source: iconName ? Qt.resolvedUrl("../icons/" + iconName + ".svg") : ""
    icon.color: enabled ? (hovered || activeFocus ? Theme.text : iconColor) : Theme.border
    icon.width: 18
    icon.height: 18
    display: AbstractButton.IconOnly
    focusPolicy: Qt.StrongFocus
    Accessible.name: tip
    ToolTip.visible: hovered && tip.length > 0
    ToolTip.delay: 500
    ToolTip.text: tip
    padding: 6
    background: Rectangle {
        implicitWidth: 32
        implicitHeight: 32
        radius: Theme.smallRadius
        color: control.down ? Theme.selection : (control.hovered ? Theme.hover : "transparent")
        border.width: control.visualFocus ? 2 : 0
        border.color: Theme.accent
    }
}
