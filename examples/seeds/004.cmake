# Seed 004: the README of SmallMind's CodeProfiler (.NET), /work/shared/seeds/004_8d2e793e54051293.txt.
# Included by CMakeLists.txt (before its tests-only part, so that the programs build either way);
# tests are named seeds.004.<row>. Most of its rows are command lines of the profiler of a small
# transformer: here they run the real `nnprof` CLI (nnprof demo profiles nnprof's own Small and
# Medium transformer), with fewer tokens than the seed's so that each test stays short, and check
# the files and sections the seed promises. The two code blocks of "Programmatic Usage" are
# programs against the public API.

foreach(program IN ITEMS basic_profiling nested_profiling)
  nnprof_seed_program(seed_004_${program} 004_${program}.cpp)
endforeach()

if(NOT NNPROF_BUILD_TESTS)
  return()
endif()

set(seed_004_dir ${CMAKE_CURRENT_BINARY_DIR})
set(seed_004_number "[0-9.,]+")
set(verdict "(IMPROVED|REGRESSED|STABLE)")

# "Basic Profiling": 3 inferences of 50 tokens per model (nnprof demo's defaults too), the report
# in profile-report.md.
nnprof_seed_test(seeds.004.basic_profiling PROGRAM nnprof_cli ARGS demo profile-report.md --out out
  EXPECT "\n  small +470,528 +128 +2 +4 +64 +3 " "\n  medium +3,454,464 +256 +4 +8 +128 +3 "
  FILES profile-report.md:markdown out/report.html:html out/report.json:json
  FILE_EXPECT "out/profile.nnprof|^SQLite format 3" "profile-report.md|\n## Hot paths\n" "profile-report.md|\\| generate_token +\\| +300 \\|")

# "Custom Parameters": `<output-file> <num-inferences> <tokens-per-inference>` as positional
# arguments (2 inferences of 8 tokens here, for the seed's 5 of 100).
nnprof_seed_test(seeds.004.custom_parameters PROGRAM nnprof_cli ARGS demo my-profile.md 2 8 --out out
  EXPECT "\n  small +470,528 +128 +2 +4 +64 +2 " "\n  medium +3,454,464 +256 +4 +8 +128 +2 " "\n  my-profile.md\n"
  FILES my-profile.md:markdown
  FILE_EXPECT "out/profile.nnprof|^SQLite format 3" "my-profile.md|\\| generate_token +\\| +32 \\|")

# "Enhanced Profiling" and "Deep Profiling": the SIMD kernels' microbenchmarks (MatMul at
# 128, 256 and 512, GELU, Softmax) with their GFLOP/s, a per-layer profile, both models; the
# hot-path table with each scope's heap bytes (the seed's "Alloc (MB)" column).
nnprof_seed_test(seeds.004.enhanced_profiling PROGRAM nnprof_cli ARGS demo --deep enhanced-profile-report.md 1 4 --out out
  EXPECT "\nKernel microbenchmarks \\(one thread\\):\n" "\n  matmul 128x128x128 " "\n  matmul 512x512x512 "
         "\n  gelu [0-9]+ " "\n  softmax [0-9]+ " "\nPer-layer profile "
  FILES enhanced-profile-report.md:markdown
  FILE_EXPECT "enhanced-profile-report.md|\\| Allocated \\| Heap allocated \\|"
              "enhanced-profile-report.md|\\| model:medium +\\|" "enhanced-profile-report.md|\\| model:small +\\|")

# "Standard Profile Report": system information, hot paths by time (with min/max and each
# scope's heap bytes), top allocators by memory, most called, the call hierarchy with the
# callers of each scope, and the insights: hot-path concentration, high-allocation scopes,
# call frequency.
nnprof_seed_test(seeds.004.standard_report PROGRAM nnprof_cli ARGS demo profile-report.md 1 4 --out out
  FILES profile-report.md:markdown
  FILE_EXPECT "profile-report.md|\\| Host +\\| [^\n]*Linux" "profile-report.md|\\| CPU +\\| [^\n]*logical CPUs"
              "profile-report.md|\n## Hot paths\n\n### By total time\n"
              "profile-report.md|\\| Calls \\| +Total \\| % of instrumented time \\|[^\n]*\\| +Min \\| +Max \\|[^\n]*\\| Heap allocated \\|"
              "profile-report.md|\n### Top allocators\n" "profile-report.md|\n## Most called\n"
              "profile-report.md|\n## Call tree\n" "profile-report.md|\n## Callers\n"
              "profile-report.md|\n- \\*\\*forward\\*\\*: Calls 8, [^\n]*\n  - \\*\\*generate_token\\*\\*: Calls 8,"
              "profile-report.md|\n## Insights\n"
              "profile-report.md|\n- The top 5 scopes by self time account for ${seed_004_number}% of instrumented time\\.\n"
              "profile-report.md|\n- Highest heap allocation: \\*\\*load_weights\\*\\* [0-9.]+ MiB \\(${seed_004_number}% of all heap bytes allocated, [0-9.]+ MiB per call\\)"
              "profile-report.md|\n- (No scope was called 1,000 times or more\\.|High call frequency: )")
