import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import Hearth.Ui

// Conversations: new, search (storage full-text search with highlighted
// snippets), the list with pinned ones first, archive view and settings.
Rectangle {
    id: sidebar
    required property ChatController chat
    // Export and import; the menu is hidden without one (tests of the sidebar alone).
    property ArchiveController archive: null
    property bool settingsOpen: false
    signal newConversation()
    signal openConversation(var id)
    signal settingsRequested()
    signal modelsRequested()
    property bool modelsOpen: false
    property bool documentsOpen: false
    property bool documentsAvailable: false
    signal documentsRequested()

    function focusSearch() { searchField.forceActiveFocus(); searchField.selectAll() }

    color: Theme.sidebar

    ColumnLayout {
        anchors.fill: parent
        anchors.margins: 12
        spacing: 10

        RowLayout {
            Layout.fillWidth: true
            spacing: 8
            Image {
                source: Qt.resolvedUrl("../resources/icons/hearth.svg")
                sourceSize: Qt.size(28, 28)
                Layout.preferredWidth: 28
                Layout.preferredHeight: 28
                Accessible.ignored: true
            }
            Label {
                text: qsTr("Hearth")
                font.pointSize: Theme.fontSize * 1.25
                font.weight: Font.DemiBold
                color: Theme.text
                Layout.fillWidth: true
            }
            IconButton {
                iconName: "plus"
                tip: qsTr("New conversation (Ctrl+N)")
                onClicked: sidebar.newConversation()
            }
        }

        TextField {
            id: searchField
            Layout.fillWidth: true
            placeholderText: qsTr("Search conversations")
            Accessible.name: qsTr("Search conversations")
            text: sidebar.chat.searchQuery
            onTextEdited: sidebar.chat.searchQuery = text
            leftPadding: 34
            rightPadding: clearSearch.visible ? 34 : 10
            Keys.onDownPressed: (list.visible ? list : results).forceActiveFocus()
            Keys.onEscapePressed: { text = ""; sidebar.chat.searchQuery = "" }
            background: Rectangle {
                implicitHeight: 36
                radius: Theme.smallRadius
                color: Theme.surface
                border.color: searchField.activeFocus ? Theme.accent : Theme.border
                border.width: searchField.activeFocus ? 2 : 1
            }
            Image {
                source: Qt.resolvedUrl("../icons/search.svg")
                sourceSize: Qt.size(16, 16)
                anchors.left: parent.left
                anchors.leftMargin: 11
                anchors.verticalCenter: parent.verticalCenter
                opacity: 0.5
                Accessible.ignored: true
            }
            IconButton {
                id: clearSearch
                visible: searchField.text.length > 0
                iconName: "close"
                tip: qsTr("Clear search")
                anchors.right: parent.right
                anchors.verticalCenter: parent.verticalCenter
                scale: 0.8
                onClicked: { searchField.text = ""; sidebar.chat.searchQuery = "" }
            }
        }

        ListView {
            id: list
            Layout.fillWidth: true
            Layout.fillHeight: true
            visible: sidebar.chat.searchQuery.length === 0
            clip: true
            model: sidebar.chat.conversations
            keyNavigationEnabled: true
            activeFocusOnTab: true
            currentIndex: sidebar.chat.conversations.rowOf(sidebar.chat.currentConversationId)
            Accessible.role: Accessible.List
            Accessible.name: sidebar.chat.showArchived ? qsTr("Archived conversations") : qsTr("Conversations")
            ScrollBar.vertical: ScrollBar {}
            section.property: "section"
            section.delegate: Label {
                required property string section
                text: section === "pinned" ? qsTr("Pinned") : (sidebar.chat.showArchived ? qsTr("Archived") : qsTr("Recent"))
                color: Theme.textMuted
                font.pointSize: Theme.fontSize * 0.85
                font.weight: Font.DemiBold
                topPadding: 10
                bottomPadding: 4
                leftPadding: 8
            }
            delegate: ConversationDelegate {
                width: ListView.view.width
                chat: sidebar.chat
                current: conversationId === sidebar.chat.currentConversationId
                onActivated: sidebar.openConversation(conversationId)
            }

            Label {
                anchors.centerIn: parent
                width: parent.width - 24
                visible: list.count === 0
                horizontalAlignment: Text.AlignHCenter
                wrapMode: Text.WordWrap
                color: Theme.textMuted
                text: sidebar.chat.showArchived ? qsTr("No archived conversations.")
                                                : qsTr("Your conversations will appear here.")
            }
        }

        ListView {
            id: results
            Layout.fillWidth: true
            Layout.fillHeight: true
            visible: !list.visible
            clip: true
            model: sidebar.chat.searchResults
            keyNavigationEnabled: true
            activeFocusOnTab: true
            Accessible.role: Accessible.List
            Accessible.name: qsTr("Search results")
            ScrollBar.vertical: ScrollBar {}
            delegate: ItemDelegate {
                id: hit
                required property var conversationId
                required property string title
                required property string snippet
                required property int index
                width: ListView.view.width
                highlighted: ListView.isCurrentItem && results.activeFocus
                Accessible.name: qsTr("%1: %2").arg(title).arg(snippetLabel.text.replace(/<[^>]*>/g, ""))
                onClicked: sidebar.openConversation(conversationId)
                Keys.onReturnPressed: sidebar.openConversation(conversationId)
                background: Rectangle {
                    radius: Theme.smallRadius
                    color: hit.highlighted || hit.hovered ? Theme.hover : "transparent"
                }
                contentItem: ColumnLayout {
                    spacing: 2
                    Label {
                        text: hit.title
                        elide: Text.ElideRight
                        font.weight: Font.DemiBold
                        color: Theme.text
                        Layout.fillWidth: true
                    }
                    Label {
                        id: snippetLabel
                        text: hit.snippet
                        textFormat: Text.StyledText
                        wrapMode: Text.WordWrap
                        maximumLineCount: 2
                        elide: Text.ElideRight
                        color: Theme.textMuted
                        font.pointSize: Theme.fontSize * 0.9
                        Layout.fillWidth: true
                    }
                }
            }
            Label {
                anchors.centerIn: parent
                visible: results.count === 0
                color: Theme.textMuted
                text: qsTr("No matches")
            }
        }

        Rectangle {
            Layout.fillWidth: true
            Layout.preferredHeight: 1
            color: Theme.border
        }

        RowLayout {
            Layout.fillWidth: true
            spacing: 4
            ToolButton {
                id: archiveToggle
                text: sidebar.chat.showArchived ? qsTr("Back to conversations") : qsTr("Archived")
                icon.source: Qt.resolvedUrl("../icons/" + (sidebar.chat.showArchived ? "back" : "archive") + ".svg")
                icon.color: Theme.textMuted
                icon.width: 16
                icon.height: 16
                Accessible.name: text
                onClicked: sidebar.chat.showArchived = !sidebar.chat.showArchived
                Layout.fillWidth: true
                contentItem: RowLayout {
                    spacing: 8
                    Image {
                        source: archiveToggle.icon.source
                        sourceSize: Qt.size(16, 16)
                        opacity: 0.6
                        Accessible.ignored: true
                    }
                    Label {
                        text: archiveToggle.text
                        color: Theme.textMuted
                        Layout.fillWidth: true
                        elide: Text.ElideRight
                    }
                }
                background: Rectangle {
                    radius: Theme.smallRadius
                    color: archiveToggle.hovered ? Theme.hover : "transparent"
                    border.width: archiveToggle.visualFocus ? 2 : 0
                    border.color: Theme.accent
                }
            }
            Loader {
                active: sidebar.archive !== null
                visible: active
                sourceComponent: ArchiveMenu {
                    archive: sidebar.archive
                    chat: sidebar.chat
                }
            }
            IconButton {
                visible: sidebar.documentsAvailable
                objectName: "documentsButton"
                iconName: "archive"
                tip: qsTr("Documents")
                checkable: false
                iconColor: sidebar.documentsOpen ? Theme.accent : Theme.textMuted
                onClicked: sidebar.documentsRequested()
            }
            IconButton {
                iconName: "models"
                tip: qsTr("Models (Ctrl+M)")
                checkable: false
                iconColor: sidebar.modelsOpen ? Theme.accent : Theme.textMuted
                onClicked: sidebar.modelsRequested()
            }
            IconButton {
                iconName: "settings"
                tip: qsTr("Settings (Ctrl+,)")
                checkable: false
                iconColor: sidebar.settingsOpen ? Theme.accent : Theme.textMuted
                onClicked: sidebar.settingsRequested()
            }
        }
    }
}
