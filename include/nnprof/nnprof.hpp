// nnprof: include this one header.
//
//   NNPROF_SCOPE("attention");                     // time a block in the global profiler
//   nnprof::Profiler p; p.start("step"); ...; p.stop("step");
//   std::cout << p.summary();
#pragma once

#include "nnprof/analysis.hpp"
#include "nnprof/clock.hpp"
#include "nnprof/compare.hpp"
#include "nnprof/compute_profiler.hpp"
#include "nnprof/config.hpp"
#include "nnprof/continuous.hpp"
#include "nnprof/critical_path.hpp"
#include "nnprof/distributed_analysis.hpp"
#include "nnprof/error.hpp"
#include "nnprof/flops.hpp"
#include "nnprof/gpu.hpp"
#include "nnprof/live_server.hpp"
#include "nnprof/memory_profiler.hpp"
#include "nnprof/metrics.hpp"
#include "nnprof/model_compare.hpp"
#include "nnprof/model_info.hpp"
#include "nnprof/operators.hpp"
#include "nnprof/performance.hpp"
#include "nnprof/flow.hpp"
#include "nnprof/profile.hpp"
#include "nnprof/profiler.hpp"
#include "nnprof/report.hpp"
#include "nnprof/roofline.hpp"
#include "nnprof/sampling_profiler.hpp"
#include "nnprof/scope.hpp"
#include "nnprof/session_metrics.hpp"
#include "nnprof/system.hpp"
#include "nnprof/source_location.hpp"
#include "nnprof/timeline.hpp"
#include "nnprof/trace.hpp"
