# Build-time shader compilation: GLSL -> SPIR-V (glslang), checked by spirv-val, embedded in C++.
# Variants needing compiler features the local glslang lacks are skipped with a message.

find_program(VKML_GLSLANG NAMES glslang glslangValidator REQUIRED)
# Shaders directory of another build tree whose embedded .cc files this one copies (sanitizer builds).
set(VKML_SHADER_REUSE_DIR "" CACHE PATH "reuse the embedded shaders of another build's shaders/ dir")
find_program(VKML_SPIRV_VAL NAMES spirv-val REQUIRED)
set(VKML_SHADER_COMMON ${CMAKE_SOURCE_DIR}/src/ops/shaders/common)
set(VKML_SHADER_OUT ${CMAKE_BINARY_DIR}/shaders)
file(MAKE_DIRECTORY ${VKML_SHADER_OUT})
set_property(GLOBAL PROPERTY VKML_SHADER_SOURCES "")
set_property(GLOBAL PROPERTY VKML_SHADER_NAMES "")
set_property(GLOBAL PROPERTY VKML_SHADER_SKIPPED "")

# Compiles a tiny probe shader; sets VAR to ON when glslang accepts it.
function(vkml_probe_feature var source)
  set(dir ${CMAKE_BINARY_DIR}/shader-probes)
  file(MAKE_DIRECTORY ${dir})
  file(WRITE ${dir}/${var}.comp "${source}")
  execute_process(COMMAND ${VKML_GLSLANG} --target-env vulkan1.3 -o ${dir}/${var}.spv ${dir}/${var}.comp
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(rc EQUAL 0)
    execute_process(COMMAND ${VKML_SPIRV_VAL} --target-env vulkan1.3 ${dir}/${var}.spv
                    RESULT_VARIABLE rc2 OUTPUT_QUIET ERROR_QUIET)
    if(rc2 EQUAL 0)
      set(${var} ON PARENT_SCOPE)
      return()
    endif()
  endif()
  set(${var} OFF PARENT_SCOPE)
endfunction()

vkml_probe_feature(VKML_GLSL_COOPMAT [=[
#version 460
#extension GL_KHR_cooperative_matrix : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
layout(local_size_x = 32) in;
layout(std430, binding = 0) buffer B { float16_t d[]; };
void main() {
  coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseA> a;
  coopMatLoad(a, d, 0, 16, gl_CooperativeMatrixLayoutRowMajor);
  coopMatStore(a, d, 0, 16, gl_CooperativeMatrixLayoutRowMajor);
}
]=])
vkml_probe_feature(VKML_GLSL_BF16 [=[
#version 460
#extension GL_EXT_bfloat16 : require
layout(local_size_x = 32) in;
layout(std430, binding = 0) buffer B { bfloat16_t d[]; };
void main() { d[gl_LocalInvocationID.x] = bfloat16_t(float(d[0]) * 2.0); }
]=])
message(STATUS "vkml shaders: glslang=${VKML_GLSLANG}; cooperative matrix: ${VKML_GLSL_COOPMAT}; bfloat16: ${VKML_GLSL_BF16}")

# vkml_shader(NAME name SOURCE file.comp [DEFINES A=1 ...] [INCLUDE dir ...] [REQUIRES coopmat|bf16 ...])
function(vkml_shader)
  cmake_parse_arguments(S "" "NAME;SOURCE" "DEFINES;REQUIRES;INCLUDE" ${ARGN})
  foreach(req IN LISTS S_REQUIRES)
    string(TOUPPER ${req} REQ)
    if(NOT VKML_GLSL_${REQ})
      message(STATUS "vkml shaders: skipping ${S_NAME}: ${VKML_GLSLANG} cannot compile ${req} shaders")
      set_property(GLOBAL APPEND PROPERTY VKML_SHADER_SKIPPED "${S_NAME}: compiler lacks ${req}")
      return()
    endif()
  endforeach()
  set(env vulkan1.2)
  if(S_REQUIRES)
    set(env vulkan1.3)
  endif()
  set(defs "")
  foreach(i IN LISTS S_INCLUDE)
    list(APPEND defs "-I${i}")
  endforeach()
  foreach(d IN LISTS S_DEFINES)
    list(APPEND defs "-D${d}")
  endforeach()
  set(spv ${VKML_SHADER_OUT}/${S_NAME}.spv)
  set(cc ${VKML_SHADER_OUT}/${S_NAME}.cc)
  if(VKML_SHADER_REUSE_DIR)
    # Sanitizer builds take the embedded SPIR-V of a regular build: same shaders, minutes saved.
    add_custom_command(
      OUTPUT ${cc}
      COMMAND ${CMAKE_COMMAND} -E copy ${VKML_SHADER_REUSE_DIR}/${S_NAME}.cc ${cc}
      DEPENDS ${VKML_SHADER_REUSE_DIR}/${S_NAME}.cc
      COMMENT "SPIR-V ${S_NAME} (reused)"
      VERBATIM)
    set_property(GLOBAL APPEND PROPERTY VKML_SHADER_SOURCES ${cc})
    set_property(GLOBAL APPEND PROPERTY VKML_SHADER_NAMES ${S_NAME})
    return()
  endif()
  add_custom_command(
    OUTPUT ${cc}
    # glslang prints errors on stdout; show them only when it fails.
    COMMAND sh -c "out=$(\"$0\" \"$@\" 2>&1) || { echo \"$out\"; exit 1; }"
            ${VKML_GLSLANG} -V --target-env ${env} -I${VKML_SHADER_COMMON} ${defs}
            --depfile ${spv}.d -o ${spv} ${S_SOURCE}
    COMMAND ${VKML_SPIRV_VAL} --target-env ${env} ${spv}
    COMMAND sh ${CMAKE_SOURCE_DIR}/cmake/embed_spirv.sh ${spv} ${cc} ${S_NAME}
    DEPENDS ${S_SOURCE} ${CMAKE_SOURCE_DIR}/cmake/embed_spirv.sh
    DEPFILE ${spv}.d
    COMMENT "SPIR-V ${S_NAME}"
    VERBATIM)
  set_property(GLOBAL APPEND PROPERTY VKML_SHADER_SOURCES ${cc})
  set_property(GLOBAL APPEND PROPERTY VKML_SHADER_NAMES ${S_NAME})
endfunction()

# Writes the index of embedded shaders; returns the generated sources in OUT_VAR.
function(vkml_shader_index out_var)
  get_property(names GLOBAL PROPERTY VKML_SHADER_NAMES)
  get_property(sources GLOBAL PROPERTY VKML_SHADER_SOURCES)
  get_property(skipped GLOBAL PROPERTY VKML_SHADER_SKIPPED)
  set(decl "")
  set(rows "")
  foreach(n IN LISTS names)
    string(APPEND decl "extern const uint32_t ${n}[];\nextern const size_t ${n}_bytes;\n")
    string(APPEND rows "  {\"${n}\", spv::${n}, spv::${n}_bytes},\n")
  endforeach()
  set(skip_rows "")
  foreach(s IN LISTS skipped)
    string(APPEND skip_rows "  \"${s}\",\n")
  endforeach()
  list(LENGTH skipped nskip)
  if(nskip EQUAL 0)
    set(skip_rows "  nullptr,\n")
  endif()
  set(index ${VKML_SHADER_OUT}/shader_index.cc)
  file(CONFIGURE OUTPUT ${index} CONTENT "// Generated by cmake/Shaders.cmake; do not edit.
#include \"shader_registry.h\"
namespace vkml {
namespace spv {
${decl}}
const EmbeddedShader kEmbeddedShaders[] = {
${rows}};
const size_t kEmbeddedShaderCount = sizeof(kEmbeddedShaders) / sizeof(kEmbeddedShaders[0]);
const char* const kSkippedShaders[] = {
${skip_rows}};
const size_t kSkippedShaderCount = ${nskip};
}
" @ONLY)
  set(${out_var} ${sources} ${index} PARENT_SCOPE)
endfunction()
