import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import Hearth.Ui

// A setting: title and explanation on the left, its control on the right.
// Wraps below the text when the window is narrow or the font is large.
GridLayout {
    id: row
    property string title
    property string description
    default property alias control: holder.data
    readonly property bool narrow: width < 560
    columns: narrow ? 1 : 2
    columnSpacing: 24
    rowSpacing: 6
    Layout.fillWidth: true

    ColumnLayout {
        Layout.fillWidth: true
        Layout.preferredWidth: 1
        spacing: 2
        Label {
            text: row.title
            color: Theme.text
            font.weight: Font.DemiBold
            wrapMode: Text.WordWrap
            Layout.fillWidth: true
        }
        Label {
            visible: row.description.length > 0
            text: row.description
            color: Theme.textMuted
            wrapMode: Text.WordWrap
            font.pointSize: Theme.fontSize * 0.9
            Layout.fillWidth: true
        }
    }
    ColumnLayout {
        id: holder
        Layout.fillWidth: row.narrow
        Layout.preferredWidth: row.narrow ? -1 : 300
        Layout.alignment: Qt.AlignVCenter | Qt.AlignRight
        spacing: 6
    }
}
