# Seeds 002 (kitsune's profiler, /work/shared/seeds/002_73fdf24cf7b4cf38.txt) and 003
# (cookbook's PerformanceProfiler, /work/shared/seeds/003_e20fd3b68f08cb4c.txt): the blocks
# whose C++ form means something; the Python-only parts (torch models, context managers of
# their own) belong to the Python package. compare_runs is nnprof::compare of two profiles;
# the GPU blocks (CUDA events, streams, GPU memory) say why they stop where no GPU can be
# traced, as tests/test_gpu_no_driver.cpp words it. Included by
# CMakeLists.txt before its tests-only part; tests are seeds.002.<block> and seeds.003.<block>.

foreach(program IN ITEMS comprehensive_metrics custom_reporter identifying_bottlenecks json_report memory_profiling
                        basic_profiling cuda_event_timing allocation_timeline stream_profiling comparing_configurations)
  nnprof_seed_program(seed_002_${program} 002_${program}.cpp)
endforeach()
foreach(program IN ITEMS get_current_memory multi_operation gpu_memory_monitoring memory_leak_detection flops_estimation
                        error_handling)
  nnprof_seed_program(seed_003_${program} 003_${program}.cpp)
endforeach()

if(NOT NNPROF_BUILD_TESTS)
  return()
endif()

nnprof_seed_test(seeds.002.comprehensive_metrics PROGRAM seed_002_comprehensive_metrics
  EXPECT "^iteration: 10 timed, mean [0-9.e+]+ ns\nloss: 10 observations\niteration scope: 10 calls\n"
         "\nnnprof report\n" "iteration" "batch_size")

nnprof_seed_test(seeds.002.custom_reporter PROGRAM seed_002_custom_reporter
  EXPECT "\nwrote metrics.json, report.html, metrics.csv and metrics_summary.csv\n"
  FILES metrics.json:json report.html:html
  FILE_EXPECT "metrics.json|\"name\": ?\"loss\""
              "metrics.csv|^metric,kind,unit,time_ns,value,thread\r\nloss,histogram,,[0-9]+,[-0-9.e+]+,0\r\n"
              "metrics.csv|\r\nsamples,counter,,[0-9]+,128,0\r\n"
              "metrics.csv|\r\nstep,histogram,ns,[0-9]+,[0-9]+,0\r\n"
              "metrics_summary.csv|^metric,kind,unit,count,sum,min,max,mean,stddev,p50,p90,p95,p99,percentile_points,last,points_dropped\r\n"
              "metrics_summary.csv|\r\nsamples,counter,,8,128,16,16,16,0,16,16,16,16,8,128,0\r\n")

nnprof_seed_test(seeds.002.identifying_bottlenecks PROGRAM seed_002_identifying_bottlenecks
  EXPECT "^Bottleneck: forward\n")

nnprof_seed_test(seeds.002.json_report PROGRAM seed_002_json_report
  EXPECT "^peak allocated: 9216 bytes\n"
  FILES profile.json:json
  FILE_EXPECT "profile.json|\"forward_pass\": {[^}]*\"mean_ns\""
              "profile.json|\"throughput\": {\n +\"iteration\": {\n +\"items\": 320,\n +\"total_ns\": [0-9]+,\n +\"items_per_second\": [0-9.e+]+,\n +\"calls\": 10,\n +\"calls_per_second\": [0-9.e+]+\n")

# Without a GPU the collector says why, in the words of tests/test_gpu_no_driver.cpp.
nnprof_seed_test(seeds.002.memory_profiling PROGRAM seed_002_memory_profiling
  EXPECT "(^GPU memory tracking unavailable: [^\n]*GPU collection disabled|\nPeak memory: )")

nnprof_seed_test(seeds.003.get_current_memory PROGRAM seed_003_get_current_memory
  EXPECT "^current RAM: [0-9.]+ MB\ngrew by 32 MiB buffer: yes\nnamed counters \\(current_memory\\): 0 bytes\n")

nnprof_seed_test(seeds.003.multi_operation PROGRAM seed_003_multi_operation
  EXPECT "^Operation breakdown:\n  data_loading: [0-9.]+s \\([0-9.]+%\\)\n  preprocessing: [0-9.]+s \\([0-9.]+%\\)\n  training: [0-9.]+s \\([0-9.]+%\\)\n")

