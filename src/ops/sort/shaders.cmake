# Shader variants of the sort family: key building per dtype; sorting and gathering are dtype-free
# (the radix passes only know the key width).
set(_dir ${CMAKE_CURRENT_LIST_DIR})
foreach(dt f32 f16 bf16 f64 i8 u8 i16 i32 i64 bool)
  string(TOUPPER ${dt} D)
  set(_defs SRC_${D})
  if(dt STREQUAL f64)
    list(APPEND _defs VKML_USE_FP64)
  endif()
  vkml_shader(NAME sort_keys_${dt} SOURCE ${_dir}/sort_keys.comp DEFINES ${_defs} INCLUDE ${_dir})
  if(dt STREQUAL f64 OR dt STREQUAL i64)
    list(APPEND _defs RADIX_KEY64)
  endif()
  vkml_shader(NAME radix_keys_${dt} SOURCE ${_dir}/radix_keys.comp DEFINES ${_defs}
              INCLUDE ${_dir})
endforeach()
# Radix passes by key width: 32-bit keys for dtypes up to 32 bits, 64-bit keys for f64 / i64.
vkml_shader(NAME radix_scan SOURCE ${_dir}/radix_scan.comp INCLUDE ${_dir})
foreach(s hist scatter range)
  vkml_shader(NAME radix_${s}_k32 SOURCE ${_dir}/radix_${s}.comp INCLUDE ${_dir})
  vkml_shader(NAME radix_${s}_k64 SOURCE ${_dir}/radix_${s}.comp DEFINES RADIX_KEY64
              INCLUDE ${_dir})
endforeach()
# CPU devices: one invocation per tile, counting serially.
foreach(stage hist scatter)
  string(TOUPPER ${stage} S)
  vkml_shader(NAME radix_${stage}_serial_k32 SOURCE ${_dir}/radix_serial.comp DEFINES STAGE_${S}
              INCLUDE ${_dir})
  vkml_shader(NAME radix_${stage}_serial_k64 SOURCE ${_dir}/radix_serial.comp
              DEFINES STAGE_${S} RADIX_KEY64 INCLUDE ${_dir})
endforeach()
foreach(s block step gather)
  vkml_shader(NAME sort_${s} SOURCE ${_dir}/sort_${s}.comp INCLUDE ${_dir})
endforeach()
foreach(dt f32 f16 bf16 f64 i8 u8 i16 i32 i64 bool)
  string(TOUPPER ${dt} D)
  set(_defs SRC_${D})
  if(dt STREQUAL f64)
    list(APPEND _defs VKML_USE_FP64)
  endif()
  vkml_shader(NAME searchsorted_${dt} SOURCE ${_dir}/searchsorted.comp DEFINES ${_defs}
              INCLUDE ${_dir})
endforeach()
