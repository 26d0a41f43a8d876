# Every (shader, variant) compiled into the registry. Ids are
# <shader>[_<variant>] in snake_case; the C++ side maps ops and types to them.
hearth_add_shader(binary_add binary.comp DEFINES OP_ADD)
hearth_add_shader(binary_mul binary.comp DEFINES OP_MUL)
hearth_add_shader(unary_scale unary.comp DEFINES OP_SCALE)
hearth_add_shader(unary_gelu unary.comp DEFINES OP_GELU)
hearth_add_shader(unary_silu unary.comp DEFINES OP_SILU)
hearth_add_shader(swiglu swiglu.comp)
hearth_add_shader(rms_norm rms_norm.comp)
hearth_add_shader(softmax softmax.comp)
hearth_add_shader(rope_normal rope.comp)
hearth_add_shader(rope_neox rope.comp DEFINES ROPE_NEOX)
hearth_add_shader(attention_decode_f16 attention_decode.comp)

# Weight-reading shaders, one variant per tensor type.
set(HEARTH_WEIGHT_TYPES F32 F16 BF16 Q8_0 Q4_0 Q4_1 Q5_0 Q5_1 Q2_K Q3_K Q4_K Q5_K Q6_K IQ4_NL IQ4_XS)
foreach(type IN LISTS HEARTH_WEIGHT_TYPES)
  string(TOLOWER ${type} lower)
  hearth_add_shader(matvec_${lower} matvec.comp DEFINES TYPE_${type})
  hearth_add_shader(matmul_${lower} matmul.comp DEFINES TYPE_${type})
  hearth_add_shader(get_rows_${lower} get_rows.comp DEFINES TYPE_${type})
endforeach()
