# Every (shader, variant) compiled into the registry. Ids are
# <shader>[_<variant>] in snake_case; the C++ side maps ops and types to them.
hearth_add_shader(binary_add binary.comp DEFINES OP_ADD)
hearth_add_shader(unary_scale unary.comp DEFINES OP_SCALE)
hearth_add_shader(unary_softcap unary.comp DEFINES OP_SOFTCAP)
hearth_add_shader(swiglu swiglu.comp)
hearth_add_shader(geglu swiglu.comp DEFINES OP_GELU)
hearth_add_shader(rms_norm rms_norm.comp)
hearth_add_shader(rope_normal rope.comp)
hearth_add_shader(rope_neox rope.comp DEFINES ROPE_NEOX)
hearth_add_shader(attention_f16 attention.comp)
hearth_add_shader(attention_q8_0 attention.comp DEFINES KV_Q8_0)
hearth_add_shader(kv_store_f16 kv_store.comp)
hearth_add_shader(kv_store_q8_0 kv_store.comp DEFINES KV_Q8_0)

# Weight-reading shaders, one variant per tensor type.
set(HEARTH_WEIGHT_TYPES F32 F16 BF16 Q8_0 Q4_0 Q4_1 Q5_0 Q5_1 Q2_K Q3_K Q4_K Q5_K Q6_K IQ4_NL IQ4_XS)
foreach(type IN LISTS HEARTH_WEIGHT_TYPES)
  string(TOLOWER ${type} lower)
  hearth_add_shader(matvec_${lower} matvec.comp DEFINES TYPE_${type})
  hearth_add_shader(matvec_sg_${lower} matvec.comp DEFINES TYPE_${type} USE_SUBGROUPS)
  hearth_add_shader(matmul_${lower} matmul.comp DEFINES TYPE_${type})
  hearth_add_shader(get_rows_${lower} get_rows.comp DEFINES TYPE_${type})
endforeach()
