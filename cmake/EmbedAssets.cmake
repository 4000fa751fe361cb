# Lesson texts and presets are compiled into the binary so the app needs no install step.
function(dlsys_embed_assets target asset_dir)
  file(GLOB_RECURSE asset_files CONFIGURE_DEPENDS RELATIVE ${asset_dir} ${asset_dir}/*)
  set(out ${CMAKE_CURRENT_BINARY_DIR}/embedded_assets.cpp)
  set(inputs)
  foreach(f ${asset_files})
    list(APPEND inputs ${asset_dir}/${f})
  endforeach()
  add_custom_command(
    OUTPUT ${out}
    COMMAND ${CMAKE_COMMAND} -DASSET_DIR=${asset_dir} -DOUT=${out} -P ${PROJECT_SOURCE_DIR}/cmake/WriteAssets.cmake
    DEPENDS ${inputs} ${PROJECT_SOURCE_DIR}/cmake/WriteAssets.cmake
    COMMENT "Embedding assets")
  target_sources(${target} PRIVATE ${out})
endfunction()
