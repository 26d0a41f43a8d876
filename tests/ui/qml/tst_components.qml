import QtQuick
import QtQuick.Controls
import QtTest
import Hearth.Ui

// The small components of the chat view, checked in isolation.
Item {
    id: root
    width: 600
    height: 400

    BranchSwitcher {
        id: switcher
        index: 2
        count: 3
    }
    SignalSpy { id: previousSpy; target: switcher; signalName: "previous" }
    SignalSpy { id: nextSpy; target: switcher; signalName: "next" }

    ContextGauge {
        id: gauge
        width: 300
        used: 1024
        maximum: 4096
        markers: [ { position: 0.25, kind: "dropped", text: "2 earlier turns dropped" } ]
    }

    CodeBlock {
        id: code
        width: 400
        code: "print(1)\nprint(2)"
        language: "python"
    }
    SignalSpy { id: copySpy; target: code; signalName: "copyRequested" }

    LabeledSlider {
        id: slider
        width: 300
        from: 256
        to: 8192
        stepSize: 256
        value: 1000
        format: v => v + " tokens"
    }

    TestCase {
        name: "Components"
        when: windowShown

        function findButton(item, name) {
            if (item.Accessible && item.Accessible.name === name && item.clicked !== undefined)
                return item
            for (let i = 0; i < item.children.length; ++i) {
                const found = findButton(item.children[i], name)
                if (found) return found
            }
            return null
        }

        function test_branchSwitcherArrows() {
            const prev = findButton(switcher, "Previous version")
            const next = findButton(switcher, "Next version")
            verify(prev && next)
            verify(prev.enabled && next.enabled)
            prev.clicked()
            next.clicked()
            compare(previousSpy.count, 1)
            compare(nextSpy.count, 1)
            switcher.index = 3
            verify(!next.enabled)
            switcher.index = 1
            verify(!prev.enabled)
            compare(switcher.Accessible.name, "Version 1 of 3")
        }

        function test_gaugeFraction() {
            compare(gauge.fraction, 0.25)
            gauge.used = 8000
            compare(gauge.fraction, 1)  // clamped at the maximum
            gauge.maximum = 0
            compare(gauge.fraction, 0)
        }

        function test_codeBlockCopy() {
            const button = findButton(code, "Copy code")
            verify(button)
            button.clicked()
            compare(copySpy.count, 1)
            compare(copySpy.signalArguments[0][0], "print(1)\nprint(2)")
            verify(code.copied)
            compare(code.Accessible.name, "python code")
        }

        function findLabel(item, text) {
            if (item.text === text) return item
            for (let i = 0; i < item.children.length; ++i) {
                const found = findLabel(item.children[i], text)
                if (found) return found
            }
            return null
        }

        function test_sliderShowsFormattedValue() {
            slider.value = 1024
            verify(findLabel(slider, "1024 tokens") !== null)
            slider.value = 2048
            verify(findLabel(slider, "2048 tokens") !== null)
            verify(findLabel(slider, "1024 tokens") === null)
        }
    }
}
