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

file(GLOB VKML_BRIDGE_SRC CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/torch_vkml/csrc/*.cpp)
if(NOT VKML_BRIDGE_SRC)
  message(STATUS "vkml: no bridge sources yet")
  return()
endif()
Python3_add_library(_C MODULE WITH_SOABI ${VKML_BRIDGE_SRC})
target_include_directories(_C PRIVATE ${TORCH_INCLUDE_DIRS} ${CMAKE_SOURCE_DIR}/torch_vkml/csrc)
target_compile_definitions(_C PRIVATE _GLIBCXX_USE_CXX11_ABI=${TORCH_CXX11_ABI}
                                      TORCH_EXTENSION_NAME=_C TORCH_API_INCLUDE_EXTENSION_H)
target_compile_options(_C PRIVATE -Wno-unused-parameter)
# Every bridge file parses torch's heaviest headers (9 of a file's 14 s on the 2-core machine):
# one precompiled header for all of them takes minutes off a clean build.
target_precompile_headers(_C PRIVATE <torch/library.h> <ATen/ops/empty.h> <c10/core/DeviceGuard.h>)
# Unity batches of 7 files: the bridge's files share most of their template instantiations, which
# each file compiled again. 2-core machine, clean: 1m51s against 4m09s. Names in the files'
# anonymous namespaces must therefore be unique across the bridge. Many-core machines (the GPU
# machine's build script) turn it off: 55 files spread better over 16 cores than 8 units.
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
  LIBRARY_OUTPUT_DIRECTORY ${CMAKE_SOURCE_DIR}/torch_vkml
  BUILD_RPATH "${TORCH_LIB_DIR}"
  INSTALL_RPATH "$ORIGIN/../torch/lib")
install(TARGETS _C LIBRARY DESTINATION torch_vkml)
