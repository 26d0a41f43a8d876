#!/usr/bin/env python3
"""Writes the malformed-GGUF corpus next to this script, plus MANIFEST.tsv that
gives, for each file, a piece of text the reader's error message must contain.

Each case starts from a small valid file (two metadata keys, a vocabulary and
two tensors) and breaks one thing. Run it again after changing a case; the
files are committed so the tests need no Python.
"""
import os
import struct

HERE = os.path.dirname(os.path.abspath(__file__))

U8, I8, U16, I16, U32, I32, F32, BOOL, STR, ARR, U64, I64, F64 = range(13)


def s(text):
    b = text.encode("utf-8") if isinstance(text, str) else text
    return struct.pack("<Q", len(b)) + b


def kv(key, vtype, payload):
    return s(key) + struct.pack("<I", vtype) + payload


def tensor_info(name, dims, ttype, offset):
    out = s(name) + struct.pack("<I", len(dims))
    for d in dims:
        out += struct.pack("<q", d)
    return out + struct.pack("<IQ", ttype, offset)


def string_array(items):
    out = struct.pack("<IQ", STR, len(items))
    for it in items:
        out += s(it)
    return out


def build(version=3, kvs=None, tensors=None, n_tensors=None, n_kv=None, data=None, align=32, magic=b"GGUF"):
    if kvs is None:
        kvs = [
            kv("general.architecture", STR, s("llama")),
            kv("llama.block_count", U32, struct.pack("<I", 1)),
            kv("tokenizer.ggml.tokens", ARR, string_array(["<unk>", "<s>", "</s>", "a"])),
            kv("tokenizer.ggml.bos_token_id", U32, struct.pack("<I", 1)),
        ]
    if tensors is None:
        tensors = [tensor_info("a.weight", [4, 2], 0, 0), tensor_info("b.weight", [32], 8, 32)]
    head = magic + struct.pack("<I", version)
    head += struct.pack("<QQ", len(tensors) if n_tensors is None else n_tensors,
                        len(kvs) if n_kv is None else n_kv)
    head += b"".join(kvs) + b"".join(tensors)
    head += b"\0" * ((-len(head)) % align)
    if data is None:
        data = bytes(range(32)) + bytes(34)
    return head + data


CASES = []


def case(name, blob, expect):
    CASES.append((name, blob, expect))


valid = build()
# Truncation at every section boundary and inside them.
for cut, label in [(0, "empty"), (2, "in-magic"), (6, "in-version"), (12, "in-tensor-count"),
                   (20, "in-kv-count"), (30, "in-first-key"), (50, "in-first-value"),
                   (90, "in-vocab-array"), (len(valid) - 80, "in-tensor-infos"),
                   (len(valid) - 10, "in-tensor-data")]:
    case(f"truncated-{label}.gguf", valid[:cut], "empty" if cut == 0 else "")

case("bad-magic.gguf", build(magic=b"GGML"), "not a GGUF file")
case("version-1.gguf", build(version=1), "version 1")
case("version-99.gguf", build(version=99), "unsupported GGUF version 99")
case("big-endian-version.gguf", build(version=0x03000000), "big-endian")
# Published parser bugs: huge counts, wrapping products and sizes.
case("huge-tensor-count.gguf", build(n_tensors=2**62), "tensor count")
case("huge-kv-count.gguf", build(n_kv=2**63 - 1), "metadata key count")
case("kv-count-past-end.gguf", build(n_kv=5), "")
case("huge-key-length.gguf", build(kvs=[struct.pack("<Q", 2**63) + b"x"]), "length")
case("key-length-past-end.gguf", build(kvs=[struct.pack("<Q", 4096) + b"general"]), "past the end")
case("huge-string-value.gguf", build(kvs=[s("general.name") + struct.pack("<IQ", STR, 2**40)]), "length")
case("huge-array-count.gguf",
     build(kvs=[kv("tokenizer.ggml.tokens", ARR, struct.pack("<IQ", STR, 2**61))]), "array elements")
case("array-count-wraps.gguf",
     build(kvs=[kv("tokenizer.ggml.scores", ARR, struct.pack("<IQ", F32, 2**62 + 1))]), "array elements")
case("nested-array-too-deep.gguf",
     build(kvs=[kv("deep", ARR, struct.pack("<IQ", ARR, 1) * 6 + struct.pack("<IQ", U8, 0))]), "deeper")
case("unknown-value-type.gguf", build(kvs=[kv("general.name", 13, b"\0" * 8)]), "unknown value type 13")
case("unknown-array-type.gguf", build(kvs=[kv("x", ARR, struct.pack("<IQ", 77, 1))]), "unknown type 77")
case("bad-bool.gguf", build(kvs=[kv("x", BOOL, b"\x07")]), "bool value 7")
case("non-utf8-key.gguf", build(kvs=[kv(b"general.\xff\xfe", U32, struct.pack("<I", 1))]), "UTF-8")
case("overlong-utf8-key.gguf", build(kvs=[kv(b"key\xc0\xaf", U32, struct.pack("<I", 1))]), "UTF-8")
case("empty-key.gguf", build(kvs=[kv("", U32, struct.pack("<I", 1))]), "empty")
case("duplicate-key.gguf",
     build(kvs=[kv("general.name", STR, s("a")), kv("general.name", STR, s("b"))]), "appears twice")
