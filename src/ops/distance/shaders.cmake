# Shader variants of the distance family (cdist, pdist, forward and backward): float and double.
set(_dir ${CMAKE_CURRENT_LIST_DIR})
vkml_shader(NAME distance SOURCE ${_dir}/distance.comp INCLUDE ${_dir})
vkml_shader(NAME distance_f64 SOURCE ${_dir}/distance.comp DEFINES VKML_USE_FP64 INCLUDE ${_dir})
