// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// How many clusters of 1..8 CTAs (384 threads, ~200 KB of shared memory,
// one CTA per SM like the GEMM kernels) the GPU holds at once: clusters
// must fit inside one GPC, so sizes that do not divide a GPC's SM count
// leave SMs idle. Build and run on the GPU machine:
//   nvcc -arch=sm_90a -o /tmp/cluster_occupancy bench/tools/cluster_occupancy.cu
#include <cstdio>
#include <cuda_runtime.h>

__global__ void probe() { extern __shared__ char s[]; s[threadIdx.x] = 0; }

int main() {
  const int smem = 200 * 1024;
  cudaFuncSetAttribute(probe, cudaFuncAttributeMaxDynamicSharedMemorySize,
                       smem);
  cudaFuncSetAttribute(probe, cudaFuncAttributeNonPortableClusterSizeAllowed,
                       1);
  int sms = 0;
  cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
  for (int c = 1; c <= 16; ++c) {
    cudaLaunchConfig_t cfg = {};
    cfg.gridDim = dim3(c * 64);
    cfg.blockDim = dim3(384);
    cfg.dynamicSmemBytes = smem;
    cudaLaunchAttribute a;
    a.id = cudaLaunchAttributeClusterDimension;
    a.val.clusterDim.x = c;
    a.val.clusterDim.y = a.val.clusterDim.z = 1;
    cfg.attrs = &a;
    cfg.numAttrs = 1;
    int n = 0;
    cudaError_t e = cudaOccupancyMaxActiveClusters(&n, probe, &cfg);
    std::printf("cluster %2d: %3d clusters = %3d of %d SMs%s%s\n", c, n, n * c,
                sms, e ? " error: " : "", e ? cudaGetErrorString(e) : "");
  }
  return 0;
}
