// End-to-end tests of the nnprof command-line tool: run the real binary, check output and
// exit status.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/file.h>
#include <sys/wait.h>
#include <unistd.h>

#include <signal.h>

#include <array>
#include <chrono>
#include <future>
#include <thread>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli_run.hpp"
#include "nnprof/nnprof.hpp"
#include "test_directory.hpp"
#include "test_helpers.hpp"

namespace {

using nnprof::testing::slurp;

namespace fs = std::filesystem;

TEST(Cli, TrainingDemoPrintsASummaryOfTheWorkload) {
  const fs::path out = fs::temp_directory_path() / ("nnprof_cli_training_" + std::to_string(::getpid()));
  const CliRun r = run_cli("demo --workload training --steps 6 --hidden 64 --out " + out.string());
  fs::remove_all(out);
  ASSERT_EQ(r.status, 0) << r.output;
  for (const char* expected : {"train_step", "forward", "matmul", "load_batch", "Call tree", "loader-0",
                               "activations", "Demo: 6 training steps"})
    EXPECT_NE(r.output.find(expected), std::string::npos) << "missing '" << expected << "' in:\n" << r.output;
}

TEST(Cli, BadArgumentsExitWith2AndAMessage) {
  for (const char* args : {"demo --steps zero", "demo --steps 0", "demo --model large", "demo --inferences 0",
                           "no-such-command", ""}) {
    const CliRun r = run_cli(args);
    EXPECT_EQ(r.status, 2) << args << "\n" << r.output;
    EXPECT_NE(r.output.find("nnprof:"), std::string::npos) << r.output;
    EXPECT_NE(r.output.find("--help"), std::string::npos) << r.output;
  }
  // Checked before anything runs: the message names the limit or the workload that takes it.
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"demo report.unknown", "cannot tell the report format"},
      {"demo report.md 2 --inferences 3", "given twice"},
      {"demo --steps 3", "--workload training only"},
      {"demo --workload training --deep", "transformer workload only"},
  };
  for (const auto& [args, expected] : cases) {
    const CliRun r = run_cli(args + " --out /nonexistent-dir/demo");
    EXPECT_EQ(r.status, 2) << args << "\n" << r.output;
    EXPECT_NE(r.output.find(expected), std::string::npos) << args << "\n" << r.output;
  }
}

/// One transformer demo run shared by the file tests below: both models, 2 inferences of 6
/// tokens each (a fraction of a second in the release build, ~40 s under ASan at -O0).
/// CTest runs each test in a process of its own, so the run is shared across processes: the
/// first test to need it runs the demo under a file lock, in a directory beside the CLI named
/// after the CLI's modification time (a rebuilt CLI runs it again), and writes its status and
/// output there last; the others read them. Each test writes only files of its own names there.
constexpr int kDemoInferences = 2, kDemoTokens = 6, kDemoModels = 2;
struct DemoRun {
  fs::path dir;
  CliRun run;
};
const DemoRun& demo_run() {
  static const DemoRun demo = [] {
    const fs::path cli = NNPROF_CLI_PATH;
    const auto built = fs::last_write_time(cli).time_since_epoch().count();
    const fs::path d = cli.parent_path() / (".cli_test_demo_" + std::to_string(built));
    const std::string lock_path = d.string() + ".lock";
    const int lock = ::open(lock_path.c_str(), O_CREAT | O_RDWR | O_CLOEXEC, 0644);
    if (lock < 0 || ::flock(lock, LOCK_EX) != 0) ADD_FAILURE() << "cannot lock " << lock_path;
    DemoRun run{d, {}};
    if (fs::exists(d / "cli_run.status")) {
      std::ifstream(d / "cli_run.status") >> run.run.status;
      run.run.output = slurp(d / "cli_run.output");
    } else {
      for (const auto& old : fs::directory_iterator(cli.parent_path()))  // runs of earlier builds
        if (old.path().filename().string().starts_with(".cli_test_demo_") && old.path() != d &&
            old.path().string() != lock_path)
          fs::remove_all(old.path());
      fs::remove_all(d);
      run.run = run_cli("demo --inferences " + std::to_string(kDemoInferences) + " --tokens " +
                        std::to_string(kDemoTokens) + " --out " + d.string());
      std::ofstream(d / "cli_run.output") << run.run.output;
      std::ofstream(d / "cli_run.status") << run.run.status;
    }
    if (lock >= 0) ::close(lock);  // releases the lock
    EXPECT_EQ(run.run.status, 0) << run.run.output;
    return run;
  }();
  return demo;
}
const fs::path& demo_dir() { return demo_run().dir; }

