# The torch_vkml._C extension, built against the torch installed in Python3_EXECUTABLE.
# Include and library paths come from torch itself (find_package(Torch) probes CUDA on CUDA wheels).
find_package(Python3 COMPONENTS Interpreter Development.Module)
if(NOT Python3_FOUND)
  message(STATUS "vkml: no Python development files; torch_vkml._C not built")
  return()
endif()
execute_process(
  COMMAND ${Python3_EXECUTABLE} -c "import torch, torch.utils.cpp_extension as c; print(';'.join(c.include_paths())); print(c.library_paths()[0]); print(int(torch.compiled_with_cxx11_abi())); print(torch.__version__)"
  OUTPUT_VARIABLE torch_info RESULT_VARIABLE rc OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
if(NOT rc EQUAL 0)
  message(STATUS "vkml: torch not importable by ${Python3_EXECUTABLE}; torch_vkml._C not built")
  return()
endif()
string(REPLACE "\n" ";" torch_info "${torch_info}")
list(GET torch_info -1 TORCH_VERSION)
list(GET torch_info -2 TORCH_CXX11_ABI)
list(GET torch_info -3 TORCH_LIB_DIR)
list(REMOVE_AT torch_info -1 -2 -3)
set(TORCH_INCLUDE_DIRS ${torch_info})
message(STATUS "vkml: building torch_vkml._C against torch ${TORCH_VERSION} (${TORCH_LIB_DIR})")

# csrc/device: the PrivateUse1 plumbing and the Python module; csrc/common: helpers every file
# uses; csrc/ops/<family>: the aten kernels, one folder per src/ops family.
file(GLOB_RECURSE VKML_BRIDGE_SRC CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/torch_vkml/csrc/*.cpp)
if(NOT VKML_BRIDGE_SRC)
  message(STATUS "vkml: no bridge sources yet")
  return()
endif()
# Each file keeps its helpers in a namespace named after it (torch_vkml::ops_<name>,
# device_<name>, common_<name>), so file names must be unique across the bridge.
set(_vkml_bridge_names "")
foreach(f IN LISTS VKML_BRIDGE_SRC)
  get_filename_component(_name ${f} NAME_WE)
  if(_name IN_LIST _vkml_bridge_names)
    message(FATAL_ERROR "vkml: two bridge files are named ${_name}.cpp; rename one (${f})")
  endif()
  list(APPEND _vkml_bridge_names ${_name})
endforeach()
Python3_add_library(_C MODULE WITH_SOABI ${VKML_BRIDGE_SRC})
# The Kineto activity profiler includes Kineto's headers by their bare names (Config.h, ...):
# only that file gets their folder, and it stays out of the unity batches.
list(GET TORCH_INCLUDE_DIRS 0 _vkml_torch_include)
set_source_files_properties(${CMAKE_SOURCE_DIR}/torch_vkml/csrc/device/kineto_profiler.cpp
  PROPERTIES INCLUDE_DIRECTORIES ${_vkml_torch_include}/kineto SKIP_UNITY_BUILD_INCLUSION ON)
target_include_directories(_C PRIVATE ${TORCH_INCLUDE_DIRS} ${CMAKE_SOURCE_DIR}/torch_vkml/csrc)
target_compile_definitions(_C PRIVATE _GLIBCXX_USE_CXX11_ABI=${TORCH_CXX11_ABI}
                                      TORCH_EXTENSION_NAME=_C TORCH_API_INCLUDE_EXTENSION_H)
if(MSVC)
  # Warnings torch's own headers raise under MSVC (torch.utils.cpp_extension silences the same).
  target_compile_options(_C PRIVATE /utf-8 /Zc:__cplusplus /EHsc /wd4819 /wd4251 /wd4244 /wd4267
                                   /wd4275 /wd4018 /wd4190 /wd4624 /wd4067 /wd4068)
else()
  target_compile_options(_C PRIVATE -Wno-unused-parameter)
endif()
# Every bridge file parses torch's heaviest headers, which take most of a file's compile time:
# one precompiled header for all of them takes minutes off a clean build.
target_precompile_headers(_C PRIVATE <torch/library.h> <ATen/ops/empty.h> <c10/core/DeviceGuard.h>)
# Unity batches of 7 files: the bridge's files share most of their template instantiations, which
# a separate compile of each file would repeat. Per-file namespaces keep the names of one file
# apart from the others in its batch; macros are #undef'd at the end of the file that defines
# them. Many-core machines can turn it off (-DVKML_UNITY_BRIDGE=OFF): files then spread better
# over the cores than batches do.
option(VKML_UNITY_BRIDGE "compile the bridge's files in unity batches" ON)
if(VKML_UNITY_BRIDGE)
  set_target_properties(_C PROPERTIES UNITY_BUILD ON UNITY_BUILD_BATCH_SIZE 7)
endif()
if(VKML_CCACHE AND CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
  target_compile_options(_C PRIVATE -fpch-preprocess)
endif()
find_library(TORCH_PYTHON_LIB torch_python PATHS ${TORCH_LIB_DIR} NO_DEFAULT_PATH REQUIRED)
target_link_directories(_C PRIVATE ${TORCH_LIB_DIR})
target_link_libraries(_C PRIVATE vkml_core c10 torch torch_cpu ${TORCH_PYTHON_LIB})
set_target_properties(_C PROPERTIES
  BUILD_RPATH "${TORCH_LIB_DIR}"
  INSTALL_RPATH "$ORIGIN/../torch/lib")
# The torch release the extension is built against: torch_vkml compares it with the torch it runs
# under before loading _C, so a mismatch is an ImportError naming both, not an undefined symbol.
set(_vkml_build_info "TORCH_VERSION = \"${TORCH_VERSION}\"\n")
if(SKBUILD)
  # Wheel builds (scikit-build-core) install both files and leave the source tree alone.
  file(CONFIGURE OUTPUT ${CMAKE_BINARY_DIR}/torch_vkml/_build_info.py CONTENT "${_vkml_build_info}")
  install(FILES ${CMAKE_BINARY_DIR}/torch_vkml/_build_info.py DESTINATION torch_vkml COMPONENT python)
else()
  # Development builds put _C next to the sources (git-ignored), so PYTHONPATH=. imports it.
  set_target_properties(_C PROPERTIES LIBRARY_OUTPUT_DIRECTORY ${CMAKE_SOURCE_DIR}/torch_vkml)
  file(CONFIGURE OUTPUT ${CMAKE_SOURCE_DIR}/torch_vkml/_build_info.py CONTENT "${_vkml_build_info}")
endif()
install(TARGETS _C LIBRARY DESTINATION torch_vkml COMPONENT python)
