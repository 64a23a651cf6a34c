// Operating-system services the runtime takes from the platform: opening the Vulkan loader, the
// default folder of the pipeline cache and the process id. platform_posix.cc and
// platform_windows.cc implement them; nothing else in the runtime includes an OS header.
#pragma once
#include <functional>
#include <string>

namespace vkml::platform {

// Opens the system's Vulkan loader (vulkan-1.dll; libvulkan.so.1; libvulkan.1.dylib or MoltenVK)
// and returns its vkGetInstanceProcAddr, or nullptr with the reason in *why.
void* open_vulkan_loader(std::string* why);

// The pipeline cache's folder when VKML_CACHE_DIR is unset, from the environment `lookup` reads:
// %LOCALAPPDATA%\vkml on Windows, $XDG_CACHE_HOME/vkml or ~/.cache/vkml elsewhere; empty (no disk
// cache) when none of those is set.
std::string default_cache_dir(const std::function<const char*(const char*)>& lookup);

// Names temporary files apart from those of other processes writing the same cache.
unsigned long process_id();

}  // namespace vkml::platform
