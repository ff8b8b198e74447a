// Not CUDA: see cuda.h here (cuProfilerStart/Stop are declared there).
#pragma once
#include "cuda.h"
