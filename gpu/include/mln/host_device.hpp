// MLN_HD marks a function callable from host code and from CUDA kernels
// (one definition for the engine's functors and the solver's generator).
#pragma once

#if defined(__CUDACC__)
#define MLN_HD __host__ __device__
#else
#define MLN_HD
#endif
