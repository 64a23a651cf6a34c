// platform.h on Windows (MSVC and MinGW-w64).
#ifdef _WIN32
#define WIN32_LEAN_AND_MEAN
#define NOMINMAX
#include <windows.h>

#include "platform.h"

namespace vkml::platform {

void* open_vulkan_loader(std::string* why) {
  // The application's folder and System32 only: a vulkan-1.dll in the working directory is not
  // trusted.
  HMODULE lib = LoadLibraryExA("vulkan-1.dll", nullptr, LOAD_LIBRARY_SEARCH_DEFAULT_DIRS);
  if (!lib) {
    *why = "no Vulkan loader found (vulkan-1.dll, error " + std::to_string(GetLastError()) +
           "); install your GPU's driver, which ships the Vulkan loader";
    return nullptr;
  }
  FARPROC gipa = GetProcAddress(lib, "vkGetInstanceProcAddr");
  if (!gipa) {
    *why = "the Vulkan loader vulkan-1.dll has no vkGetInstanceProcAddr";
    return nullptr;
  }
  return reinterpret_cast<void*>(gipa);
}

std::string default_cache_dir(const std::function<const char*(const char*)>& lookup) {
  if (const char* x = lookup("LOCALAPPDATA"); x && *x) return std::string(x) + "\\vkml";
  return "";
}

unsigned long process_id() { return GetCurrentProcessId(); }

}  // namespace vkml::platform
#endif  // _WIN32
