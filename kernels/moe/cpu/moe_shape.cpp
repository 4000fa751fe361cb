#include "kernels/moe/moe_shape.h"

#include <cmath>

namespace dlsys::moe {

std::int64_t expert_capacity(const MoeShape& s) {
  // The product is exact for the factors people use (1, 1.25, 2); the small margin keeps 1.1 x 10 x 1 / 1 at 11.
  const double wanted = s.capacity_factor * double(s.tokens) * s.top_k / s.experts;
  return std::int64_t(std::ceil(wanted - 1e-9 * wanted));
}

std::int64_t dispatch_bytes_per_rank(std::int64_t tokens, int top_k, std::int64_t hidden, int element_bytes,
                                     int scale_block) {
  const std::int64_t scales = scale_block > 0 ? hidden / scale_block : 0;
  return tokens * top_k * (hidden * element_bytes + scales * 4);
}

double off_rank_share(int ranks) { return double(ranks - 1) / double(ranks); }

std::int64_t expert_parameters(const MoeShape& s) { return std::int64_t(s.experts) * 2 * s.hidden * s.ffn; }
std::int64_t router_parameters(const MoeShape& s) { return s.hidden * s.experts + s.experts; }
std::int64_t dense_ffn(const MoeShape& s) { return s.top_k * s.ffn; }
std::int64_t dense_parameters(const MoeShape& s) { return 2 * s.hidden * dense_ffn(s); }
double mlp_flop_per_row(std::int64_t hidden, std::int64_t ffn) { return 4.0 * double(hidden) * double(ffn); }

}  // namespace dlsys::moe