set_tests_properties(seeds.004.standard_report seeds.004.enhanced_profiling PROPERTIES
  SKIP_REGULAR_EXPRESSION "the demo runs without heap tracking: ")

# "Profile Comparison": two runs compared (the basic and the custom one): the overall summary
# (runtime, heap allocations), the verdict, the top 10 improvements and regressions, every
# scope in both runs.
set_tests_properties(seeds.004.basic_profiling PROPERTIES FIXTURES_SETUP seed_004_basic)
set_tests_properties(seeds.004.custom_parameters PROPERTIES FIXTURES_SETUP seed_004_custom)
nnprof_seed_test(seeds.004.profile_comparison PROGRAM nnprof_cli
  ARGS compare ${seed_004_dir}/seeds.004.basic_profiling/out/profile.nnprof
       ${seed_004_dir}/seeds.004.custom_parameters/out/profile.nnprof -o profile-comparison-report.md
  FILES profile-comparison-report.md:markdown
  FILE_EXPECT "profile-comparison-report.md|\n## Summary\n\nVerdict: ${verdict}: "
              "profile-comparison-report.md|\n\\| Runtime \\(session wall time\\) +\\| [^\n]+ \\| [^\n]+ \\| [+-]"
              "profile-comparison-report.md|\n\\| Heap allocated +\\|"
              "profile-comparison-report.md|\n## Top 10 improvements\n" "profile-comparison-report.md|\n## Top 10 regressions\n"
              "profile-comparison-report.md|\n## All scopes in both runs\n" "profile-comparison-report.md|\\| generate_token +\\| +300 \\| +32 \\|")
set_tests_properties(seeds.004.profile_comparison PROPERTIES FIXTURES_REQUIRED "seed_004_basic;seed_004_custom")

# "Model-Only Comparison": the Small and Medium models of one run: specifications, performance
# metrics (throughput, latency, memory), scaling efficiency with its verdict, the forward pass.
nnprof_seed_test(seeds.004.model_comparison PROGRAM nnprof_cli
  ARGS model-compare ${seed_004_dir}/seeds.004.basic_profiling/out/profile.nnprof -o model-comparison-report.md
  FILES model-comparison-report.md:markdown
  FILE_EXPECT "model-comparison-report.md|\n## Model Specifications\n"
              "model-comparison-report.md|\\| small +\\| +128 \\| +2 \\| +4 \\| +470,528 \\| +64 \\|"
              "model-comparison-report.md|\\| medium +\\| +256 \\| +4 \\| +8 \\| +3,454,464 \\| +128 \\|"
              "model-comparison-report.md|\n## Performance Metrics\n" "model-comparison-report.md|Tokens per second"
              "model-comparison-report.md|\n## Scaling Efficiency\n" "model-comparison-report.md|\n## Forward Pass Analysis\n")
set_tests_properties(seeds.004.model_comparison PROPERTIES FIXTURES_REQUIRED seed_004_basic)

# "Programmatic Usage": a scope, the hot paths, the report; nested scopes and their caller.
nnprof_seed_test(seeds.004.programmatic_basic PROGRAM seed_004_basic_profiling
  EXPECT "^MyOperation: 4 calls, [1-9][0-9]*ns\nwrote report.md "
  FILES report.md:markdown
  FILE_EXPECT "report.md|\\| MyOperation +\\| +4 \\|")
nnprof_seed_test(seeds.004.nested_profiling PROGRAM seed_004_nested_profiling
  EXPECT "\nInnerOperation\n  Called by: OuterOperation \\(3 times\\)\n"
         "(^|\n)OuterOperation\n  Called by: \\(top level\\) \\(3 times\\)\n"
  FILES report.md:markdown
  FILE_EXPECT "report.md|\n## Callers\n" "report.md|\n- \\*\\*InnerOperation\\*\\*: Calls 3, [^\n]*\n  - \\*\\*OuterOperation\\*\\*: Calls 3,")
