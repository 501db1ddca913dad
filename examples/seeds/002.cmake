# Seeds 002 (kitsune's profiler, /work/shared/seeds/002_73fdf24cf7b4cf38.txt) and 003
# (cookbook's PerformanceProfiler, /work/shared/seeds/003_e20fd3b68f08cb4c.txt): the blocks
# whose C++ form means something; the Python-only parts (torch models, context managers of
# their own, compare_runs of dictionaries) belong to the Python package. Included by
# CMakeLists.txt before its tests-only part; tests are seeds.002.<block> and seeds.003.<block>.

foreach(program IN ITEMS comprehensive_metrics custom_reporter identifying_bottlenecks json_report memory_profiling)
  nnprof_seed_program(seed_002_${program} 002_${program}.cpp)
endforeach()
foreach(program IN ITEMS get_current_memory multi_operation)
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
