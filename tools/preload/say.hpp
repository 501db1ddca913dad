// The agent's one way to tell the user something: a line on standard error, prefixed
// "nnprof: ", written with one write(2) so that it does not interleave with the program's.
#pragma once

#include <unistd.h>

#include <string>

namespace nnprof::agent {

inline void say(const std::string& line) {
  const std::string text = "nnprof: " + line + "\n";
  [[maybe_unused]] const ssize_t n = write(STDERR_FILENO, text.data(), text.size());
}

}  // namespace nnprof::agent
