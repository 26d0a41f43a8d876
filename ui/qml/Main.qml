import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import Hearth.Ui

ApplicationWindow {
    id: window

    required property ChatController chat
    required property ModelController model
    required property SettingsController settings
    property ArchiveController archive: null
    // The app's downloader for the model picker; null: the picker offers no downloads.
    property ModelDownloads downloads: null
    // Settings -> Local API; null where the app does not offer it.
    property LocalApiController localApi: null
    property BackendsController backends: null
    property SpeculationController speculation: null
    property AutoModelController autoModel: null
    // The Documents page; null where the app does not offer it.
    property DocumentsController documents: null
    // Compare levels (app/compare/compare_controller.h): set by the app.
    property QtObject compare: null
    property string storageNotice: ""
    property string appVersion: Qt.application.version
    // Free VRAM of the GPU a load would use (0 without one), for the picker.
    property double gpuFreeBytes: 0
    // "chat", "settings", "models" or "documents"
    property string page: "chat"

    width: 1200
    height: 780
    minimumWidth: 760
    minimumHeight: 480
    visible: true
    title: page === "settings" ? qsTr("Settings — Hearth")
         : page === "models" ? qsTr("Models — Hearth")
         : page === "documents" ? qsTr("Documents — Hearth")
                               : (chat.currentConversationId >= 0 ? qsTr("%1 — Hearth").arg(chat.currentTitle)
                                                                  : qsTr("Hearth"))
    color: Theme.window
    font.pointSize: settings.fontPointSize

    SystemPalette { id: systemPalette }
    Binding {
        target: Theme
        property: "fontSize"
        value: window.settings.fontPointSize
    }
    Binding {
        target: Theme
        property: "dark"
        value: window.settings.theme === "dark"
               || (window.settings.theme === "system" && systemPalette.window.hslLightness < 0.5)
    }

    palette {
        window: Theme.window
        windowText: Theme.text
        base: Theme.surface
        alternateBase: Theme.surfaceAlt
        text: Theme.text
        button: Theme.surfaceAlt
        buttonText: Theme.text
        highlight: Theme.accent
        highlightedText: Theme.accentText
        placeholderText: Theme.textMuted
        toolTipBase: Theme.surface
        toolTipText: Theme.text
        mid: Theme.border
        midlight: Theme.hover
        light: Theme.surface
        dark: Theme.textMuted
        link: Theme.accent
    }

    function showSettings() { page = "settings" }
    function showModels() { page = "models" }
    function showDocuments() { if (documents) { documents.refresh(); page = "documents" } }
    function showChat() { page = "chat"; chatView.focusComposer() }

    Shortcut {
        sequence: StandardKey.New
        onActivated: { window.chat.newConversation(); window.showChat() }
    }
    Shortcut {
        sequence: StandardKey.Find
        onActivated: sidebar.focusSearch()
    }
    Shortcut {
        sequence: "Ctrl+,"
        onActivated: window.page === "settings" ? window.showChat() : window.showSettings()
    }
    Shortcut {
        sequence: "Escape"
        enabled: window.chat.generating
        onActivated: window.chat.stop()
    }
    Shortcut {
        sequence: "Ctrl+M"
        onActivated: window.page === "models" ? window.showChat() : window.showModels()
    }
    Shortcut {
        sequence: "Ctrl+L"
        onActivated: window.showChat()
    }

    RowLayout {
        anchors.fill: parent
        spacing: 0

        Sidebar {
            id: sidebar
            chat: window.chat
            archive: window.archive
            Layout.preferredWidth: Math.max(240, Math.min(320, window.width * 0.24))
            Layout.fillHeight: true
            settingsOpen: window.page === "settings"
            modelsOpen: window.page === "models"
            documentsOpen: window.page === "documents"
            documentsAvailable: window.documents !== null
            onDocumentsRequested: window.page === "documents" ? window.showChat() : window.showDocuments()
            onModelsRequested: window.page === "models" ? window.showChat() : window.showModels()
            onNewConversation: { window.chat.newConversation(); window.showChat() }
            onOpenConversation: id => { window.chat.openConversation(id); window.showChat() }
            onSettingsRequested: window.page === "settings" ? window.showChat() : window.showSettings()
        }

        Rectangle {
            Layout.fillHeight: true
            Layout.preferredWidth: 1
            color: Theme.border
        }

        ColumnLayout {
            Layout.fillWidth: true
            Layout.fillHeight: true
            spacing: 0

            Banner {
                text: window.model.notice
                tone: "warning"
                onDismissed: window.model.dismissNotice()
            }
            Banner {
                text: window.model.errorMessage
                tone: "danger"
                dismissable: false
            }
            Banner {
                text: window.chat.lastError
                tone: "danger"
                onDismissed: window.chat.dismissError()
            }
            Banner {
                text: window.archive && window.archive.lastMessage.length > 0 ? window.archive.lastMessage : ""
                tone: window.archive && window.archive.lastFailed ? "danger" : "info"
                onDismissed: window.archive.dismissMessage()
            }
            Banner {
                text: window.storageNotice
                tone: "info"
                dismissable: false
            }

            StackLayout {
                id: pages
                Layout.fillWidth: true
                Layout.fillHeight: true
                currentIndex: window.page === "settings" ? 2
                              : window.page === "models" ? 3
                              : window.page === "documents" && window.documents ? 4
                              : (!window.model.ready && window.chat.currentConversationId < 0 ? 0 : 1)

                WelcomePage {
                    model: window.model
                    onSettingsRequested: window.showSettings()
                    onModelsRequested: window.showModels()
                }
                ChatView {
                    id: chatView
                    chat: window.chat
                    model: window.model
                    autoModel: window.autoModel
                    onLoadDemoRequested: window.model.loadDemo()
                }
                SettingsPage {
                    settings: window.settings
                    model: window.model
                    localApi: window.localApi
                    speculation: window.speculation
                    backends: window.backends
                    autoModel: window.autoModel
                    compare: window.compare
                    appVersion: window.appVersion
                    onBackRequested: window.showChat()
                }
                PickerPage {
                    id: pickerPage
                    objectName: "pickerPage"
                    compare: window.compare
                    onBackRequested: window.showChat()
                    // The picker's context and KV settings follow the app's, so
                    // its fit estimates match what a load will allocate.
                    Component.onCompleted: {
                        picker.contextLength = Qt.binding(() => window.settings.contextLength)
                        picker.kvType = Qt.binding(() => window.settings.kvCacheType)
                        // The local API's slots hold KV of their own while it is on.
                        picker.apiSlots = Qt.binding(() => window.localApi && window.localApi.enabled
                                                           ? window.localApi.parallel : 0)
                        picker.apiContextLength = Qt.binding(() => window.localApi ? window.localApi.contextLength : 0)
                        picker.vramFreeBytes = Qt.binding(() => window.gpuFreeBytes)
                        picker.downloads = Qt.binding(() => window.downloads)
                    }
                    backends: window.backends
                    onRemoteModelChosen: path => {
                        window.model.load(path)
                        window.showChat()
                    }
                    Connections {
                        target: pickerPage.picker
                        function onLoadRequested(path, keepConversation) {
                            window.model.load(path)
                            window.showChat()
                        }
                        function onEmbeddingModelChosen(path) {
                            if (!window.documents) return
                            window.documents.setEmbeddingModel("file://" + path)
                            window.showDocuments()
                        }
                    }
                }
                Loader {
                    active: window.documents !== null
                    sourceComponent: DocumentsPage {
                        documents: window.documents
                        conversationOpen: window.chat.currentConversationId >= 0
                        onBackRequested: window.showChat()
                    }
                }
            }

            StatusLine {
                Layout.fillWidth: true
                chat: window.chat
                model: window.model
                localApi: window.localApi
            }
        }
    }

    UndoToast {
        chat: window.chat
        anchors.horizontalCenter: parent.horizontalCenter
        anchors.bottom: parent.bottom
        anchors.bottomMargin: 56
    }
}
