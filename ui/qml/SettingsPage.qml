import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import Hearth.Ui

// Global settings: model and memory, conversation defaults, sampling,
// performance and appearance. Changes apply at once; those that need a model
// reload say so and apply with one click.
Item {
    id: page
    required property SettingsController settings
    required property ModelController model
    // Settings -> Local API (absent in views that do not offer it).
    property LocalApiController localApi: null
    property SpeculationController speculation: null
    // Settings -> Backends (absent in views that do not offer it).
    property BackendsController backends: null
    property AutoModelController autoModel: null
    // Compare levels' controller: the quality floor its recommendation uses.
    property QtObject compare: null
    property string appVersion
    signal backRequested()

    Keys.onEscapePressed: backRequested()

    component Section: Rectangle {
        id: section
        property string title
        default property alias content: body.data
        Layout.fillWidth: true
        implicitHeight: body.implicitHeight + heading.implicitHeight + 44
        radius: Theme.radius
        color: Theme.surface
        border.color: Theme.border
        Accessible.role: Accessible.Grouping
        Accessible.name: title
        Label {
            id: heading
            x: 20
            y: 16
            text: section.title
            font.pointSize: Theme.fontSize * 1.15
            font.weight: Font.DemiBold
            color: Theme.text
        }
        ColumnLayout {
            id: body
            anchors.top: heading.bottom
            anchors.topMargin: 14
            anchors.left: parent.left
            anchors.right: parent.right
            anchors.leftMargin: 20
            anchors.rightMargin: 20
            spacing: 18
        }
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

            Item { Layout.preferredHeight: 8 }

            RowLayout {
                Layout.fillWidth: true
                IconButton {
                    iconName: "back"
                    tip: qsTr("Back to the conversation (Esc)")
                    onClicked: page.backRequested()
                }
                Label {
                    text: qsTr("Settings")
                    font.pointSize: Theme.fontSize * 1.6
                    font.weight: Font.DemiBold
                    color: Theme.text
                    Layout.fillWidth: true
                }
                Button {
                    text: qsTr("Restore defaults")
                    flat: true
                    onClicked: page.settings.resetToDefaults()
                }
            }

            // Reload banner: load-affecting settings differ from the loaded model's.
            Rectangle {
                Layout.fillWidth: true
                visible: page.settings.needsReload
                implicitHeight: reloadRow.implicitHeight + 20
                radius: Theme.radius
                color: Theme.accentSoft
                RowLayout {
                    id: reloadRow
                    anchors.fill: parent
                    anchors.margins: 10
                    anchors.leftMargin: 16
                    Label {
                        text: qsTr("Some changes take effect after the model is reloaded.")
                        color: Theme.text
                        wrapMode: Text.WordWrap
                        Layout.fillWidth: true
                    }
                    Button {
                        text: qsTr("Reload now")
                        highlighted: true
                        enabled: !page.model.loading
                        onClicked: page.settings.applyAndReload()
                    }
                }
            }

            Section {
                title: qsTr("Model and memory")

                SettingRow {
                    title: page.model.ready ? page.model.modelName : qsTr("No model loaded")
                    description: page.model.ready ? qsTr("%1 · %2 · up to %3 tokens of context")
                                                     .arg(page.model.quant || qsTr("unknown type"))
                                                     .arg(page.model.backend)
                                                     .arg(page.model.contextMax)
                                                  : qsTr("Load the demo model, or pick a model from the model picker.")
                    Button {
                        Layout.alignment: Qt.AlignRight
                        text: qsTr("Load demo model")
                        visible: page.model.demoAvailable
                        enabled: !page.model.loading
                        onClicked: page.model.loadDemo()
                    }
                }

                SettingRow {
                    title: qsTr("Context length")
                    description: qsTr("How much of the conversation the model sees at once, in tokens.")
                    LabeledSlider {
                        Layout.fillWidth: true
                        accessibleName: qsTr("Context length")
                        from: page.settings.minContext
                        to: page.settings.maxContext
                        stepSize: 256
                        value: page.settings.contextLength
                        format: v => qsTr("%1 tokens").arg(Number(v).toLocaleString(Qt.locale(), "f", 0))
                        onMoved: v => page.settings.contextLength = v
                    }
                }

                SettingRow {
                    title: qsTr("Memory budget")
                    description: qsTr("The most memory Hearth may use for the model, its cache and working space.")
                    LabeledSlider {
                        Layout.fillWidth: true
                        accessibleName: qsTr("Memory budget")
                        from: page.settings.minBudgetMib
                        to: page.settings.maxBudgetMib
                        stepSize: 256
                        value: page.settings.memoryBudgetMib
                        format: v => page.settings.formatBytes(v * 1024 * 1024)
                        onMoved: v => page.settings.memoryBudgetMib = v
                    }
                }

                MemoryBar {
                    Layout.fillWidth: true
                    settings: page.settings
                }

                SettingRow {
                    title: qsTr("KV cache type")
                    description: qsTr("Q8_0 halves the cache's memory with a barely measurable loss of quality.")
                    ComboBox {
                        Layout.fillWidth: true
                        Accessible.name: qsTr("KV cache type")
                        textRole: "text"
                        valueRole: "value"
                        model: [ { text: qsTr("F16 (exact)"), value: "f16" },
                                 { text: qsTr("Q8_0 (compact)"), value: "q8_0" } ]
                        currentIndex: indexOfValue(page.settings.kvCacheType)
                        onActivated: page.settings.kvCacheType = currentValue
                    }
                }

                SettingRow {
                    title: qsTr("When the context is full")
                    description: page.settings.overflowExplanation(page.settings.overflowPolicy)
                    ComboBox {
                        Layout.fillWidth: true
                        Accessible.name: qsTr("Overflow policy")
                        textRole: "text"
                        valueRole: "value"
                        model: [ { text: qsTr("Stop"), value: "stop" },
                                 { text: qsTr("Drop oldest turns"), value: "evict" },
                                 { text: qsTr("Summarize oldest turns"), value: "summarize" } ]
                        currentIndex: indexOfValue(page.settings.overflowPolicy)
                        onActivated: page.settings.overflowPolicy = currentValue
                    }
                }
            }

            Section {
                title: qsTr("Conversation")

                SettingRow {
                    title: qsTr("System prompt")
                    description: qsTr("Instructions the model reads before every conversation.")
                    ComboBox {
                        Layout.fillWidth: true
                        Accessible.name: qsTr("System prompt preset")
                        model: page.settings.presetNames
                        displayText: qsTr("Apply a preset…")
                        onActivated: index => page.settings.applyPreset(index)
                    }
                }
                TextArea {
                    Layout.fillWidth: true
                    Layout.preferredHeight: Math.max(implicitHeight, 84)
                    wrapMode: TextEdit.Wrap
                    text: page.settings.systemPrompt
                    Accessible.name: qsTr("System prompt")
                    onEditingFinished: page.settings.systemPrompt = text
                    background: Rectangle {
                        radius: Theme.smallRadius
                        color: Theme.window
                        border.color: parent.activeFocus ? Theme.accent : Theme.border
                    }
                }
            }

            Section {
                title: qsTr("Sampling")

                SettingRow {
                    title: qsTr("Temperature")
                    description: qsTr("Higher is more varied, lower is more focused; 0 always picks the likeliest word.")
                    LabeledSlider {
                        Layout.fillWidth: true
                        accessibleName: qsTr("Temperature")
                        from: 0; to: 2; stepSize: 0.05
                        value: page.settings.temperature
                        onMoved: v => page.settings.temperature = v
                    }
                }
                SettingRow {
                    title: qsTr("Top-k")
                    description: qsTr("Consider only the k likeliest tokens (0 turns it off).")
                    LabeledSlider {
                        Layout.fillWidth: true
                        accessibleName: qsTr("Top-k")
                        from: 0; to: 200; stepSize: 1
                        value: page.settings.topK
                        format: v => Number(v).toFixed(0)
                        onMoved: v => page.settings.topK = v
                    }
                }
                SettingRow {
                    title: qsTr("Top-p")
                    description: qsTr("Consider the smallest set of tokens whose probabilities add up to p.")
                    LabeledSlider {
                        Layout.fillWidth: true
                        accessibleName: qsTr("Top-p")
                        from: 0; to: 1; stepSize: 0.01
                        value: page.settings.topP
                        onMoved: v => page.settings.topP = v
                    }
                }
                SettingRow {
                    title: qsTr("Min-p")
                    description: qsTr("Drop tokens less likely than this fraction of the likeliest one.")
                    LabeledSlider {
                        Layout.fillWidth: true
                        accessibleName: qsTr("Min-p")
                        from: 0; to: 0.5; stepSize: 0.01
                        value: page.settings.minP
                        onMoved: v => page.settings.minP = v
                    }
                }
                SettingRow {
                    title: qsTr("Repeat penalty")
                    description: qsTr("Discourages repeating recent tokens (1 turns it off).")
                    LabeledSlider {
                        Layout.fillWidth: true
                        accessibleName: qsTr("Repeat penalty")
                        from: 1; to: 2; stepSize: 0.01
                        value: page.settings.repeatPenalty
                        onMoved: v => page.settings.repeatPenalty = v
                    }
                }
                SettingRow {
                    title: qsTr("Seed")
                    description: qsTr("The same seed reproduces a reply exactly; random picks a new one each time.")
                    RowLayout {
                        Layout.fillWidth: true
                        CheckBox {
                            id: randomSeed
                            text: qsTr("Random")
                            checked: page.settings.seed < 0
                            onToggled: page.settings.seed = checked ? -1 : 42
                        }
                        SpinBox {
                            Layout.fillWidth: true
                            enabled: !randomSeed.checked
                            from: 0; to: 2147483647
                            editable: true
                            value: Math.max(0, page.settings.seed)
                            Accessible.name: qsTr("Seed")
                            onValueModified: page.settings.seed = value
                        }
                    }
                }
                SettingRow {
                    title: qsTr("Reuse repeated answers")
                    description: qsTr("At temperature 0 the same question to the same model gives the same answer: "
                                      + "keep answers and give them again at once instead of running the model.")
                    Switch {
                        objectName: "responseCacheSwitch"
                        checked: page.settings.responseCache
                        Accessible.name: qsTr("Reuse repeated answers")
                        onToggled: page.settings.responseCache = checked
                    }
                }
            }

            Section {
                title: qsTr("Performance")

                SettingRow {
                    title: qsTr("Threads")
                    description: qsTr("CPU threads for inference; Automatic uses one per core (this computer has %1).").arg(page.settings.hardwareThreads)
                    SpinBox {
                        Layout.fillWidth: true
                        from: 0; to: page.settings.hardwareThreads
                        value: page.settings.threads
                        editable: true
                        textFromValue: v => v === 0 ? qsTr("Automatic") : String(v)
                        valueFromText: t => t === qsTr("Automatic") ? 0 : parseInt(t)
                        Accessible.name: qsTr("Threads")
                        onValueModified: page.settings.threads = value
                    }
                }
                SettingRow {
                    title: qsTr("GPU device")
                    description: qsTr("Leave empty to let Hearth pick the best Vulkan device.")
                    TextField {
                        Layout.fillWidth: true
                        text: page.settings.gpuDevice
                        placeholderText: qsTr("Automatic")
                        Accessible.name: qsTr("GPU device")
                        onEditingFinished: page.settings.gpuDevice = text
                    }
                }
                SettingRow {
                    title: qsTr("Layers on the GPU")
                    description: qsTr("Automatic puts as many layers on the GPU as fit; 0 runs on the CPU only.")
                    RowLayout {
                        Layout.fillWidth: true
                        CheckBox {
                            id: autoLayers
                            text: qsTr("Automatic")
                            checked: page.settings.gpuLayers < 0
                            onToggled: page.settings.gpuLayers = checked ? -1 : 0
                        }
                        SpinBox {
                            Layout.fillWidth: true
                            enabled: !autoLayers.checked
                            from: 0; to: 1024
                            editable: true
                            value: Math.max(0, page.settings.gpuLayers)
                            Accessible.name: qsTr("Layers on the GPU")
                            onValueModified: page.settings.gpuLayers = value
                        }
                    }
                }
            }

            Section {
                title: qsTr("Speculative decoding")
                visible: page.speculation !== null
                SpeculationSettings {
                    spec: page.speculation
                }
            }

            Section {
                title: qsTr("Backends")
                visible: page.backends !== null
                Loader {
                    Layout.fillWidth: true
                    active: page.backends !== null
                    sourceComponent: BackendsSettings { backends: page.backends }
                }
            }

            Section {
                title: qsTr("Auto model")
                visible: page.autoModel !== null
                Loader {
                    Layout.fillWidth: true
                    active: page.autoModel !== null
                    sourceComponent: AutoModelSettings { auto: page.autoModel }
                }
            }

            Section {
                title: qsTr("Quality floor")
                visible: page.compare !== null
                Label {
                    Layout.fillWidth: true
                    wrapMode: Text.WordWrap
                    color: Theme.textMuted
                    text: qsTr("Compare levels (on a model's card in the picker) recommends the smallest quant level that fits this computer and stays this close to the best level.")
                }
                QualityFloorRow {
                    objectName: "settingsQualityFloor"
                    Layout.fillWidth: true
                    compare: page.compare
                }
            }

            Section {
                title: qsTr("Local API")
                visible: page.localApi !== null
                LocalApiSettings {
                    api: page.localApi
                }
            }

            Section {
                title: qsTr("Appearance")

                SettingRow {
                    title: qsTr("Theme")
                    ComboBox {
                        Layout.fillWidth: true
                        Accessible.name: qsTr("Theme")
                        textRole: "text"
                        valueRole: "value"
                        model: [ { text: qsTr("Follow the system"), value: "system" },
                                 { text: qsTr("Light"), value: "light" },
                                 { text: qsTr("Dark"), value: "dark" } ]
                        currentIndex: indexOfValue(page.settings.theme)
                        onActivated: page.settings.theme = currentValue
                    }
                }
                SettingRow {
                    title: qsTr("Text size")
                    LabeledSlider {
                        Layout.fillWidth: true
                        accessibleName: qsTr("Text size")
                        from: 8; to: 24; stepSize: 1
                        value: page.settings.fontPointSize
                        format: v => qsTr("%1 pt").arg(v)
                        onMoved: v => page.settings.fontPointSize = v
                    }
                }
            }

            Label {
                Layout.fillWidth: true
                Layout.bottomMargin: 24
                text: qsTr("Hearth %1. Demo model: stories260K by Andrej Karpathy, trained on TinyStories (MIT license).").arg(page.appVersion)
                color: Theme.textMuted
                wrapMode: Text.WordWrap
                horizontalAlignment: Text.AlignHCenter
                font.pointSize: Theme.fontSize * 0.85
            }
        }
    }
}
