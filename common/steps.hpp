// The six steps of the worklog. Each is defined at the end of its directory's kernel.cu.
#pragma once

#include <cuda_fp16.h>

#include "step.hpp"

namespace worklog::steps {

extern const Step<float> naive;              // 01_naive
extern const Step<float> block_tiling;       // 02_block_tiling
extern const Step<float> thread_coarsening;  // 03_thread_coarsening
extern const Step<float> outer_product;      // 04_outer_product
extern const Step<__half> wmma;              // 05_wmma
extern const Step<__half> multiwarp_wmma;    // 06_multiwarp_wmma

}  // namespace worklog::steps
