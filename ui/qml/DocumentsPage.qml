import QtQuick
import QtQuick.Controls
import QtQuick.Dialogs
import QtQuick.Layouts
import Hearth.Ui

// Documents: libraries of files and folders the chat can read from. Add a
// folder or a file, watch it being indexed (pause, resume, cancel), attach a
// library to the open conversation so each question is answered with numbered
// sources from it.
Item {
    id: page
    required property DocumentsController documents
    // The open conversation (attaching needs one).
    property bool conversationOpen: false
    signal backRequested()

    Keys.onEscapePressed: backRequested()

    FolderDialog {
        id: folderDialog
        title: qsTr("Add a folder of documents")
        property var library: -1
        onAccepted: library > 0 ? page.documents.addPath(library, selectedFolder)
                                : page.documents.createLibrary(nameField.text, selectedFolder)
    }
    FileDialog {
        id: fileDialog
        title: qsTr("Add a document")
        property var library: -1
        nameFilters: [qsTr("Documents (*.txt *.md *.markdown *.rst *.html *.htm *.pdf *.docx *.c *.cpp *.h *.py *.js *.ts *.json *.yaml *.toml)"),
                      qsTr("All files (*)")]
        onAccepted: library > 0 ? page.documents.addPath(library, selectedFile)
                                : page.documents.createLibrary(nameField.text, selectedFile)
    }

    FileDialog {
        id: embeddingDialog
        title: qsTr("Choose an embedding model")
        nameFilters: [qsTr("GGUF models (*.gguf)")]
        onAccepted: page.documents.setEmbeddingModel(selectedFile)
    }

    ScrollView {
        id: scroller
        anchors.fill: parent
        contentWidth: availableWidth
        ScrollBar.horizontal.policy: ScrollBar.AlwaysOff

        ColumnLayout {
            width: Math.min(scroller.availableWidth - 48, Theme.contentMaxWidth)
            x: (scroller.availableWidth - width) / 2
            spacing: 16

            Item { Layout.preferredHeight: 12 }
            RowLayout {
                Layout.fillWidth: true
                IconButton {
                    iconName: "back"
                    tip: qsTr("Back to the chat (Escape)")
                    onClicked: page.backRequested()
                }
                Label {
                    text: qsTr("Documents")
                    font.pointSize: Theme.fontSize * 1.5
                    font.weight: Font.DemiBold
                    color: Theme.text
                    Layout.fillWidth: true
                }
            }

            Label {
                visible: !page.documents.available
                Layout.fillWidth: true
                wrapMode: Text.Wrap
                text: qsTr("Documents are kept in the conversation database, which could not be opened.")
                color: Theme.danger
            }

            // The embedding model: meaning search next to keyword search.
            RowLayout {
                Layout.fillWidth: true
                Label {
                    Layout.fillWidth: true
                    wrapMode: Text.Wrap
                    text: page.documents.embeddingLoading ? qsTr("Loading the embedding model…")
                          : page.documents.embeddingModel.length > 0
                            ? qsTr("Embedding model: %1 (keyword and meaning search)").arg(page.documents.embeddingModel)
                            : qsTr("No embedding model: keyword search only. Choose one (for example nomic-embed-text or Qwen3-Embedding from the model catalog) to find passages by meaning.")
                    color: Theme.textMuted
                }
                Button {
                    text: qsTr("Choose…")
                    onClicked: embeddingDialog.open()
                }
                Button {
                    visible: page.documents.embeddingModel.length > 0
                    text: qsTr("Keyword only")
                    onClicked: page.documents.setEmbeddingModel("")
                }
            }
            Label {
                visible: page.documents.embeddingError.length > 0
                Layout.fillWidth: true
                wrapMode: Text.Wrap
                text: page.documents.embeddingError
                color: Theme.danger
            }

            // A new library from a folder or a file.
            RowLayout {
                Layout.fillWidth: true
                enabled: page.documents.available
                TextField {
                    id: nameField
                    Layout.fillWidth: true
                    placeholderText: qsTr("Library name (optional)")
                    Accessible.name: qsTr("Name of the new library")
                }
                Button {
                    text: qsTr("Add folder…")
                    onClicked: { folderDialog.library = -1; folderDialog.open() }
                }
                Button {
                    text: qsTr("Add file…")
                    onClicked: { fileDialog.library = -1; fileDialog.open() }
                }
            }

            // The run in progress.
            ColumnLayout {
                visible: page.documents.indexing
                Layout.fillWidth: true
                spacing: 4
                ProgressBar {
                    objectName: "indexProgress"
                    Layout.fillWidth: true
                    from: 0
                    to: Math.max(1, page.documents.filesTotal)
                    value: page.documents.filesDone
                    Accessible.name: qsTr("Indexing progress")
                }
                RowLayout {
                    Layout.fillWidth: true
                    Label {
                        Layout.fillWidth: true
                        elide: Text.ElideMiddle
                        color: Theme.textMuted
                        text: (page.documents.paused ? qsTr("Paused · ") : "")
                              + qsTr("%1 of %2 files").arg(page.documents.filesDone).arg(page.documents.filesTotal)
                              + (page.documents.currentFile.length > 0 ? " · " + page.documents.currentFile : "")
                    }
                    Button {
                        text: page.documents.paused ? qsTr("Resume") : qsTr("Pause")
                        onClicked: page.documents.paused ? page.documents.resume() : page.documents.pause()
                    }
                    Button {
                        text: qsTr("Cancel")
                        onClicked: page.documents.cancel()
                    }
                }
            }
            Label {
                visible: page.documents.lastError.length > 0
                Layout.fillWidth: true
                wrapMode: Text.Wrap
                text: page.documents.lastError
                color: Theme.danger
            }

            Repeater {
                model: page.documents.libraries
                delegate: Rectangle {
                    id: card
                    required property var modelData
                    readonly property bool isAttached: page.documents.attached.indexOf(modelData.id) >= 0
                    Layout.fillWidth: true
                    implicitHeight: cardColumn.implicitHeight + 24
                    radius: Theme.radius
                    color: Theme.surface
                    border.color: isAttached ? Theme.accent : Theme.border

                    ColumnLayout {
                        id: cardColumn
                        anchors.fill: parent
                        anchors.margins: 12
                        spacing: 6
                        RowLayout {
                            Layout.fillWidth: true
                            Label {
                                text: card.modelData.name
                                font.weight: Font.DemiBold
                                Layout.fillWidth: true
                                elide: Text.ElideRight
                            }
                            Button {
                                objectName: "attach" + card.modelData.id
                                text: card.isAttached ? qsTr("Detach") : qsTr("Use in this chat")
                                enabled: page.conversationOpen
                                ToolTip.visible: hovered && !page.conversationOpen
                                ToolTip.text: qsTr("Open a conversation first")
                                onClicked: card.isAttached ? page.documents.detach(card.modelData.id)
                                                           : page.documents.attach(card.modelData.id)
                            }
                        }
                        Label {
                            Layout.fillWidth: true
                            wrapMode: Text.Wrap
                            color: Theme.textMuted
                            text: qsTr("%1 files · %2 passages").arg(card.modelData.documents).arg(card.modelData.chunks)
                                  + (card.modelData.failed > 0 ? qsTr(" · %1 could not be read").arg(card.modelData.failed) : "")
                                  + (card.modelData.keywordOnly ? qsTr(" · keyword search (no embedding model)") : qsTr(" · keyword and meaning search"))
                        }
                        Repeater {
                            model: card.modelData.roots
                            delegate: Label {
                                required property string modelData
                                text: modelData
                                color: Theme.textMuted
                                elide: Text.ElideMiddle
                                Layout.fillWidth: true
                            }
                        }
                        RowLayout {
                            Button {
                                text: qsTr("Add folder…")
                                flat: true
                                onClicked: { folderDialog.library = card.modelData.id; folderDialog.open() }
                            }
                            Button {
                                text: qsTr("Re-index")
                                flat: true
                                onClicked: page.documents.reindex(card.modelData.id)
                            }
                            Button {
                                visible: card.modelData.keywordOnly && page.documents.embeddingModel.length > 0
                                text: qsTr("Rebuild with %1").arg(page.documents.embeddingModel)
                                flat: true
                                onClicked: page.documents.rebuildWithEmbeddingModel(card.modelData.id)
                            }
                            Button {
                                text: qsTr("Remove")
                                flat: true
                                onClicked: page.documents.removeLibrary(card.modelData.id)
                            }
                        }
                    }
                }
            }
            Item { Layout.preferredHeight: 24 }
        }
    }
}
