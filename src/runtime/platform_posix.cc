// platform.h on Linux, macOS and other POSIX systems.
#ifndef _WIN32
#include <dlfcn.h>
#include <unistd.h>

#include "platform.h"

namespace vkml::platform {

void* open_vulkan_loader(std::string* why) {
  const char* names[] = {"libvulkan.so.1", "libvulkan.so", "libvulkan.1.dylib",
                         "libMoltenVK.dylib"};
  for (const char* n : names) {
    if (void* lib = dlopen(n, RTLD_NOW | RTLD_LOCAL)) {
      void* gipa = dlsym(lib, "vkGetInstanceProcAddr");
      if (!gipa) *why = std::string("the Vulkan loader ") + n + " has no vkGetInstanceProcAddr";
      return gipa;
    }
  }
  *why = "no Vulkan loader found (libvulkan.so.1); install your GPU's Vulkan driver, or Mesa's "
         "lavapipe (Debian: mesa-vulkan-drivers) to run on the CPU";
  return nullptr;
}

std::string default_cache_dir(const std::function<const char*(const char*)>& lookup) {
  if (const char* x = lookup("XDG_CACHE_HOME"); x && *x) return std::string(x) + "/vkml";
  if (const char* h = lookup("HOME"); h && *h) return std::string(h) + "/.cache/vkml";
  return "";
}

unsigned long process_id() { return static_cast<unsigned long>(::getpid()); }

}  // namespace vkml::platform
#endif  // !_WIN32
