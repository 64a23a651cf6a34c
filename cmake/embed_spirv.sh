#!/bin/sh
# Embeds a SPIR-V file as a uint32_t array: embed_spirv.sh in.spv out.cc symbol
# od prints the words in host byte order, which is the order Vulkan reads them in.
set -eu
spv=$1 out=$2 sym=$3
{
  printf '// Generated from %s; do not edit.\n#include <cstddef>\n#include <cstdint>\n' "$spv"
  printf 'namespace vkml::spv {\nextern const uint32_t %s[] = {\n' "$sym"
  od -An -v -tx4 -w32 "$spv" | sed -e 's/ \([0-9a-f]\{8\}\)/0x\1,/g'
  printf '};\nextern const size_t %s_bytes = sizeof(%s);\n}\n' "$sym" "$sym"
} > "$out.tmp"
mv "$out.tmp" "$out"
