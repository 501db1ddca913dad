// Build-time switches and the export macro shared by every public header.
#pragma once

// NNPROF_ENABLED=0 (set it before including, or with -DNNPROF_ENABLED=0) makes every
// instrumentation macro expand to nothing; the library API stays callable.
#ifndef NNPROF_ENABLED
#define NNPROF_ENABLED 1
#endif

// Default visibility on declarations too, so that code built with -fvisibility=hidden
// still links against libnnprof.
#define NNPROF_API __attribute__((visibility("default")))

#define NNPROF_VERSION_STRING "0.1.0"