TEST(Cli, DemoPrintsTheSummaryTheModelsAndTheFilesWritten) {
  const std::string& out = demo_run().run.output;
  for (const char* expected : {"Hot paths", "By total time", "Call tree", "model:small", "model:medium",
                               "generate_token", "attention", "470,528", "3,454,464", "tokens/s", "Files written:",
                               "report.html", "trace.json", "nnprof model-compare"})
    EXPECT_NE(out.find(expected), std::string::npos) << "missing '" << expected << "' in:\n" << out;
}

TEST(Cli, DemoWritesTheProfileAndEveryReportEachOfWhichLoads) {
  const fs::path& d = demo_dir();
  for (const char* f : {"profile.nnprof", "report.txt", "report.md", "report.json", "report.html", "report.csv",
                        "trace.json", "metrics.json", "metrics.png", "model-comparison.md"})
    EXPECT_GT(fs::exists(d / f) ? fs::file_size(d / f) : 0u, 100u) << f;
  const nnprof::Profile p = nnprof::Profile::load((d / "profile.nnprof").string());
  EXPECT_FALSE(p.call_tree.empty());
  EXPECT_TRUE(nlohmann::json::accept(slurp(d / "report.json")));
  EXPECT_TRUE(nlohmann::json::accept(slurp(d / "trace.json")));
  EXPECT_TRUE(nlohmann::json::accept(slurp(d / "metrics.json")));
  EXPECT_NE(slurp(d / "report.csv").find("generate_token"), std::string::npos);
  EXPECT_NE(slurp(d / "report.md").find("| "), std::string::npos);
  EXPECT_NE(slurp(d / "report.html").find("</html>"), std::string::npos);
  EXPECT_EQ(slurp(d / "metrics.png").substr(1, 3), "PNG");
  // Sampling runs wherever the process may use CPU timers; the demo says when it could not.
  if (demo_run().run.output.find("without CPU sampling") == std::string::npos) {
    const std::string svg = slurp(d / "flamegraph.svg");
    EXPECT_NE(svg.find("<svg"), std::string::npos);
    EXPECT_NE(svg.find("</svg>"), std::string::npos);
    const std::string pprof = slurp(d / "profile.pb.gz");
    ASSERT_GE(pprof.size(), 2u);
    EXPECT_EQ(static_cast<unsigned char>(pprof[0]), 0x1f) << "gzip magic";
    EXPECT_EQ(static_cast<unsigned char>(pprof[1]), 0x8b) << "gzip magic";
  }
}

TEST(Cli, ModelCompareReportsTheDemosModelsExactly) {
  const std::string profile = (demo_dir() / "profile.nnprof").string();
  const CliRun r = run_cli("model-compare " + profile);
  ASSERT_EQ(r.status, 0) << r.output;
  for (const char* expected : {"470,528", "3,454,464", "Tokens per second", "Scaling Efficiency", "medium/small"})
    EXPECT_NE(r.output.find(expected), std::string::npos) << "missing '" << expected << "' in:\n" << r.output;
  const fs::path md = demo_dir() / "models.md";
  const CliRun w = run_cli("model-compare " + profile + " -o " + md.string());
  ASSERT_EQ(w.status, 0) << w.output;
  const std::string text = slurp(md);
  EXPECT_NE(text.find(" 470,528 |"), std::string::npos) << text;
  EXPECT_NE(text.find(" 3,454,464 |"), std::string::npos) << text;
  const CliRun json = run_cli("model-compare " + profile + " --format json");
  ASSERT_EQ(json.status, 0) << json.output;
  const auto j = nlohmann::json::parse(json.output);
  EXPECT_TRUE(j.dump().find("3454464") != std::string::npos) << json.output;
}

