import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import Hearth.Ui

// Model and quant, backend, speed of the last reply, and the context gauge.
Rectangle {
    id: status
    required property ChatController chat
    required property ModelController model
    // The local API's live figures when it runs (null where not offered).
    property LocalApiController localApi: null

    implicitHeight: row.implicitHeight + 10
    color: Theme.sidebar

    Rectangle {
        width: parent.width
        height: 1
        color: Theme.border
    }

    RowLayout {
        id: row
        anchors.fill: parent
        anchors.leftMargin: 14
        anchors.rightMargin: 14
        spacing: 14

        Label {
            id: modelLabel
            text: status.model.ready ? (status.model.quant ? qsTr("%1 · %2").arg(status.model.modelName).arg(status.model.quant)
                                                           : status.model.modelName)
                  : status.model.loading ? qsTr("Loading model…")
                  : qsTr("No model")
            font.weight: Font.DemiBold
            color: Theme.text
            elide: Text.ElideRight
            Layout.maximumWidth: 380
            Accessible.name: qsTr("Model: %1").arg(text)
        }
        ProgressBar {
            visible: status.model.loading
            value: status.model.progress
            Layout.preferredWidth: 140
            Accessible.name: qsTr("Loading progress")
        }
        Label {
            visible: status.model.ready && status.model.backend.length > 0
            text: status.model.backend
            color: Theme.textMuted
            elide: Text.ElideRight
            Layout.maximumWidth: 280
            Accessible.name: qsTr("Backend: %1").arg(text)
        }
        Label {
            // A model without a usable chat template: say which format is used instead.
            visible: status.model.ready && status.model.chatFormatNotice.length > 0
            text: qsTr("Chat format: %1").arg(status.model.chatFormatNotice)
            color: Theme.textMuted
            elide: Text.ElideRight
            Layout.maximumWidth: 320
            Accessible.name: text
        }
        Label {
            visible: status.chat.lastTokensPerSecond > 0
            text: qsTr("%1 tok/s").arg(status.chat.lastTokensPerSecond.toFixed(1))
            color: Theme.textMuted
            Accessible.name: qsTr("Speed of the last reply: %1 tokens per second").arg(status.chat.lastTokensPerSecond.toFixed(1))
        }
        Label {
            visible: status.chat.lastTtftMs > 0
            text: qsTr("TTFT %1 ms").arg(Math.round(status.chat.lastTtftMs))
            color: Theme.textMuted
            Accessible.name: qsTr("Time to first token: %1 milliseconds").arg(Math.round(status.chat.lastTtftMs))
        }
        Label {
            // Shown only when background work (a summary) made the reply wait noticeably.
            visible: status.chat.lastPauseMs >= 10
            text: qsTr("waited %1 ms").arg(Math.round(status.chat.lastPauseMs))
            color: Theme.textMuted
            Accessible.name: qsTr("The reply waited %1 milliseconds for background work").arg(Math.round(status.chat.lastPauseMs))
        }
        Label {
            // Speculative decoding in the last reply: drafts kept, speed-up.
            objectName: "speculationStatus"
            visible: status.chat.lastSpeculation.length > 0
            text: status.chat.lastSpeculation
            color: Theme.textMuted
            Accessible.name: qsTr("Speculative decoding: %1").arg(text)
        }
        Label {
            objectName: "localApiStatus"
            visible: status.localApi !== null && status.localApi.statusLine.length > 0
            text: status.localApi ? status.localApi.statusLine : ""
            color: Theme.textMuted
            Accessible.name: qsTr("Local API: %1").arg(text)
        }
        Item { Layout.fillWidth: true }
        ContextGauge {
            visible: status.model.ready
            used: status.chat.contextUsed
            maximum: status.chat.contextMax
            markers: status.chat.contextMarkers
            sources: status.chat.sourceTokens
            Layout.preferredWidth: 240
        }
    }
}
