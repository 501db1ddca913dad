// Fixture of the LayerRuleCatchesUpwardInclude test: a model file that includes a collector,
// which tests/check_layers.cmake must refuse. Never compiled.
#include "collect/y.hpp"
#include "model/x.hpp"
#include "nnprof/profile.hpp"
