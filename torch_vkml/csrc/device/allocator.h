#pragma once
#include <c10/core/Allocator.h>

namespace torch_vkml {
c10::Allocator* vkml_allocator();
}
