#include "io/progress.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdio>

#include <fmt/format.h>

namespace nnprof::io {

Progress::Progress(std::string label, std::uint64_t total, std::uint64_t min_total)
    : label_(std::move(label)), total_(total) {
  active_ = total >= min_total && isatty(STDERR_FILENO) == 1;
  next_check_ = std::max<std::uint64_t>(total / 1000, 1);
}

Progress::~Progress() {
  if (drawn_) {
    done_ = total_;
    draw();
    std::fputs("\n", stderr);
  }
}

void Progress::maybe_draw() {
  next_check_ = done_ + std::max<std::uint64_t>(total_ / 1000, 1);
  const auto now = std::chrono::steady_clock::now();
  if (drawn_ && now - last_draw_ < std::chrono::milliseconds(100)) return;
  last_draw_ = now;
  draw();
}

void Progress::draw() {
  constexpr int kWidth = 30;
  const double fraction = total_ == 0 ? 1.0 : std::min(1.0, static_cast<double>(done_) / static_cast<double>(total_));
  const int filled = static_cast<int>(fraction * kWidth);
  fmt::print(stderr, "\r{} [{}{}] {:3.0f}%", label_, std::string(static_cast<std::size_t>(filled), '#'),
             std::string(static_cast<std::size_t>(kWidth - filled), '.'), fraction * 100.0);
  std::fflush(stderr);
  drawn_ = true;
}

}  // namespace nnprof::io