TEST(Cli, ReportPrintsAndWritesEveryFormat) {
  const std::string profile = (demo_dir() / "profile.nnprof").string();
  const CliRun text = run_cli("report " + profile);
  ASSERT_EQ(text.status, 0) << text.output;
  EXPECT_NE(text.output.find("By total time"), std::string::npos);
  // --full-names shows functions' whole signatures: never shorter than the readable report.
  const CliRun full = run_cli("report " + profile + " --full-names");
  ASSERT_EQ(full.status, 0) << full.output;
  EXPECT_GE(full.output.size(), text.output.size());
  // --rows: every list as long as asked; 0 is refused with the range.
  const CliRun two = run_cli("report " + profile + " --rows 2");
  ASSERT_EQ(two.status, 0) << two.output;
  EXPECT_NE(two.output.find("Top 2 of "), std::string::npos) << two.output;
  const CliRun zero = run_cli("report " + profile + " --rows 0");
  EXPECT_EQ(zero.status, 2) << zero.output;
  EXPECT_NE(zero.output.find("--rows"), std::string::npos) << zero.output;
  const CliRun md = run_cli("report " + profile + " --format md");
  EXPECT_EQ(md.status, 0);
  EXPECT_NE(md.output.find("| "), std::string::npos);
  const fs::path out = demo_dir() / "again.json";
  const CliRun json = run_cli("report " + profile + " -o " + out.string());
  ASSERT_EQ(json.status, 0) << json.output;
  const auto j = nlohmann::json::parse(slurp(out));
  // One forward pass per generated token: inferences × tokens × models.
  EXPECT_EQ(j["timing"]["forward"]["count"], kDemoInferences * kDemoTokens * kDemoModels);
}

TEST(Cli, ExportWritesAChromeTrace) {
  const fs::path out = demo_dir() / "exported.trace.json";
  const CliRun r = run_cli("export " + (demo_dir() / "profile.nnprof").string() + " --to chrome -o " + out.string());
  ASSERT_EQ(r.status, 0) << r.output;
  const auto j = nlohmann::json::parse(slurp(out));
  int complete = 0;
  for (const auto& e : j["traceEvents"]) complete += e["ph"] == "X";
  EXPECT_GT(complete, 4 * 10);
}

TEST(Cli, QueryPrintsATable) {
  const CliRun r = run_cli("query " + (demo_dir() / "profile.nnprof").string() +
                           " \"select name, count(*) as calls from slice where name = 'forward' group by name\"");
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("forward"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find(std::to_string(kDemoInferences * kDemoTokens * kDemoModels)), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("(1 row)"), std::string::npos) << r.output;
}

TEST(Cli, BadProfilesAndPathsExitWith2AndSayWhy) {
  const fs::path d = demo_dir();
  std::ofstream(d / "garbage.nnprof") << std::string(4096, 'g');
  std::ofstream(d / "empty.nnprof").close();
  const std::string good = (d / "profile.nnprof").string();
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"report " + (d / "missing.nnprof").string(), "no such file"},
      {"report " + (d / "garbage.nnprof").string(), "not an nnprof profile"},
      {"report " + (d / "empty.nnprof").string(), "is empty"},
      {"report " + good + " -o /nonexistent-dir/x.html", "does not exist"},
      {"report " + good + " -o " + (d / "x.unknown").string(), "cannot tell the report format"},
      {"export " + good + " --to nonsense", "--to"},
      {"query " + good + " \"select * from no_such_table\"", "invalid query"},
  };
  for (const auto& [args, expected] : cases) {
    const CliRun r = run_cli(args);
    EXPECT_EQ(r.status, 2) << args << "\n" << r.output;
    EXPECT_NE(r.output.find(expected), std::string::npos) << args << "\n" << r.output;
  }
  EXPECT_FALSE(fs::exists("/nonexistent-dir/x.html"));
}

TEST(Cli, EmptyProfileIsRefusedWithAnExplanation) {
  const std::string path = (demo_dir() / "nothing.nnprof").string();
  nnprof::Profiler().save(path);  // a session that recorded nothing
  const CliRun r = run_cli("report " + path);
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_NE(r.output.find("empty profile"), std::string::npos) << r.output;
  // Queries still work on it: the tables exist and are empty.
  const CliRun q = run_cli("query " + path + " \"select count(*) as n from slice\"");
  EXPECT_EQ(q.status, 0) << q.output;
  EXPECT_NE(q.output.find("(1 row)"), std::string::npos) << q.output;
}