case("alignment-zero.gguf", build(kvs=[kv("general.alignment", U32, struct.pack("<I", 0))]), "general.alignment")
case("alignment-not-power-of-two.gguf",
     build(kvs=[kv("general.alignment", U32, struct.pack("<I", 48))]), "general.alignment")
case("alignment-wrong-type.gguf", build(kvs=[kv("general.alignment", STR, s("32"))]), "general.alignment")
case("zero-dims.gguf", build(tensors=[tensor_info("a.weight", [], 0, 0)]), "0 dimensions")
case("five-dims.gguf", build(tensors=[tensor_info("a.weight", [1, 1, 1, 1, 1], 0, 0)]), "5 dimensions")
case("zero-dimension.gguf", build(tensors=[tensor_info("a.weight", [4, 0], 0, 0)]), "must be > 0")
case("negative-dimension.gguf", build(tensors=[tensor_info("a.weight", [4, -2], 0, 0)]), "must be > 0")
case("dimension-product-wraps.gguf",
     build(tensors=[tensor_info("a.weight", [2**32, 2**32, 16], 0, 0)]), "overflows")
case("byte-size-wraps.gguf",
     build(tensors=[tensor_info("a.weight", [2**61, 2], 0, 0)]), "")
case("unknown-tensor-type.gguf", build(tensors=[tensor_info("a.weight", [4, 2], 99, 0)]), "type id 99")
case("removed-tensor-type.gguf", build(tensors=[tensor_info("a.weight", [32], 4, 0)]), "type id 4")
case("row-not-block-multiple.gguf", build(tensors=[tensor_info("a.weight", [33], 8, 0)]), "block size")
case("misaligned-offset.gguf",
     build(tensors=[tensor_info("a.weight", [4, 2], 0, 0), tensor_info("b.weight", [32], 8, 33)]), "alignment")
case("offset-past-end.gguf",
     build(tensors=[tensor_info("a.weight", [4, 2], 0, 0), tensor_info("b.weight", [32], 8, 1 << 40)]),
     "past the end")
case("offset-wraps.gguf",
     build(tensors=[tensor_info("a.weight", [4, 2], 0, 2**64 - 32)]), "past the end")
case("data-truncated.gguf", build(data=bytes(40)), "past the end")
case("overlapping-tensors.gguf",
     build(tensors=[tensor_info("a.weight", [4, 2], 0, 0), tensor_info("b.weight", [8], 0, 0)]), "overlap")
case("duplicate-tensor-name.gguf",
     build(tensors=[tensor_info("a.weight", [4, 2], 0, 0), tensor_info("a.weight", [32], 8, 32)]), "appears twice")
case("empty-tensor-name.gguf", build(tensors=[tensor_info("", [4, 2], 0, 0)]), "empty name")
case("non-utf8-tensor-name.gguf", build(tensors=[tensor_info(b"blk.\xe2\x28\xa1", [4, 2], 0, 0)]), "UTF-8")
case("huge-tensor-name.gguf", build(tensors=[struct.pack("<Q", 2**50) + b"a"]), "length")
case("bos-id-out-of-vocab.gguf",
     build(kvs=[kv("tokenizer.ggml.tokens", ARR, string_array(["a", "b"])),
                kv("tokenizer.ggml.bos_token_id", U32, struct.pack("<I", 7))]), "outside the vocabulary")
case("eos-id-negative.gguf",
     build(kvs=[kv("tokenizer.ggml.tokens", ARR, string_array(["a", "b"])),
                kv("tokenizer.ggml.eos_token_id", I32, struct.pack("<i", -5))]), "outside the vocabulary")
case("token-id-wrong-type.gguf",
     build(kvs=[kv("tokenizer.ggml.tokens", ARR, string_array(["a", "b"])),
                kv("tokenizer.ggml.bos_token_id", STR, s("1"))]), "bos_token_id")
case("block-count-insane.gguf",
     build(kvs=[kv("general.architecture", STR, s("llama")),
                kv("llama.block_count", U32, struct.pack("<I", 1_000_000))]), "block_count")
case("block-count-zero.gguf",
     build(kvs=[kv("general.architecture", STR, s("llama")),
                kv("llama.block_count", U32, struct.pack("<I", 0))]), "block_count")
case("architecture-not-string.gguf", build(kvs=[kv("general.architecture", U32, struct.pack("<I", 3))]),
     "general.architecture")
case("tensor-count-past-end.gguf", build(n_tensors=3), "")

# The unbroken control file: it must load, so each failure above is caused by
# the one thing its case breaks.
with open(os.path.join(HERE, "control-valid.gguf.ok"), "wb") as f:
    f.write(valid)
for name, blob, _ in CASES:
    with open(os.path.join(HERE, name), "wb") as f:
        f.write(blob)
with open(os.path.join(HERE, "MANIFEST.tsv"), "w") as f:
    f.write("# file\ttext the error message must contain (empty: any clear error)\n")
    for name, _, expect in CASES:
        f.write(f"{name}\t{expect}\n")
print(f"wrote {len(CASES)} malformed files")
