# Cross-build for 64-bit Windows with Debian's MinGW-w64, posix-threads variant (std::thread and
# std::mutex need it): apt-get install g++-mingw-w64-x86-64-posix.
#   cmake -S . -B build-windows -G Ninja --toolchain cmake/toolchains/mingw-w64-x86_64.cmake
# `make windows` and `make windows-test` do this and run the results under Wine.
set(CMAKE_SYSTEM_NAME Windows)
set(CMAKE_SYSTEM_PROCESSOR x86_64)
set(VKML_MINGW_TRIPLE x86_64-w64-mingw32)
set(CMAKE_C_COMPILER ${VKML_MINGW_TRIPLE}-gcc-posix)
set(CMAKE_CXX_COMPILER ${VKML_MINGW_TRIPLE}-g++-posix)
set(CMAKE_RC_COMPILER ${VKML_MINGW_TRIPLE}-windres)

# Libraries and headers from the MinGW sysroot only; programs (glslang, spirv-val) from the host.
set(CMAKE_FIND_ROOT_PATH /usr/${VKML_MINGW_TRIPLE})
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)

# Self-contained executables: libstdc++, libgcc and winpthreads are linked in, so neither Wine
# nor Windows needs MinGW's DLLs next to them.
set(CMAKE_EXE_LINKER_FLAGS_INIT "-static")
set(CMAKE_SHARED_LINKER_FLAGS_INIT "-static")

# The Vulkan headers are platform-independent; the loader is opened at run time, so no import
# library is needed. /usr/include cannot go on the include path (its libc headers would shadow
# MinGW's), so a folder holding only the Khronos headers stands in for it.
if(NOT DEFINED CACHE{VKML_VULKAN_INCLUDE} AND EXISTS /usr/include/vulkan/vulkan.h)
  set(vkml_vk_dir ${CMAKE_BINARY_DIR}/vulkan-headers)
  file(MAKE_DIRECTORY ${vkml_vk_dir})
  foreach(d vulkan vk_video)
    if(EXISTS /usr/include/${d} AND NOT EXISTS ${vkml_vk_dir}/${d})
      file(CREATE_LINK /usr/include/${d} ${vkml_vk_dir}/${d} SYMBOLIC)
    endif()
  endforeach()
  set(VKML_VULKAN_INCLUDE ${vkml_vk_dir} CACHE PATH "Vulkan headers for the Windows cross-build")
endif()
