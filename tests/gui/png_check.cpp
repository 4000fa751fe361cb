// Checks a screenshot's pixels, not only that the file exists:
//   png_check FILE --size WxH [--min-colors N] [--color RRGGBB --region x0,y0,x1,y1 (fractions) [--min-pixels N]
//             [--max-pixels N]]
// --max-pixels checks that something is absent: the colour covers at most N pixels of the region.
// Exit 0 when every check holds; otherwise prints what failed and exits 1.
#include <stb_image.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <set>
#include <string>

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(
        stderr,
        "usage: png_check FILE --size WxH [--min-colors N] [--color RRGGBB --region x0,y0,x1,y1 [--min-pixels N] "
        "[--max-pixels N]]\n");
    return 2;
  }
  int width = 0, height = 0, channels = 0;
  unsigned char* pixels = stbi_load(argv[1], &width, &height, &channels, 4);
  if (pixels == nullptr) {
    std::fprintf(stderr, "FAIL: %s is not a readable PNG\n", argv[1]);
    return 1;
  }
  int want_w = 0, want_h = 0, min_colors = 0, min_pixels = 20, max_pixels = -1;
  unsigned color = 0;
  bool check_color = false;
  double x0 = 0, y0 = 0, x1 = 1, y1 = 1;
  for (int i = 2; i + 1 < argc; i += 2) {
    const std::string flag = argv[i], value = argv[i + 1];
    if (flag == "--size")
      std::sscanf(value.c_str(), "%dx%d", &want_w, &want_h);
    else if (flag == "--min-colors")
      min_colors = std::atoi(value.c_str());
    else if (flag == "--color") {
      color = std::strtoul(value.c_str(), nullptr, 16);
      check_color = true;
    } else if (flag == "--region")
      std::sscanf(value.c_str(), "%lf,%lf,%lf,%lf", &x0, &y0, &x1, &y1);
    else if (flag == "--min-pixels")
      min_pixels = std::atoi(value.c_str());
    else if (flag == "--max-pixels") {
      max_pixels = std::atoi(value.c_str());
      min_pixels = 0;
    }
  }
  int failures = 0;
  if (want_w && (width != want_w || height != want_h)) {
    std::fprintf(stderr, "FAIL: size %dx%d, expected %dx%d\n", width, height, want_w, want_h);
    ++failures;
  }
  std::set<unsigned> colors;
  int matching = 0;
  const int rx0 = int(x0 * width), rx1 = int(x1 * width), ry0 = int(y0 * height), ry1 = int(y1 * height);
  for (int y = 0; y < height; ++y)
    for (int x = 0; x < width; ++x) {
      const unsigned char* p = pixels + 4 * (size_t(y) * width + x);
      colors.insert(unsigned(p[0]) << 16 | unsigned(p[1]) << 8 | p[2]);
      if (check_color && x >= rx0 && x < rx1 && y >= ry0 && y < ry1 &&
          std::abs(int(p[0]) - int(color >> 16 & 255)) <= 12 && std::abs(int(p[1]) - int(color >> 8 & 255)) <= 12 &&
          std::abs(int(p[2]) - int(color & 255)) <= 12)
        ++matching;
    }
  if (int(colors.size()) < min_colors) {
    std::fprintf(stderr, "FAIL: %zu distinct colours, expected at least %d\n", colors.size(), min_colors);
    ++failures;
  }
  if (check_color && matching < min_pixels) {
    std::fprintf(stderr, "FAIL: colour %06x found in %d pixels of the region, expected at least %d\n", color, matching,
                 min_pixels);
    ++failures;
  }
  if (check_color && max_pixels >= 0 && matching > max_pixels) {
    std::fprintf(stderr, "FAIL: colour %06x found in %d pixels of the region, expected at most %d\n", color, matching,
                 max_pixels);
    ++failures;
  }
  std::printf("%s: %dx%d, %zu colours%s\n", argv[1], width, height, colors.size(),
              check_color ? (", colour " + std::to_string(matching) + " px in region").c_str() : "");
  stbi_image_free(pixels);
  return failures ? 1 : 0;
}
