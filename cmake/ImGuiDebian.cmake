# Debian's libimgui.a already holds the GLFW and OpenGL3 backends and imgui_freetype, but ships no CMake config.
# Wrap it as an imported static library whose link interface lists its own needs, in an order --as-needed accepts.
find_library(IMGUI_ARCHIVE NAMES libimgui.a REQUIRED)
find_path(IMGUI_INCLUDE_DIR imgui.h PATH_SUFFIXES imgui REQUIRED)
find_package(PkgConfig REQUIRED)
pkg_check_modules(STB REQUIRED IMPORTED_TARGET GLOBAL stb)
find_package(glfw3 REQUIRED)
set(OpenGL_GL_PREFERENCE GLVND)
find_package(OpenGL REQUIRED COMPONENTS OpenGL EGL)
find_package(Freetype REQUIRED)
add_library(dlsys_imgui_archive STATIC IMPORTED)
set_target_properties(dlsys_imgui_archive PROPERTIES
  IMPORTED_LOCATION ${IMGUI_ARCHIVE}
  INTERFACE_INCLUDE_DIRECTORIES "${IMGUI_INCLUDE_DIR};${IMGUI_INCLUDE_DIR}/backends"
  INTERFACE_LINK_LIBRARIES "PkgConfig::STB;glfw;OpenGL::GL;OpenGL::EGL;${CMAKE_DL_LIBS};Freetype::Freetype")
add_library(dlsys_imgui INTERFACE)
target_link_libraries(dlsys_imgui INTERFACE dlsys_imgui_archive)
