// Zero-code PyTorch operators in the preload agent (torch_ops.cpp).
#pragma once

namespace nnprof::agent {

/// Reads NNPROF_RECORD_TORCH and, unless it is 0, starts nnprof's operator observer now if
/// the process has LibTorch loaded, or as soon as it loads it.
void start_torch_ops() noexcept;

}  // namespace nnprof::agent
