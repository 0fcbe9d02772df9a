// The real backend probes behind confine/detect.h's BackendProbes seam. They
// spawn (exec/spawn.h) a probe sandbox, so they sit above confine/: the
// detector itself is pure choice over whatever probes it is given.
#pragma once

#include <memory>

#include "confine/detect.h"

namespace corral {

// The real probes described in confine/detect.h.
std::unique_ptr<BackendProbes> HostProbes();

// The process-wide Detector over HostProbes().
Detector& ProcessDetector();

// ProcessDetector().Detect(options). Fails only for an unknown forced name.
Result<Detection> DetectProvider(const DetectOptions& options);

}  // namespace corral
