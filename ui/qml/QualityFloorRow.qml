import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import Hearth.Ui

// The quality floor a recommended quant level must meet (a typed setting,
// kept by the compare controller): top-1 agreement with the best level in
// percent, or the largest mean KL divergence; said in plain words beside it.
// Shown in Settings and on the Compare levels page; both edit the same value.
RowLayout {
    id: row
    property QtObject compare: null
    enabled: !!compare
    Label { text: qsTr("Quality floor:"); color: Theme.text }
    ComboBox {
        objectName: "qualityFloorKind"
        model: [qsTr("answers agree (top-1 %)"), qsTr("drift (mean KL divergence)")]
        currentIndex: row.compare && row.compare.floorKind === "kld" ? 1 : 0
        Accessible.name: qsTr("Quality floor measure")
        onActivated: index => row.compare.floorKind = index === 1 ? "kld" : "top1"
    }
    TextField {
        objectName: "qualityFloorValue"
        implicitWidth: 90
        text: row.compare ? String(row.compare.floorValue) : ""
        validator: DoubleValidator { bottom: 0 }
        Accessible.name: qsTr("Quality floor value")
        onEditingFinished: row.compare.floorValue = Number(text)
    }
    Label {
        Layout.fillWidth: true
        wrapMode: Text.WordWrap
        color: Theme.textMuted
        text: row.compare ? row.compare.floorText : ""
    }
}
