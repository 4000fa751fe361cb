#include "kernels/tensor/linear_split.h"

#include <stdexcept>

#include "kernels/tensor/tp_group.h"

namespace dlsys::tensor {

namespace {

// y_local[j] = sum_i x[i] w[i][j] over the shard, in the order a GEMM row would add them.
std::vector<float> multiply(const std::vector<float>& x, const std::vector<float>& w, std::int64_t rows,
                            std::int64_t cols) {
  std::vector<float> y(static_cast<std::size_t>(cols), 0.0f);
  for (std::int64_t i = 0; i < rows; ++i)
    for (std::int64_t j = 0; j < cols; ++j) y[j] += x[i] * w[i * cols + j];
  return y;
}

LinearSplitRecord run_split(bool column, const std::vector<float>& x, const std::vector<float>& w, std::int64_t d_out,
                            int ranks) {
  const std::int64_t d_in = static_cast<std::int64_t>(x.size());
  if (ranks < 1 || std::int64_t(w.size()) != d_in * d_out || (column ? d_out : d_in) % ranks != 0)
    throw std::invalid_argument("linear split: W must be d_in x d_out and the ranks must divide the split dimension");
  LinearSplitRecord record{column, std::vector<RankLinearRecord>(static_cast<std::size_t>(ranks))};
  MemoryLedger ledger;  // the links' slots; a few KiB
  TpGroup group(ranks, ledger);
  group.run([&](int r) {
    RankLinearRecord& mine = record.ranks[static_cast<std::size_t>(r)];
    if (column) {
      mine.w_rows = d_in;
      mine.w_cols = d_out / ranks;
      mine.first_col = r * mine.w_cols;
      mine.x = x;  // copied to every rank
    } else {
      mine.w_rows = d_in / ranks;
      mine.w_cols = d_out;
      mine.first_row = r * mine.w_rows;
      mine.x.assign(x.begin() + mine.first_row, x.begin() + mine.first_row + mine.w_rows);
    }
    for (std::int64_t i = 0; i < mine.w_rows; ++i)
      for (std::int64_t j = 0; j < mine.w_cols; ++j)
        mine.w.push_back(w[(mine.first_row + i) * d_out + mine.first_col + j]);
    mine.local = multiply(mine.x, mine.w, mine.w_rows, mine.w_cols);
    std::vector<float> buffer(static_cast<std::size_t>(d_out), 0.0f);
    if (column) {  // its slice goes to chunk r of y; all-gather fills in the rest
      std::copy(mine.local.begin(), mine.local.end(), buffer.begin() + mine.first_col);
      group.all_gather(r, buffer.data(), d_out);
    } else {
      buffer = mine.local;
      group.all_reduce(r, buffer.data(), d_out);
    }
    mine.result = std::move(buffer);
  });
  return record;
}

}  // namespace

LinearSplitRecord column_split(const std::vector<float>& x, const std::vector<float>& w, std::int64_t d_out,
                               int ranks) {
  return run_split(true, x, w, d_out, ranks);
}

LinearSplitRecord row_split(const std::vector<float>& x, const std::vector<float>& w, std::int64_t d_out, int ranks) {
  return run_split(false, x, w, d_out, ranks);
}

std::vector<float> course_x() { return {1, 2, 0, 1}; }
std::vector<float> course_w() { return {1, 2, 5, 6, 3, 4, 7, 8, 2, 0, 3, 1, -1, 4, 8, 2}; }

}  // namespace dlsys::tensor