# ---- the blocks added for issue 18's second pass ----------------------------------------

# Milliseconds as the programs print them (three decimals); FORBID rejects a zero time.
set(ms "[0-9]+\\.[0-9][0-9][0-9] ms")

nnprof_seed_test(seeds.002.basic_profiling PROGRAM seed_002_basic_profiling
  EXPECT "^Forward pass: ${ms}\n"
  FORBID "Forward pass: 0\\.000 ms")

# CudaTimer says why it cannot time without a usable driver or device; the host-clock timing of
# the same start/stop pair follows either way.
nnprof_seed_test(seeds.002.cuda_event_timing PROGRAM seed_002_cuda_event_timing
  EXPECT "(^CUDA event timing unavailable: CudaTimer: [^\n]*(GPU collection disabled|does not exist)[^\n]*\n|^kernel_launch \\(CUDA events\\): ${ms} over 1 run\n)"
         "\nkernel_launch \\(host clock\\): ${ms}, 1 call\n"
  FORBID "host clock\\): 0\\.000 ms")

# x, then y = x·x, each 256 KiB, then both released: four events in order, the running total
# and the counters' peak.
nnprof_seed_test(seeds.002.allocation_timeline PROGRAM seed_002_allocation_timeline
  EXPECT "^Allocation timeline \\(4 events\\):\n  \\+0\\.000 ms x \\+262144 bytes, in use 262144 bytes\n  \\+[0-9.]+ ms y \\+262144 bytes, in use 524288 bytes\n  \\+[0-9.]+ ms y -262144 bytes, in use 262144 bytes\n  \\+[0-9.]+ ms x -262144 bytes, in use 0 bytes\npeak 524288 bytes\n")

# Without a GPU the collector says why, in the words of tests/test_gpu_no_driver.cpp.
nnprof_seed_test(seeds.002.stream_profiling PROGRAM seed_002_stream_profiling
  EXPECT "(^Stream profiling unavailable: [^\n]*GPU collection disabled|^Stream efficiency \\([0-9]+ streams with GPU work\\):\n)")

# The baseline does (160/100)^3 = 4.1 times the work of the other configuration: a speedup of
# at least 2 and a significant improvement of the step.
nnprof_seed_test(seeds.002.comparing_configurations PROGRAM seed_002_comparing_configurations
  EXPECT "^Speedup: ([1-9]|[1-9][0-9]+)\\.[0-9][0-9]x\nverdict: improved\ntrain_step: improved, 0\\.[0-9]+x the time per call ")

nnprof_seed_test(seeds.003.gpu_memory_monitoring PROGRAM seed_003_gpu_memory_monitoring
  EXPECT "(^GPU memory monitoring unavailable: [^\n]*GPU collection disabled|\nGPU memory report: [0-9]+ devices\n)")

nnprof_seed_test(seeds.003.memory_leak_detection PROGRAM seed_003_memory_leak_detection
  EXPECT "^\\[high\\] memory_leak data: Memory counter data still held 6\\.25 MiB at the end, 100\\.0% of the 6\\.25 MiB it allocated \\(threshold 5\\.0%\\)"
         "\nPotential memory leak detected\nMemory grew from [0-9.]+MB to [0-9.]+MB\nstill held: 6553600 bytes;"
  FORBID "memory_leak scratch")

# Linear(784, 512) on 32 rows: 2*32*784*512 + 32*512 (bias); ReLU: 32*512; Linear(512, 10):
# 2*32*512*10 + 32*10. Together 26,050,880.
nnprof_seed_test(seeds.003.flops_estimation PROGRAM seed_003_flops_estimation
  EXPECT "^Estimated FLOPs: 26,050,880\nFLOPS per second: [1-9][0-9]?[0-9]?(,[0-9][0-9][0-9])+\n")

nnprof_seed_test(seeds.003.error_handling PROGRAM seed_003_error_handling
  EXPECT "^Operation failed: the data source went away after the first batch\nPartial timing: [0-9]+\\.[0-9]+s \\(potentially_failing_operation, completed: no\\)\nscope calls: 1\n"
  FORBID "Partial timing: 0\\.000000s")
