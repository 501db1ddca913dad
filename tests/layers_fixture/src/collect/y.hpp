// Fixture of the LayerRuleCatchesUpwardInclude test: the collector header src/model/x.cpp includes.
#pragma once
