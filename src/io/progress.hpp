// A progress bar on stderr for long saves and exports, drawn only when stderr is a terminal.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

namespace nnprof::io {

class Progress {
 public:
  /// `total` units of work; nothing is drawn unless stderr is a terminal and the work is
  /// large enough (`min_total`) to be worth watching.
  Progress(std::string label, std::uint64_t total, std::uint64_t min_total = 200'000);
  ~Progress();
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

  /// Marks `n` more units done; redraws at most ten times a second.
  void advance(std::uint64_t n) {
    done_ += n;
    if (active_ && done_ >= next_check_) maybe_draw();
  }

 private:
  void maybe_draw();
  void draw();

  std::string label_;
  std::uint64_t total_;
  std::uint64_t done_ = 0;
  std::uint64_t next_check_ = 0;
  bool active_ = false;
  bool drawn_ = false;
  std::chrono::steady_clock::time_point last_draw_{};
};

}  // namespace nnprof::io
