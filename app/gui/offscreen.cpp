#define GL_GLEXT_PROTOTYPES 1
#include "app/gui/offscreen.h"

#include <EGL/egl.h>
#include <EGL/eglext.h>
#include <GL/gl.h>
#include <GL/glext.h>
#include <backends/imgui_impl_opengl3.h>
#include <fmt/format.h>
#include <stb_image_write.h>

#include "engine/errors.h"
#include "engine/file_io.h"

namespace dlsys::gui {

std::string encode_png(const std::string& path, const Image& image) {
  std::string bytes;
  auto append = [](void* context, void* data, int size) {
    static_cast<std::string*>(context)->append(static_cast<const char*>(data), static_cast<std::size_t>(size));
  };
  stbi_flip_vertically_on_write(1);
  if (stbi_write_png_to_func(append, &bytes, image.width, image.height, 4, image.rgba.data(), image.width * 4) == 0)
    throw RunFailure(fmt::format("cannot encode a {}x{} PNG for '{}'", image.width, image.height, path));
  return bytes;
}

// Encoded in memory first, then written in one checked write: a full disk cannot leave half a PNG behind.
void write_png(const std::string& path, const Image& image) { write_file_checked(path, encode_png(path, image)); }

Image read_pixels(int width, int height, bool back_buffer) {
  Image image{width, height, std::vector<std::uint8_t>(static_cast<std::size_t>(width) * height * 4)};
  if (back_buffer) glReadBuffer(GL_BACK);
  glPixelStorei(GL_PACK_ALIGNMENT, 1);
  glReadPixels(0, 0, width, height, GL_RGBA, GL_UNSIGNED_BYTE, image.rgba.data());
  for (std::size_t i = 3; i < image.rgba.size(); i += 4) image.rgba[i] = 255;  // opaque PNGs
  return image;
}

Image render_offscreen(const std::function<void()>& draw_ui, ImVec2 display_size, float framebuffer_scale, int frames,
                       ImVec4 clear_color) {
  const int width = static_cast<int>(display_size.x * framebuffer_scale);
  const int height = static_cast<int>(display_size.y * framebuffer_scale);
  GLint max_size = 0;
  glGetIntegerv(GL_MAX_RENDERBUFFER_SIZE, &max_size);
  if (width > max_size || height > max_size)
    throw BadInput(fmt::format("image {}x{} is larger than this GL allows ({} pixels a side); lower the size or scale",
                               width, height, max_size));
  GLuint fbo = 0, color = 0;
  glGenFramebuffers(1, &fbo);
  glBindFramebuffer(GL_FRAMEBUFFER, fbo);
  glGenRenderbuffers(1, &color);
  glBindRenderbuffer(GL_RENDERBUFFER, color);
  glRenderbufferStorage(GL_RENDERBUFFER, GL_RGBA8, width, height);
  glFramebufferRenderbuffer(GL_FRAMEBUFFER, GL_COLOR_ATTACHMENT0, GL_RENDERBUFFER, color);
  Image image;
  if (glCheckFramebufferStatus(GL_FRAMEBUFFER) == GL_FRAMEBUFFER_COMPLETE) {
    ImGuiIO& io = ImGui::GetIO();
    const ImVec2 saved_size = io.DisplaySize, saved_scale = io.DisplayFramebufferScale;
    for (int f = 0; f < frames; ++f) {
      io.DisplaySize = display_size;
      io.DisplayFramebufferScale = {framebuffer_scale, framebuffer_scale};
      io.DeltaTime = 1.0f / 60.0f;
      ImGui_ImplOpenGL3_NewFrame();
      ImGui::NewFrame();
      draw_ui();
      ImGui::Render();
      glViewport(0, 0, width, height);
      glClearColor(clear_color.x, clear_color.y, clear_color.z, 1.0f);
      glClear(GL_COLOR_BUFFER_BIT);
      ImGui_ImplOpenGL3_RenderDrawData(ImGui::GetDrawData());
    }
    image = read_pixels(width, height, false);
    io.DisplaySize = saved_size;
    io.DisplayFramebufferScale = saved_scale;
  }
  glBindFramebuffer(GL_FRAMEBUFFER, 0);
  glDeleteRenderbuffers(1, &color);
  glDeleteFramebuffers(1, &fbo);
  if (image.rgba.empty()) throw RunFailure("the offscreen framebuffer could not be completed");
  return image;
}

HeadlessGl::HeadlessGl() {
  auto get_platform_display =
      reinterpret_cast<PFNEGLGETPLATFORMDISPLAYEXTPROC>(eglGetProcAddress("eglGetPlatformDisplayEXT"));
  EGLDisplay display = EGL_NO_DISPLAY;
  EGLint major = 0, minor = 0;
  // Mesa (llvmpipe or a GPU) renders with no display server on its surfaceless platform.
  if (get_platform_display != nullptr) {
    display = get_platform_display(EGL_PLATFORM_SURFACELESS_MESA, EGL_DEFAULT_DISPLAY, nullptr);
    if (display != EGL_NO_DISPLAY && !eglInitialize(display, &major, &minor)) display = EGL_NO_DISPLAY;
  }
  // Other drivers (e.g. NVIDIA's) take the default display and a context without surfaces.
  if (display == EGL_NO_DISPLAY) {
    display = eglGetDisplay(EGL_DEFAULT_DISPLAY);
    if (display != EGL_NO_DISPLAY && !eglInitialize(display, &major, &minor)) display = EGL_NO_DISPLAY;
  }
  if (display == EGL_NO_DISPLAY)
    throw RunFailure(fmt::format("no EGL display for headless rendering (EGL error 0x{:x}); is libegl-mesa0 installed?",
                                 eglGetError()));
  eglBindAPI(EGL_OPENGL_API);
  const EGLint attributes[] = {
      EGL_CONTEXT_MAJOR_VERSION,           3,       EGL_CONTEXT_MINOR_VERSION, 3, EGL_CONTEXT_OPENGL_PROFILE_MASK,
      EGL_CONTEXT_OPENGL_CORE_PROFILE_BIT, EGL_NONE};
  EGLContext context = eglCreateContext(display, EGL_NO_CONFIG_KHR, EGL_NO_CONTEXT, attributes);
  if (context == EGL_NO_CONTEXT || !eglMakeCurrent(display, EGL_NO_SURFACE, EGL_NO_SURFACE, context)) {
    const EGLint error = eglGetError();
    eglTerminate(display);
    throw RunFailure(fmt::format("cannot create a surfaceless GL 3.3 context through EGL (error 0x{:x})", error));
  }
  display_ = display;
  context_ = context;
}

HeadlessGl::~HeadlessGl() {
  eglMakeCurrent(display_, EGL_NO_SURFACE, EGL_NO_SURFACE, EGL_NO_CONTEXT);
  eglDestroyContext(display_, context_);
  eglTerminate(display_);
}

std::string HeadlessGl::renderer() const {
  const auto* name = reinterpret_cast<const char*>(glGetString(GL_RENDERER));
  return name ? name : "unknown";
}

}  // namespace dlsys::gui
