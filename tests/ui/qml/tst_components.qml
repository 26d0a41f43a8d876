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

    // Stands in for the chat controller: takes the user's choice as the new policy.
    OverflowPolicyControl {
        id: overflow
        y: 200
        policy: "default"
        defaultPolicy: "evict"
        onChosen: value => policy = value
    }
    SignalSpy { id: chosenSpy; target: overflow; signalName: "chosen" }

    // A reply's thinking as it streams in and after its answer started.
    ThinkingBlock {
        id: thinkingBlock
        y: 260
        width: 400
        reasoning: "Spelling it out: s, t, r, a, w, b, e, r, r, y."
        reasoningMs: 4200
        thinking: true
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

        function test_thinkingBlockFoldsWhenTheAnswerStarts() {
            // Thinking: open and saying so.
            compare(thinkingBlock.state, "thinking")
            verify(thinkingBlock.expanded)
            compare(thinkingBlock.headerText, "Thinking…")
            // The answer started: folded, with how long it took.
            thinkingBlock.thinking = false
            compare(thinkingBlock.state, "collapsed")
            verify(!thinkingBlock.expanded)
            compare(thinkingBlock.headerText, "Thought for 4 s")
            const header = findButton(thinkingBlock, "Thought for 4 s")
            verify(header)
            header.clicked()
            compare(thinkingBlock.state, "expanded")
            header.clicked()
            compare(thinkingBlock.state, "collapsed")
            thinkingBlock.reasoningMs = 300
            compare(thinkingBlock.headerText, "Thought for less than a second")
            // Folded by the user while thinking, it still folds (and stays so) when the answer starts.
            thinkingBlock.thinking = true
            findButton(thinkingBlock, "Thinking…").clicked()
            verify(!thinkingBlock.expanded)
            thinkingBlock.thinking = false
            verify(!thinkingBlock.expanded)
        }

        function test_sliderShowsFormattedValue() {
            slider.value = 1024
            verify(findLabel(slider, "1024 tokens") !== null)
            slider.value = 2048
            verify(findLabel(slider, "2048 tokens") !== null)
            verify(findLabel(slider, "1024 tokens") === null)
        }
    
        function findBox(item) {
            if (item.objectName === "overflowPolicyBox") return item
            for (let i = 0; i < item.children.length; ++i) {
                const found = findBox(item.children[i])
                if (found) return found
            }
            return null
        }

        function test_overflowControlShowsAndChangesThePolicy() {
            const box = findBox(overflow)
            verify(box)
            compare(box.Accessible.name, "When the context is full")
            verify(findLabel(overflow, "When the context is full:") !== null)
            // Unset: the default entry names the global policy it follows.
            compare(box.displayText, "Use default (Drop oldest turns)")
            overflow.defaultPolicy = "summarize"
            compare(box.displayText, "Use default (Summarize oldest turns)")

            // The user steps to the next entry with the keyboard.
            box.forceActiveFocus()
            keyClick(Qt.Key_Down)
            compare(chosenSpy.count, 1)
            compare(chosenSpy.signalArguments[0][0], "stop")
            compare(overflow.policy, "stop")
            compare(box.displayText, "Stop")
            keyClick(Qt.Key_Down)
            compare(chosenSpy.signalArguments[1][0], "evict")
            compare(box.displayText, "Drop oldest turns")

            // The owner changes the policy (another conversation opened): the box follows,
            // also when the global default changes meanwhile.
            overflow.policy = "summarize"
            overflow.defaultPolicy = "stop"
            compare(box.currentIndex, 3)
            compare(box.displayText, "Summarize oldest turns")
            overflow.policy = "default"
            compare(box.currentIndex, 0)
            compare(box.displayText, "Use default (Stop)")
            compare(chosenSpy.count, 2)  // changes by the owner are not choices
        }
}
}
