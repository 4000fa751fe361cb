#pragma once
// The live decoder's shape, shared by the CPU code and the CUDA kernels (this header stays C++17 and CUDA-clean).
namespace dlsys::decoder {

struct Shape {
  int d_model = 256;
  int layers = 4;
  int heads = 4;
  int kv_heads = 4;  // = heads: multi-head; 1: multi-query; between: grouped-query (heads % kv_heads == 0)
  int vocab = 256;
  int head_dim() const { return d_model / heads; }
  int kv_dim() const { return kv_heads * head_dim(); }  // width of one token's K (or V) in one layer
};

}  // namespace dlsys::decoder
