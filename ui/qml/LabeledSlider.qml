import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import Hearth.Ui

// A slider with its current value printed next to it.
RowLayout {
    id: root
    property alias from: slider.from
    property alias to: slider.to
    property alias stepSize: slider.stepSize
    property alias value: slider.value
    property string accessibleName
    // Formats the value for display.
    property var format: v => Number(v).toLocaleString(Qt.locale(), "f", 2)
    signal moved(real value)
    spacing: 10

    Slider {
        id: slider
        Layout.fillWidth: true
        snapMode: Slider.SnapAlways
        Accessible.name: root.accessibleName
        onMoved: root.moved(value)
    }
    Label {
        text: root.format(slider.value)
        color: Theme.text
        horizontalAlignment: Text.AlignRight
        Layout.minimumWidth: 72
        Accessible.ignored: true
    }
}
