# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# `cmake --install <build> --prefix P` lays out:
#   P/include/blockscale-c/blockscale.h         the C API
#   P/include/blockscale/Version.h              version and commit (generated)
#   P/include/blockscale/Runtime/*.h, *.def      the C++ runtime (no MLIR)
#   P/include/blockscale/Target/Cuda/Kernels/params.h   (included by Runtime/Timeline.h)
#   P/lib/libblockscale_c.so                     C API, MLIR/LLVM linked in statically
#   P/lib/libBlockScaleRuntime.a                 C++ runtime (links LLVMSupport)
#   P/bin/blockscale-{opt,translate,gen,run-sharded}
#   P/lib/cmake/blockscale/blockscaleConfig.cmake (+ Version): blockscale::c,
#                                                blockscale::runtime
#   P/lib/pkgconfig/blockscale.pc                for the C API
# (add_mlir_library also installs the MLIR-side archives into P/lib.)
include(CMakePackageConfigHelpers)

set(BS_INSTALL_CMAKEDIR lib/cmake/blockscale)

# Headers.
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/blockscale-c
        DESTINATION include FILES_MATCHING PATTERN "*.h")
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/blockscale/Runtime
        DESTINATION include/blockscale
        FILES_MATCHING PATTERN "*.h" PATTERN "*.def")
install(FILES ${PROJECT_SOURCE_DIR}/include/blockscale/Target/Cuda/Kernels/params.h
        DESTINATION include/blockscale/Target/Cuda/Kernels)
install(FILES ${PROJECT_BINARY_DIR}/include/blockscale/Version.h
        DESTINATION include/blockscale)

# The installed binaries find NVRTC (dlopen'ed by soname) the same way as the
# built ones: next to them, then in the toolkit they were built against.
set(BS_INSTALL_RPATH "$ORIGIN/../lib;${CUDAToolkit_LIBRARY_DIR}")
set(BS_TOOLS blockscale-opt blockscale-translate blockscale-gen blockscale-run-sharded)
set_target_properties(${BS_TOOLS} blockscale_c PROPERTIES INSTALL_RPATH "${BS_INSTALL_RPATH}")
install(TARGETS ${BS_TOOLS} RUNTIME DESTINATION bin)

# blockscale::c -- the C API. Its interface is the C header alone.
set_target_properties(blockscale_c PROPERTIES EXPORT_NAME c)
target_include_directories(blockscale_c INTERFACE
  $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/include>
  $<BUILD_INTERFACE:${PROJECT_BINARY_DIR}/include>
  $<INSTALL_INTERFACE:include>)
install(TARGETS blockscale_c EXPORT blockscaleCTargets LIBRARY DESTINATION lib)
install(EXPORT blockscaleCTargets NAMESPACE blockscale::
        DESTINATION ${BS_INSTALL_CMAKEDIR})

# blockscale::runtime -- the static C++ runtime. Its public link libraries
# (LLVMSupport, dl, Threads::Threads) are resolved by blockscaleConfig.cmake;
# the CUDA include directory it was built with is a build-tree path here and
# is found again by the config on the consumer's side.
set_target_properties(BlockScaleRuntime PROPERTIES EXPORT_NAME runtime)
get_target_property(_bs_rt_inc BlockScaleRuntime INTERFACE_INCLUDE_DIRECTORIES)
set(_bs_rt_build_inc)
foreach(_d ${_bs_rt_inc} ${PROJECT_SOURCE_DIR}/include ${PROJECT_BINARY_DIR}/include)
  list(APPEND _bs_rt_build_inc "$<BUILD_INTERFACE:${_d}>")
endforeach()
set_target_properties(BlockScaleRuntime PROPERTIES
  INTERFACE_INCLUDE_DIRECTORIES "${_bs_rt_build_inc};$<INSTALL_INTERFACE:include>")
install(TARGETS BlockScaleRuntime EXPORT blockscaleRuntimeTargets ARCHIVE DESTINATION lib)
install(EXPORT blockscaleRuntimeTargets NAMESPACE blockscale::
        DESTINATION ${BS_INSTALL_CMAKEDIR})

# The package configuration: records the LLVM and CUDA this was built with as
# hints for finding them again.
set(BS_BUILT_LLVM_DIR "${LLVM_DIR}")
set(BS_BUILT_CUDA_INCLUDE_DIRS "${CUDAToolkit_INCLUDE_DIRS}")
configure_package_config_file(
  ${PROJECT_SOURCE_DIR}/cmake/blockscaleConfig.cmake.in
  ${PROJECT_BINARY_DIR}/cmake/blockscaleConfig.cmake
  INSTALL_DESTINATION ${BS_INSTALL_CMAKEDIR})
write_basic_package_version_file(
  ${PROJECT_BINARY_DIR}/cmake/blockscaleConfigVersion.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/cmake/blockscaleConfig.cmake
              ${PROJECT_BINARY_DIR}/cmake/blockscaleConfigVersion.cmake
        DESTINATION ${BS_INSTALL_CMAKEDIR})

# pkg-config, for the C API (paths relative to the .pc file, so the prefix
# can move).
configure_file(${PROJECT_SOURCE_DIR}/cmake/blockscale.pc.in
               ${PROJECT_BINARY_DIR}/cmake/blockscale.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/cmake/blockscale.pc DESTINATION lib/pkgconfig)
