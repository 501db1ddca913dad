# Seed 001: the "Profiling" guide of Democratising (Rust), /work/shared/seeds/001_5e627c460ef3551f.txt.
# Included by CMakeLists.txt (before its tests-only part, so that the programs build either way);
# tests are named seeds.001.<block>. Each of its twelve blocks has a program here.

set(NNPROF_SEED_001_PROGRAMS
  cpu_profiling cuda_profiling multi_gpu trace_collection custom_metrics bottleneck_detection
  optimization_recommendations timeline_visualization)
foreach(program IN LISTS NNPROF_SEED_001_PROGRAMS)
  nnprof_seed_program(seed_001_${program} 001_${program}.cpp)
endforeach()
# The web interface (nnprof::LiveServer) is read back with cpp-httplib's client.
nnprof_seed_program(seed_001_interactive_analysis 001_interactive_analysis.cpp)
target_link_libraries(seed_001_interactive_analysis PRIVATE PkgConfig::HTTPLIB)
# Heap tracking needs the allocation hooks of nnprof::memory.
foreach(program IN ITEMS memory_profiling systematic_profiling continuous_profiling)
  nnprof_seed_program(seed_001_${program} 001_${program}.cpp)
  target_link_libraries(seed_001_${program} PRIVATE nnprof::memory)
endforeach()

if(NOT NNPROF_BUILD_TESTS)
  return()
endif()

set(number "[0-9.]+(e[+-][0-9]+)?")

# Continuous profiling (docs/CONTINUOUS.md): one window, closed by stop(), with every step in it.
nnprof_seed_test(seeds.001.continuous_profiling PROGRAM seed_001_continuous_profiling
  EXPECT "^Continuous profile: 1 window\\(s\\) of 60 s, step scope train_step, 200 steps \\(checksum "
         "\nSeries analysed: [1-9][0-9]*, anomalies: 0\n")

nnprof_seed_test(seeds.001.cpu_profiling PROGRAM seed_001_cpu_profiling
  # The hottest function (listed first) is the multiplication, inlined or not.
  EXPECT "^CPU Profile:\nTotal time: ${number}ms\nHot functions:\n[^\n]*(matmul|compute_intensive_operation)[^\n]*: ${number}ms \\(${number}% of total time\\)\n"
  FORBID "samples: 0,")

nnprof_seed_test(seeds.001.memory_profiling PROGRAM seed_001_memory_profiling
  # 1 + 4 + 2 MiB live at once (the peak is exact to within 64 KiB per thread); the 4 MiB
  # vector is the largest block.
  EXPECT "^Memory Profile:\nPeak usage: 7(\\.[0-9]+)?MB\nTotal allocations: [1-9][0-9][0-9]+\nLargest allocation: 4MB\n")
set_tests_properties(seeds.001.memory_profiling PROPERTIES SKIP_REGULAR_EXPRESSION "heap tracking unavailable: ")

# Without a GPU the collector says why, in the words of tests/test_gpu_no_driver.cpp.
nnprof_seed_test(seeds.001.interactive_analysis PROGRAM seed_001_interactive_analysis
  EXPECT "^Live profile at http://127\\.0\\.0\\.1:[0-9]+/\n"
         "\nnnprof_steps_total\\{scope=\"train_step\"\\} 50\n"
         "\nnnprof_step_items_total\\{scope=\"train_step\"\\} 1600\n")

nnprof_seed_test(seeds.001.cuda_profiling PROGRAM seed_001_cuda_profiling
  EXPECT "(^CUDA profiling unavailable: [^\n]*GPU collection disabled|CUDA Kernel Profile:\n)")
nnprof_seed_test(seeds.001.multi_gpu PROGRAM seed_001_multi_gpu
  EXPECT "(^multi-GPU profiling unavailable: [^\n]*GPU collection disabled|\ndevices with GPU work: [0-9]+\n)")

nnprof_seed_test(seeds.001.trace_collection PROGRAM seed_001_trace_collection
  EXPECT "^Critical path operations:\n"
         "\n(matmul|output_projection): ${number}us \\(${number}% of total time\\)\n"
         "\nrelu: ${number}us \\(${number}% of total time\\)\n"
  FILES profile.json:json profile.trace.json:json
  FILE_EXPECT "profile.json|\"schema\": \"nnprof-report\"" "profile.trace.json|\"traceEvents\""
              "profile.trace.json|\"name\": ?\"output_projection\"")

nnprof_seed_test(seeds.001.custom_metrics PROGRAM seed_001_custom_metrics
  EXPECT "^matrix_multiplies: 20\nactivation_sparsity: 20 observations, mean 0\\.[0-9]+\n"
         "\nwrote metrics.json and metrics.png"
  FILES metrics.json:json
  FILE_EXPECT "metrics.json|\"name\": ?\"activation_sparsity\"" "metrics.json|\"name\": ?\"memory_usage\""
              "metrics.png|^.PNG")

# The roofs come from a machine file of the build tree, measured briefly by the first program
# that needs it, so that the tests neither wait for a full measurement nor write to $HOME.
nnprof_seed_test(seeds.001.bottleneck_detection PROGRAM seed_001_bottleneck_detection
  EXPECT "^Performance bottlenecks:\n" "\nmatmul: (memory|compute) bound \\(${number}% of theoretical peak\\)\n"
         "\nrelu: memory bound \\(${number}% of theoretical peak\\)\n")
nnprof_seed_test(seeds.001.optimization_recommendations PROGRAM seed_001_optimization_recommendations
  EXPECT "^Optimization recommendations:\nPriority 1: [^\n]+\nExpected improvement: [^\n]*${number}x\nImplementation:\n- "
  FORBID "Priority 0:")
set_tests_properties(seeds.001.bottleneck_detection seeds.001.optimization_recommendations PROPERTIES
  ENVIRONMENT "NNPROF_MACHINE_FILE=${CMAKE_CURRENT_BINARY_DIR}/seed_001_machine.json"
  RESOURCE_LOCK seed_001_machine_file)

nnprof_seed_test(seeds.001.systematic_profiling PROGRAM seed_001_systematic_profiling
  EXPECT "^computation: [1-9][0-9]* CPU samples" "\nPriority 1: (compute|memory|data loading): "
         "\nwrote profiling_report.html \\([23] profiles\\)\n"
  FILES profiling_report.html:html
  FILE_EXPECT "profiling_report.html|<section id=\"p1-cpu\"><h2>compute: CPU samples</h2>" "profiling_report.html|data loading"
              "profiling_report.html|Recommendations, in order of action")

nnprof_seed_test(seeds.001.timeline_visualization PROGRAM seed_001_timeline_visualization
  EXPECT "\ntrack CPU: recorded \\(scopes per thread, CPU samples at " "\ntrack GPU: (recorded|not recorded \\([^\n]*GPU collection disabled)"
         "\ntrack Memory: not recorded \\(heap tracking unavailable: [^\n]*only named memory counters"
         "\nwrote timeline.json and flamegraph.svg"
  FILES timeline.json:json
  FILE_EXPECT "timeline.json|\"name\": ?\"forward\"" "timeline.json|memory: activations" "flamegraph.svg|<svg")
