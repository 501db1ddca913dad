// Runs the nnprof CLI built by this tree (NNPROF_CLI_PATH, set per test target) and captures
// its exit status and its output, for the end-to-end CLI tests.
#pragma once

#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <string>

#ifndef NNPROF_CLI_PATH
#error "a CLI test target defines NNPROF_CLI_PATH (the nnprof executable)"
#endif

struct CliRun {
  int status = -1;
  std::string output;  // stdout and stderr
};

inline CliRun run_cli(const std::string& args) {
  CliRun r;
  const std::string cmd = std::string(NNPROF_CLI_PATH) + " " + args + " 2>&1";
  FILE* pipe = popen(cmd.c_str(), "r");
  if (pipe == nullptr) return r;
  std::array<char, 4096> buf{};
  while (std::fgets(buf.data(), buf.size(), pipe) != nullptr) r.output += buf.data();
  const int raw = pclose(pipe);
  r.status = WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
  return r;
}
