// Not CUDA: just enough of the driver API's names for CI to compile the GPU
// harnesses without a CUDA toolkit (bench/CMakeLists.txt, test
// gpu_harnesses_compile). Every call takes any arguments and does nothing,
// so what this checks is the harnesses' own code against the runtime
// library's headers and C ABI; the GPU machine builds them against CUDA.
#pragma once
#include <cstddef>

typedef int CUresult;
typedef int CUdevice;
typedef unsigned long long CUdeviceptr;
typedef struct CUctx_st *CUcontext;
typedef struct CUevent_st *CUevent;
typedef struct CUfunc_st *CUfunction;
typedef struct CUgraph_st *CUgraph;
typedef struct CUgraphExec_st *CUgraphExec;
typedef struct CUmod_st *CUmodule;
typedef struct CUstream_st *CUstream;
struct CUctxCreateParams {
  int unused;
};
enum {
  CUDA_SUCCESS = 0,
  CUDA_ERROR_NOT_READY = 600,
  CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH,
  CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE,
  CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT,
  CU_EVENT_DISABLE_TIMING,
  CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
  CU_STREAM_CAPTURE_MODE_GLOBAL,
  CU_STREAM_CAPTURE_MODE_THREAD_LOCAL,
  CU_STREAM_NON_BLOCKING,
};

#define MONODC_STANDIN_CALL(name)                                                                  \
  template <class... Args> inline CUresult name(Args &&...) { return CUDA_SUCCESS; }
MONODC_STANDIN_CALL(cuCtxCreate)
MONODC_STANDIN_CALL(cuCtxSetCurrent)
MONODC_STANDIN_CALL(cuCtxSynchronize)
MONODC_STANDIN_CALL(cuDeviceGet)
MONODC_STANDIN_CALL(cuDeviceGetAttribute)
MONODC_STANDIN_CALL(cuDeviceGetName)
MONODC_STANDIN_CALL(cuDevicePrimaryCtxRelease)
MONODC_STANDIN_CALL(cuDevicePrimaryCtxRetain)
MONODC_STANDIN_CALL(cuEventCreate)
MONODC_STANDIN_CALL(cuEventDestroy)
MONODC_STANDIN_CALL(cuEventElapsedTime)
MONODC_STANDIN_CALL(cuEventQuery)
MONODC_STANDIN_CALL(cuEventRecord)
MONODC_STANDIN_CALL(cuEventSynchronize)
MONODC_STANDIN_CALL(cuFuncSetAttribute)
MONODC_STANDIN_CALL(cuGetErrorName)
MONODC_STANDIN_CALL(cuGraphDestroy)
MONODC_STANDIN_CALL(cuGraphExecDestroy)
MONODC_STANDIN_CALL(cuGraphInstantiate)
MONODC_STANDIN_CALL(cuGraphLaunch)
MONODC_STANDIN_CALL(cuGraphUpload)
MONODC_STANDIN_CALL(cuInit)
MONODC_STANDIN_CALL(cuLaunchKernel)
MONODC_STANDIN_CALL(cuMemAlloc)
MONODC_STANDIN_CALL(cuMemFree)
MONODC_STANDIN_CALL(cuMemcpyDtoD)
MONODC_STANDIN_CALL(cuMemcpyDtoDAsync)
MONODC_STANDIN_CALL(cuMemcpyDtoH)
MONODC_STANDIN_CALL(cuMemcpyHtoD)
MONODC_STANDIN_CALL(cuMemsetD8)
MONODC_STANDIN_CALL(cuModuleGetFunction)
MONODC_STANDIN_CALL(cuModuleGetGlobal)
MONODC_STANDIN_CALL(cuModuleLoadData)
MONODC_STANDIN_CALL(cuOccupancyMaxActiveBlocksPerMultiprocessor)
MONODC_STANDIN_CALL(cuProfilerStart)
MONODC_STANDIN_CALL(cuProfilerStop)
MONODC_STANDIN_CALL(cuStreamBeginCapture)
MONODC_STANDIN_CALL(cuStreamCreate)
MONODC_STANDIN_CALL(cuStreamDestroy)
MONODC_STANDIN_CALL(cuStreamEndCapture)
MONODC_STANDIN_CALL(cuStreamSynchronize)
MONODC_STANDIN_CALL(cuStreamWaitEvent)
