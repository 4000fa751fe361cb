#!/usr/bin/env python3
"""The peers the lab's GPU kernels are held against, timed on the same GPU in the same session: PyTorch's matrix
products (cuBLAS), its attention kernels (SDPA flash, memory-efficient, standard), GEMV and pointwise passes, and a
device copy. PyTorch is a peer here, never a dependency of the lab: this script is only run where it is installed.

Each figure is the median of `repeats` calls timed with CUDA events after warm-up calls, on random inputs. Usage:
    python3 bench/torch_peers.py [--json FILE]
"""
import argparse
import json
import statistics
import sys

try:
    import torch
    import torch.nn.functional as F
except ImportError:
    print("torch_peers: PyTorch is not installed here; no peers to time")
    sys.exit(77)


def median_ms(call, repeats=20, warmup=3, before=None):
    """Median wall time of `call` on the GPU in milliseconds; `before` runs untimed before each call."""
    for _ in range(warmup):
        call()
    times = []
    for _ in range(repeats):
        if before:
            before()
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        call()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end))
    return statistics.median(times)


def l2_flusher():
    """Overwrites twice the L2 cache, so the next call reads its operands from device memory."""
    l2_bytes = torch.cuda.get_device_properties(0).L2_cache_size
    scratch = torch.empty(2 * l2_bytes, dtype=torch.uint8, device="cuda")
    return lambda: scratch.zero_()


def matmul_peers(results):
    n = 4096
    flop = 2.0 * n**3
    a32, b32 = torch.randn(n, n, device="cuda"), torch.randn(n, n, device="cuda")
    torch.backends.cuda.matmul.allow_tf32 = False
    results["gemm_fp32_4096_tflops"] = flop / median_ms(lambda: a32 @ b32) / 1e9
    torch.backends.cuda.matmul.allow_tf32 = True
    results["gemm_tf32_4096_tflops"] = flop / median_ms(lambda: a32 @ b32) / 1e9
    torch.backends.cuda.matmul.allow_tf32 = False
    a16, b16 = a32.bfloat16(), b32.bfloat16()
    results["gemm_bf16_4096_tflops"] = flop / median_ms(lambda: a16 @ b16) / 1e9


def standard_attention(q, k, v, causal):
    scores = (q @ k.transpose(-2, -1)) * q.shape[-1] ** -0.5
    if causal:
        n = q.shape[-2]
        mask = torch.ones(n, n, dtype=torch.bool, device=q.device).triu(1)
        scores = scores.masked_fill(mask, float("-inf"))
    return torch.softmax(scores.float(), dim=-1).to(q.dtype) @ v


def attention_peers(results):
    from torch.nn.attention import SDPBackend, sdpa_kernel

    n, d, heads = 4096, 64, 16
    for dtype, name in ((torch.bfloat16, "bf16"), (torch.float32, "fp32")):
        q, k, v = (torch.randn(1, heads, n, d, device="cuda", dtype=dtype) for _ in range(3))
        for causal in (False, True):
            tag = f"attention_{name}{'_causal' if causal else ''}_n4096_d64_h16"
            results[f"{tag}_standard_ms"] = median_ms(lambda: standard_attention(q, k, v, causal), repeats=10)
            backends = [(SDPBackend.EFFICIENT_ATTENTION, "memory_efficient")]
            if dtype != torch.float32:
                backends.insert(0, (SDPBackend.FLASH_ATTENTION, "sdpa_flash"))
            for backend, label in backends:
                with sdpa_kernel(backend):
                    results[f"{tag}_{label}_ms"] = median_ms(
                        lambda: F.scaled_dot_product_attention(q, k, v, is_causal=causal))


def memory_peers(results):
    flush = l2_flusher()
    rows = cols = 8192
    w32, x32 = torch.randn(rows, cols, device="cuda"), torch.randn(cols, device="cuda")
    w16, x16 = w32.half(), x32.half()
    results["gemv_fp32_8192_us"] = 1e3 * median_ms(lambda: w32 @ x32, before=flush)
    results["gemv_fp16_8192_us"] = 1e3 * median_ms(lambda: w16 @ x16, before=flush)
    for n in (4096, 8192):
        x, b = torch.randn(n, n, device="cuda"), torch.randn(n, device="cuda")
        out = torch.empty_like(x)
        bytes_rw = 2 * x.numel() * 4
        ms = median_ms(lambda: torch.relu(x + b))
        results[f"add_relu_{n}_gbps"] = bytes_rw / ms / 1e6  # x read, y written (the temporary x + b not counted)
        ms = median_ms(lambda: torch.relu(x))
        results[f"relu_{n}_gbps"] = bytes_rw / ms / 1e6
        ms = median_ms(lambda: out.copy_(x))
        results[f"copy_{n}_gbps"] = bytes_rw / ms / 1e6


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", help="also write the figures here")
    args = parser.parse_args()
    if not torch.cuda.is_available():
        print("torch_peers: no GPU answers; nothing to time")
        sys.exit(77)
    torch.manual_seed(0)
    results = {"device": torch.cuda.get_device_name(0), "torch": torch.__version__}
    for part in (matmul_peers, attention_peers, memory_peers):
        part(results)
    for key, value in results.items():
        print(f"{key:<52} {value:.4g}" if isinstance(value, float) else f"{key:<52} {value}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)


if __name__ == "__main__":
    main()
