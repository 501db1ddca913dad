// End-to-end tests of the nnprof command-line tool: run the real binary, check output and
// exit status.
#include <gtest/gtest.h>

#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <string>

namespace {

struct CliRun {
  int status = -1;
  std::string output;  // stdout and stderr
};

CliRun run_cli(const std::string& args) {
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

TEST(Cli, DemoPrintsASummaryOfTheWorkload) {
  const CliRun r = run_cli("demo --steps 6 --hidden 64");
  ASSERT_EQ(r.status, 0) << r.output;
  for (const char* expected : {"train_step", "forward", "matmul", "load_batch", "Call hierarchy", "loader-0",
                               "activations", "Demo: 6 training steps"})
    EXPECT_NE(r.output.find(expected), std::string::npos) << "missing '" << expected << "' in:\n" << r.output;
}

TEST(Cli, BadArgumentsExitWith2AndAMessage) {
  for (const char* args : {"demo --steps zero", "demo --steps 0", "no-such-command", ""}) {
    const CliRun r = run_cli(args);
    EXPECT_EQ(r.status, 2) << args << "\n" << r.output;
    EXPECT_NE(r.output.find("nnprof:"), std::string::npos) << r.output;
    EXPECT_NE(r.output.find("--help"), std::string::npos) << r.output;
  }
}

TEST(Cli, HelpAndVersionSucceed) {
  EXPECT_EQ(run_cli("--help").status, 0);
  const CliRun v = run_cli("--version");
  EXPECT_EQ(v.status, 0);
  EXPECT_NE(v.output.find("nnprof 0."), std::string::npos) << v.output;
}

}  // namespace
