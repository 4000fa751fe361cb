#include "lessons/matmul/matmul_steps.h"

namespace dlsys::matmul {

std::shared_ptr<const MatmulSteps> make_steps(const Shape& s, int tile) {
  auto steps = std::make_shared<MatmulSteps>();
  steps->shape = s;
  steps->multiplications = multiplications(s);
  steps->additions = additions(s);
  steps->flops = flops(s);
  steps->tile = tile;
  steps->tiles_m = ceil_div(s.m, tile);
  steps->tiles_n = ceil_div(s.n, tile);
  steps->tiles_k = ceil_div(s.k, tile);
  auto traffic = [&](double bytes) { return Traffic{bytes, steps->flops / bytes}; };
  steps->naive = traffic(bytes_naive(s));
  steps->tiled = traffic(bytes_tiled(s, tile));
  steps->minimum = traffic(bytes_minimum(s));
  return steps;
}

}  // namespace dlsys::matmul
