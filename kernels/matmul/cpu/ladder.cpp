// The ladder's closed forms: bytes each rung moves through global memory, and the error bound of each precision.
#include "kernels/matmul/ladder.h"

#include "kernels/matmul/matmul.h"

namespace dlsys::matmul {

std::string warp_tile_name(const WarpTile& w) {
  auto x = [](int p, int q) { return std::to_string(p) + "x" + std::to_string(q); };
  return x(w.bm, w.bn) + "x" + std::to_string(w.bk) + " w" + x(w.wm, w.wn) + " t" + x(w.tm, w.tn) + " s" +
         std::to_string(w.stages) + (w.a_regs ? " rA" : "");
}

std::string_view precision_name(Precision precision) {
  return precision == Precision::Fp32 ? "fp32" : precision == Precision::Tf32 ? "tf32" : "bf16";
}

double rung_bytes(Rung rung, const Shape& s, const WarpTile& w) {
  switch (rung) {
    case Rung::Naive:
    case Rung::Coalesced:
      return bytes_naive(s);
    case Rung::SmemTiled:
      return bytes_tiled(s, kSmemTileEdge);
    case Rung::Blocktile1d:
      return bytes_block_tiled(s, kBlock1dM, kBlock1dN);
    case Rung::Blocktile2d:
    case Rung::Vectorized:
      return bytes_block_tiled(s, kBlock2dM, kBlock2dN);
    case Rung::WarpTiled:
      return bytes_block_tiled(s, w.bm, w.bn);
    case Rung::Tf32Mma:
      return bytes_block_tiled(s, kMmaBlockM, kMmaBlockN);
    case Rung::Bf16Mma:
      return bytes_block_tiled(s, kMmaBlockM, kMmaBlockN, 2, 4);
    case Rung::Cublas:
    case Rung::CublasTf32:
      return bytes_once(s, 4, 4);
    case Rung::CublasBf16:
      return bytes_once(s, 2, 4);
  }
  return 0;
}

std::string_view rung_traffic_text(Rung rung) {
  switch (rung) {
    case Rung::Naive:
    case Rung::Coalesced:
      return "every product reads its two operands: 4 (2 m n k + m n) B";
    case Rung::SmemTiled:
      return "32 x 32 tiles: A read n / 32 times, B m / 32 times";
    case Rung::Blocktile1d:
      return "64 x 64 block tiles: A read n / 64 times, B m / 64 times";
    case Rung::Blocktile2d:
    case Rung::Vectorized:
    case Rung::WarpTiled:
    case Rung::Tf32Mma:
      return "128-wide block tiles: A read n / BN times, B m / BM times";
    case Rung::Bf16Mma:
      return "128 x 128 block tiles of 2-byte inputs";
    case Rung::Cublas:
    case Rung::CublasTf32:
    case Rung::CublasBf16:
      return "tiles unknown: A and B once, C once (a lower bound)";
  }
  return "";
}

double error_tolerance(Precision precision, const Shape& shape) {
  const double accumulation = error_tolerance(shape);
  if (precision == Precision::Fp32) return accumulation;
  const int significand_bits = precision == Precision::Tf32 ? 11 : 8;
  return 2.0 * std::ldexp(1.0, -significand_bits) + accumulation;
}

}  // namespace dlsys::matmul