TEST(Cli, HelpAndVersionSucceed) {
  EXPECT_EQ(run_cli("--help").status, 0);
  const CliRun v = run_cli("--version");
  EXPECT_EQ(v.status, 0);
  EXPECT_NE(v.output.find("nnprof 0."), std::string::npos) << v.output;
}

TEST(Cli, FormatOptionsListEveryFormatOfTheTable) {
  struct Command {
    std::string name, inputs;
    nnprof::Document document;
  };
  const std::vector<Command> commands = {{"report", "a.nnprof", nnprof::Document::Profile},
                                         {"export", "a.nnprof", nnprof::Document::Profile},
                                         {"compare", "a.nnprof b.nnprof", nnprof::Document::Comparison},
                                         {"model-compare", "a.nnprof", nnprof::Document::ModelComparison}};
  for (const auto& [command, inputs, document] : commands) {
    const CliRun help = run_cli(command + " --help");
    ASSERT_EQ(help.status, 0) << help.output;
    EXPECT_NE(help.output.find("Formats (FORMAT):"), std::string::npos) << help.output;
    for (const nnprof::FormatInfo& info : nnprof::report_formats()) {
      const std::string name(info.name);
      if (!info.renders(document)) {
        EXPECT_EQ(help.output.find(std::string(info.description)), std::string::npos) << command << ": " << name;
        // Named, it is refused at once, with the formats that are accepted.
        const CliRun refused = run_cli(command + " " + inputs + " --format " + name);
        EXPECT_EQ(refused.status, 2) << refused.output;
        EXPECT_NE(refused.output.find("'" + name + "' cannot write a " + nnprof::to_string(document)), std::string::npos)
            << refused.output;
        continue;
      }
      // "  markdown, md  Markdown, for ... (.md or .markdown)"
      std::string names = name;
      for (const std::string_view alias : info.aliases) names += ", " + std::string(alias);
      const std::size_t line = help.output.find("  " + names + " ");
      ASSERT_NE(line, std::string::npos) << command << " --help does not list " << names << ":\n" << help.output;
      const std::string text = help.output.substr(line, help.output.find('\n', line) - line);
      EXPECT_NE(text.find(std::string(info.description)), std::string::npos) << text;
      for (const std::string_view extension : info.extensions)
        EXPECT_NE(text.find(std::string(extension)), std::string::npos) << extension << " missing: " << text;
    }
  }
  const CliRun unknown = run_cli("export a.nnprof --to bogus");
  EXPECT_EQ(unknown.status, 2);
  for (const nnprof::FormatInfo& info : nnprof::report_formats())
    EXPECT_NE(unknown.output.find(std::string(info.name)), std::string::npos) << unknown.output;
}

#ifdef NNPROF_RECORD_TESTS
// ---- nnprof record --memory on unmodified programs ----------------------------------------

fs::path record_dir() {
  static const fs::path dir = nnprof::testing::process_directory("cli_record");
  return dir;
}

/// Live blocks allocated by `function`, leaked or not: the reachability check is conservative
/// (a stale copy of a pointer in a reachable block keeps a leak "reachable", as in LSan).
nnprof::LeakSite blocks_from(const nnprof::Profile& p, const std::string& function) {
  nnprof::LeakSite total;
  for (const auto& l : p.leaks)
    if (l.caller != nnprof::kNone && p.frames[l.caller].function != nnprof::kNone &&
        p.str(p.frames[l.caller].function) == function) {
      total.caller = l.caller;
      total.blocks += l.blocks;
      total.bytes += l.bytes;
      if (!l.reachable) total.stack = 0;  // marks "at least one group was found leaked"
    }
  return total;
}

