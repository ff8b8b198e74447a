// Not NVRTC: the names the GPU harnesses use, for CI to compile them
// without a CUDA toolkit (see cuda.h here).
#pragma once
typedef int nvrtcResult;
typedef struct nvrtcProgram_st *nvrtcProgram;
enum { NVRTC_SUCCESS = 0 };
#define MONODC_STANDIN_NVRTC(name)                                                                 \
  template <class... Args> inline nvrtcResult name(Args &&...) { return NVRTC_SUCCESS; }
MONODC_STANDIN_NVRTC(nvrtcCompileProgram)
MONODC_STANDIN_NVRTC(nvrtcCreateProgram)
MONODC_STANDIN_NVRTC(nvrtcDestroyProgram)
MONODC_STANDIN_NVRTC(nvrtcGetCUBIN)
MONODC_STANDIN_NVRTC(nvrtcGetCUBINSize)
MONODC_STANDIN_NVRTC(nvrtcGetProgramLog)
MONODC_STANDIN_NVRTC(nvrtcGetProgramLogSize)
inline const char *nvrtcGetErrorString(nvrtcResult) { return ""; }
