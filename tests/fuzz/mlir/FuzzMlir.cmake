# The .mlir input of monodc-opt (FuzzMlir.cpp) needs the compiler (the mono
# dialect, its passes, MLIR): tests/fuzz/CMakeLists.txt includes this file and
# calls the function at the end of the root's configuration, in a full build.
#   fuzz_mlir_replay  runs corpus/mlir and regressions/mlir once: the ctest
#                     test fuzz_mlir_corpus;
#   fuzz_mlir         with -DMONODC_FUZZ=ON (clang): the libFuzzer binary.
#                     tests/fuzz/fuzz.sh mlir builds it in build-fuzz-mlir,
#                     where our code (the harness, MonoDialect, MonoAnalysis,
#                     MonoTransforms, monodc_target) is instrumented and the
#                     Debian LLVM/MLIR libraries are not.
function(monodc_add_mlir_fuzz_targets fuzz_dir)
  add_executable(fuzz_mlir_replay ${fuzz_dir}/FuzzMlir.cpp ${fuzz_dir}/ReplayMain.cpp)
  target_link_libraries(fuzz_mlir_replay PRIVATE MonoTransforms)
  set(inputs ${fuzz_dir}/corpus/mlir)
  if(IS_DIRECTORY ${fuzz_dir}/regressions/mlir)
    list(APPEND inputs ${fuzz_dir}/regressions/mlir)
  endif()
  add_test(NAME fuzz_mlir_corpus COMMAND fuzz_mlir_replay ${inputs})
  set_tests_properties(fuzz_mlir_corpus PROPERTIES TIMEOUT 120 LABELS fuzz)
  if(MONODC_FUZZ)
    add_executable(fuzz_mlir ${fuzz_dir}/FuzzMlir.cpp)
    target_link_libraries(fuzz_mlir PRIVATE MonoTransforms)
    target_compile_options(fuzz_mlir PRIVATE -fsanitize=fuzzer,address,undefined)
    target_link_options(fuzz_mlir PRIVATE -fsanitize=fuzzer,address,undefined)
  endif()
endfunction()