TEST(CliRecord, SmallCProgramLeakIsFoundAtItsSite) {
  const std::string out = (record_dir() / "small.nnprof").string();
  const CliRun r = run_cli("record --memory -o " + out + " -- " SMALL_LEAK_PATH);
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("small_leak done"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find(out), std::string::npos) << r.output;
  const nnprof::Profile p = nnprof::Profile::load(out);
  ASSERT_TRUE(p.heap.tracked);
  EXPECT_EQ(p.heap.source, "preload");
  // 10,000 churned blocks, the calloc, and 11 realloc steps (64 B .. 64 KiB) at least.
  EXPECT_GE(p.heap.alloc_count, 10'000u + 1 + 11 + 3);
  const nnprof::LeakSite leak = blocks_from(p, "leak_three");
  ASSERT_NE(leak.caller, nnprof::kNone) << r.output;
  EXPECT_EQ(leak.blocks, 3u);
  EXPECT_EQ(leak.bytes, 3072u);
  EXPECT_EQ(leak.stack, 0u) << "none of the three blocks was found unreachable";
  EXPECT_GE(p.heap.leaked_bytes, 1024u);
  const auto& frame = p.frames[leak.caller];
  ASSERT_NE(frame.file, nnprof::kNone);
  EXPECT_NE(p.str(frame.file).find("small_leak.c"), std::string::npos);
  // The global table is referenced from .bss: still reachable, not a leak.
  bool table_reachable = false;
  for (const auto& l : p.leaks)
    if (l.reachable && l.bytes == 512 * 8) table_reachable = true;
  EXPECT_TRUE(table_reachable);
}

TEST(CliRecord, MultiThreadedCppProgram) {
  const std::string out = (record_dir() / "threads.nnprof").string();
  const CliRun r = run_cli("record --memory -q -o " + out + " -- " THREADED_ALLOC_PATH);
  ASSERT_EQ(r.status, 0) << r.output;
  const nnprof::Profile p = nnprof::Profile::load(out);
  ASSERT_TRUE(p.heap.tracked);
  EXPECT_GE(p.threads.size(), 5u);  // main and four workers
  // 4 threads x 50 rounds x (200 map nodes + strings + one vector).
  EXPECT_GE(p.heap.alloc_count, 4u * 50 * 201);
  EXPECT_GT(p.heap.peak_bytes, 0u);
  EXPECT_FALSE(p.heap_samples.empty());
}

TEST(CliRecord, SigtermLeavesALoadableProfile) {
  const std::string out = (record_dir() / "term.nnprof").string();
  const fs::path pid_file = record_dir() / "term.pid";
  fs::remove(pid_file);
  auto run = std::async(std::launch::async, [&] {
    return run_cli("record --memory -q -o " + out + " -- " WAIT_FOR_SIGNAL_PATH " " + pid_file.string());
  });
  for (int i = 0; i < 200 && !fs::exists(pid_file); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  ASSERT_TRUE(fs::exists(pid_file));
  int pid = 0;
  std::ifstream(pid_file) >> pid;
  ASSERT_GT(pid, 0);
  ASSERT_EQ(::kill(pid, SIGTERM), 0);
  const CliRun r = run.get();
  EXPECT_EQ(r.status, 128 + SIGTERM) << r.output;
  EXPECT_NE(r.output.find("SIGTERM"), std::string::npos) << r.output;
  const nnprof::Profile p = nnprof::Profile::load(out);
  ASSERT_TRUE(p.heap.tracked);
  EXPECT_GE(p.heap.current_bytes, 100u * 4096);
}

TEST(CliRecord, SegfaultLeavesALoadableProfile) {
  const std::string out = (record_dir() / "crash.nnprof").string();
  const CliRun r = run_cli("record --memory -q -o " + out + " -- " SEGFAULT_PATH);
  EXPECT_EQ(r.status, 128 + SIGSEGV) << r.output;
  EXPECT_NE(r.output.find("crashed"), std::string::npos) << r.output;
  const nnprof::Profile p = nnprof::Profile::load(out);
  ASSERT_TRUE(p.heap.tracked);
  EXPECT_GE(p.heap.current_bytes, 10u * 2048);
}

TEST(CliRecord, BadInvocationsSayWhatToDo) {
  for (const char* args : {"record --memory", "record --memory -o /no/such/dir/x.nnprof -- /bin/true",
                           "record --sample-hz 20000 -- /bin/true", "record --sample-hz 0.5 -- /bin/true"}) {
    const CliRun r = run_cli(args);
    EXPECT_EQ(r.status, 2) << args << "\n" << r.output;
    EXPECT_NE(r.output.find("nnprof:"), std::string::npos) << r.output;
  }
  const CliRun missing = run_cli("record --memory -o " + (record_dir() / "x.nnprof").string() + " -- /no/such/program");
  EXPECT_NE(missing.status, 0);
  EXPECT_NE(missing.output.find("cannot run"), std::string::npos) << missing.output;
  const CliRun range = run_cli("record --sample-hz 20000 -- /bin/true");
  EXPECT_NE(range.output.find("1 to 10000"), std::string::npos) << range.output;
}

// ---- nnprof record --gpu on a machine without a usable GPU ---------------------------------

TEST(CliRecordGpu, WithoutAGpuSaysWhyAndStillWritesTheProfile) {
  if (nnprof::gpu_available().tracing()) GTEST_SKIP() << "a GPU is present: the gpu-labelled tests cover it";
  const std::string out = (record_dir() / "gpu.nnprof").string();
  const CliRun r = run_cli("record --gpu --sample-hz 200 -q -o " + out + " -- " CPU_SPIN_PATH);
  ASSERT_EQ(r.status, 0) << r.output;
  // The reason, as the library states it (no driver, no device, or built without CUDA).
  EXPECT_NE(r.output.find("GPU collection disabled"), std::string::npos) << r.output;
  const nnprof::Profile p = nnprof::Profile::load(out);
  EXPECT_FALSE(p.gpu.summary.traced);
  EXPECT_FALSE(p.cpu_samples.empty());  // everything else was profiled as usual
}

TEST(CliRecordSystem, SamplesTheProgramAndItsEnergyIntoTheProfile) {
  const std::string out = (record_dir() / "system.nnprof").string();
  const CliRun r = run_cli("record --system=50ms --sample-hz 100 -q -o " + out + " -- " CPU_SPIN_PATH);
  ASSERT_EQ(r.status, 0) << r.output;
  const nnprof::Profile p = nnprof::Profile::load(out);
  ASSERT_TRUE(p.system.monitored);
  EXPECT_EQ(p.system.interval_ms, 50u);
  EXPECT_GE(p.system.sample_ns.size(), 2u);  // the first sample at start, the last one at exit
  const nnprof::SystemTrack* user = p.system.track("process.cpu.user");
  ASSERT_NE(user, nullptr);
  EXPECT_EQ(user->unit, "percent");
  EXPECT_EQ(user->values.size(), p.system.sample_ns.size());
  ASSERT_FALSE(p.system.energy.empty());  // measured where the machine allows, else modelled
  for (const nnprof::EnergyDomain& d : p.system.energy) EXPECT_GE(d.joules, 0.0) << d.name;
  EXPECT_FALSE(p.cpu_samples.empty());  // everything else was profiled as usual

  const CliRun bad = run_cli("record --system=5ms -q -o " + out + " -- /bin/true");
  EXPECT_NE(bad.status, 0);
  EXPECT_NE(bad.output.find("--system=5ms is not an interval from 10ms to 1h"), std::string::npos) << bad.output;
}

// ---- nnprof record with CPU sampling ---------------------------------------------------------

/// Samples of `thread` (an index) whose stack has a frame of `function`.
std::uint64_t samples_in(const nnprof::Profile& p, const std::string& function, std::uint32_t thread = nnprof::kNone) {
  std::uint64_t n = 0;
  for (const auto& s : p.cpu_samples) {
    if (s.stack == nnprof::kNone || (thread != nnprof::kNone && s.thread != thread)) continue;
    for (std::uint32_t f : p.stacks[s.stack].frames)
      if (p.frames[f].function != nnprof::kNone && p.str(p.frames[f].function) == function) {
        ++n;
        break;
      }
  }
  return n;
}

TEST(CliRecordCpu, FindsWorkOfAThreadCreatedLater) {
  const std::string out = (record_dir() / "cpu.nnprof").string();
  const CliRun r = run_cli("record --sample-hz 500 -o " + out + " -- " CPU_SPIN_PATH);
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("cpu_spin done"), std::string::npos) << r.output;
  const nnprof::Profile p = nnprof::Profile::load(out);
  ASSERT_TRUE(p.cpu.sampled);
  EXPECT_FALSE(p.heap.tracked) << "CPU sampling alone leaves malloc alone";
  EXPECT_EQ(r.output.find("allocation hooks"), std::string::npos) << "no heap warning when the heap is not asked for";
  EXPECT_GT(samples_in(p, "main_thread_spin"), 30u);
  // The late thread's samples are on a thread other than the main one.
  std::uint32_t late_thread = nnprof::kNone;
  for (const auto& s : p.cpu_samples)
    if (s.stack != nnprof::kNone && p.frames[p.stacks[s.stack].frames.front()].function != nnprof::kNone &&
        samples_in(p, "late_thread_spin", s.thread) > 0) {
      late_thread = s.thread;
      break;
    }
  ASSERT_NE(late_thread, nnprof::kNone) << "no samples in late_thread_spin";
  EXPECT_GT(samples_in(p, "late_thread_spin", late_thread), 40u);
  EXPECT_NE(p.threads[late_thread].os_tid, p.meta.pid);
  // The report of `nnprof report` shows them too.
  const CliRun report = run_cli("report " + out);
  EXPECT_EQ(report.status, 0) << report.output;
  EXPECT_NE(report.output.find("late_thread_spin"), std::string::npos) << report.output;
  // Every CPU export, chosen by the output's extension.
  for (const char* ext : {".folded", ".pb.gz", ".svg"}) {
    const std::string file = (record_dir() / ("cpu" + std::string(ext))).string();
    const CliRun e = run_cli("export " + out + " -o " + file);
    EXPECT_EQ(e.status, 0) << e.output;
    EXPECT_GT(fs::file_size(file), 100u) << file;
  }
  std::ifstream folded(record_dir() / "cpu.folded");
  const std::string text((std::istreambuf_iterator<char>(folded)), std::istreambuf_iterator<char>());
  EXPECT_NE(text.find("late_thread_spin;"), std::string::npos) << text;
}

TEST(CliRecordCpu, ProgramThatExecsAnotherIsProfiledAfterTheExec) {
  const std::string out = (record_dir() / "exec.nnprof").string();
  const CliRun r = run_cli("record -q -o " + out + " -- " CPU_SPIN_PATH " exec");
  ASSERT_EQ(r.status, 0) << r.output;
  const nnprof::Profile p = nnprof::Profile::load(out);
  EXPECT_GT(samples_in(p, "late_thread_spin"), 10u);
}

TEST(CliRecordCpu, StrippedProgramWithoutFramePointersGivesHonestFrames) {
  const std::string out = (record_dir() / "stripped.nnprof").string();
  const CliRun r = run_cli("record -q --sample-hz 500 -o " + out + " -- " CPU_SPIN_STRIPPED_PATH);
  ASSERT_EQ(r.status, 0) << r.output;
  const nnprof::Profile p = nnprof::Profile::load(out);
  ASSERT_GT(p.cpu_samples.size(), 50u);
  // The dynamic symbol table survives stripping, the local symbols and line tables do not:
  // frames of the program have a module but may lack a function or a line. None is invented.
  bool program_frame = false;
  for (const auto& f : p.frames) {
    if (f.module == nnprof::kNone || p.str(f.module).find("cpu_spin_stripped") == std::string::npos) continue;
    program_frame = true;
    EXPECT_EQ(f.file, nnprof::kNone);
    EXPECT_EQ(f.line, 0u);
  }
  EXPECT_TRUE(program_frame);
}

TEST(CliRecordCpu, CommandThatFailsOrIsMissing) {
  const CliRun fails = run_cli("record -q -o " + (record_dir() / "false.nnprof").string() + " -- /bin/false");
  EXPECT_EQ(fails.status, 1) << fails.output;  // the program's own status is passed on
  EXPECT_NE(fails.output.find("exited with status 1"), std::string::npos) << fails.output;
  const CliRun missing = run_cli("record -q -o " + (record_dir() / "none.nnprof").string() + " -- /no/such/program");
  EXPECT_NE(missing.status, 0);
  EXPECT_NE(missing.output.find("cannot run"), std::string::npos) << missing.output;
}

TEST(CliRecordCpu, SegfaultKeepsTheSamplesSoFar) {
  const std::string out = (record_dir() / "cpu_crash.nnprof").string();
  const CliRun r = run_cli("record -q --memory --sample-hz 100 -o " + out + " -- " SEGFAULT_PATH);
  EXPECT_EQ(r.status, 128 + SIGSEGV) << r.output;
  const nnprof::Profile p = nnprof::Profile::load(out);
  EXPECT_TRUE(p.cpu.sampled);
  EXPECT_TRUE(p.heap.tracked);
}
#endif

}  // namespace
