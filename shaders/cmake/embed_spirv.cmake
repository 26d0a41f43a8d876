# Writes a SPIR-V binary (IN) as a C++ uint32_t array (OUT) named spirv_<ID>.
# SPIR-V is a stream of little-endian 32-bit words; the byte swap below turns
# each 4-byte group of the hex dump into one word literal.
file(READ ${IN} hex HEX)
string(LENGTH "${hex}" hex_len)
math(EXPR rem "${hex_len} % 8")
if(hex_len EQUAL 0 OR NOT rem EQUAL 0)
  message(FATAL_ERROR "${IN}: SPIR-V size is not a positive multiple of 4 bytes")
endif()
math(EXPR words "${hex_len} / 8")
string(REGEX REPLACE "(..)(..)(..)(..)" "0x\\4\\3\\2\\1u," body "${hex}")
string(REGEX REPLACE "((0x[0-9a-f]+u,){8})" "\\1\n  " body "${body}")
file(WRITE ${OUT} "// Generated from ${ID}.spv; do not edit.\n#include <cstddef>\n#include <cstdint>\n\nnamespace hearth::shaders {\nextern const uint32_t spirv_${ID}[];\nextern const size_t spirv_${ID}_words;\nconst uint32_t spirv_${ID}[] = {\n  ${body}\n};\nconst size_t spirv_${ID}_words = ${words};\n}  // namespace hearth::shaders\n")
