# Shader variants of the shape family: raw-bit remaps and triangles by element size, ranges per
# dtype (with and without double arithmetic).
set(_dir ${CMAKE_CURRENT_LIST_DIR})
foreach(bits 8 16 32 64)
  vkml_shader(NAME remap_u${bits} SOURCE ${_dir}/remap.comp DEFINES ELEM_BITS=${bits} INCLUDE ${_dir})
  vkml_shader(NAME triangle_u${bits} SOURCE ${_dir}/remap.comp DEFINES ELEM_BITS=${bits} TRIANGLE INCLUDE ${_dir})
endforeach()
foreach(dt f32 f16 bf16 f64 i8 u8 i16 i32 i64)
  string(TOUPPER ${dt} D)
  if(NOT dt STREQUAL f64)
    vkml_shader(NAME range_${dt} SOURCE ${_dir}/range.comp DEFINES DST_${D} INCLUDE ${_dir})
  endif()
  vkml_shader(NAME range_${dt}_fp64 SOURCE ${_dir}/range.comp DEFINES DST_${D} VKML_USE_FP64 INCLUDE ${_dir})
endforeach()
