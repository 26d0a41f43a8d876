#!/usr/bin/env python3
"""Writes tests/data/jinja/gguf_template_cases.json: the chat templates stored
in the test GGUF files (tokenizer.chat_template), rendered by the reference
(Jinja2 configured as in make_reference_cases.py) for the fixture
conversations, with BOS/EOS texts taken from the vocabulary as the engine
does. Run: python3 make_gguf_template_cases.py DATA_DIR"""
import json
import os
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from make_reference_cases import TOOLS, TOOL_MESSAGES, env  # noqa: E402

FILES = ["vocab/vocab-qwen3.gguf", "vocab/vocab-llama3.gguf", "vocab/ggml-vocab-phi-3.gguf",
         "models/tiny-llama-f16.gguf"]
WANTED = {"tokenizer.chat_template", "tokenizer.ggml.bos_token_id", "tokenizer.ggml.eos_token_id",
          "tokenizer.ggml.tokens"}


def read_metadata(path):
    """Reads the wanted GGUF metadata keys (little-endian GGUF v2/v3)."""
    sizes = {0: "<B", 1: "<b", 2: "<H", 3: "<h", 4: "<I", 5: "<i", 6: "<f", 7: "<?", 10: "<Q", 11: "<q", 12: "<d"}
    with open(path, "rb") as f:
        def unpack(fmt):
            return struct.unpack(fmt, f.read(struct.calcsize(fmt)))[0]

        def string():
            return f.read(unpack("<Q")).decode("utf-8")

        def value(kind):
            if kind == 8:
                return string()
            if kind == 9:
                elem, count = unpack("<I"), unpack("<Q")
                return [value(elem) for _ in range(count)]
            return unpack(sizes[kind])

        assert f.read(4) == b"GGUF"
        unpack("<I")
        unpack("<Q")
        out = {}
        for _ in range(unpack("<Q")):
            key = string()
            v = value(unpack("<I"))
            if key in WANTED:
                out[key] = v
        return out


def main():
    data_dir = sys.argv[1]
    fixture = json.load(open(os.path.join(data_dir, "templates", "llama-3.1-8b-instruct.json"), encoding="utf-8"))
    conversations = [c["messages"] for c in fixture["cases"][::2]] + [TOOL_MESSAGES]
    cases = []
    for rel in FILES:
        meta = read_metadata(os.path.join(data_dir, rel))
        tokens = meta["tokenizer.ggml.tokens"]
        bos_id = meta.get("tokenizer.ggml.bos_token_id")
        eos_id = meta.get("tokenizer.ggml.eos_token_id")
        bos = tokens[bos_id] if bos_id is not None else ""
        eos = tokens[eos_id] if eos_id is not None else ""
        template = env.from_string(meta["tokenizer.chat_template"])
        for messages in conversations:
            for agp in (True, False):
                case = {"gguf": rel, "messages": messages, "add_generation_prompt": agp, "bos": bos, "eos": eos}
                context = {"messages": messages, "add_generation_prompt": agp, "bos_token": bos, "eos_token": eos}
                if messages is TOOL_MESSAGES:
                    case["tools"] = TOOLS
                    context["tools"] = TOOLS
                try:
                    case["output"] = template.render(**context)
                except Exception as exc:
                    case["error"] = f"{type(exc).__name__}: {exc}"
                cases.append(case)
    with open(os.path.join(data_dir, "jinja", "gguf_template_cases.json"), "w", encoding="utf-8") as f:
        json.dump({"cases": cases}, f, ensure_ascii=False, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
