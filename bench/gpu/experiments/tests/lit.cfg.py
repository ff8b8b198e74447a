# lit configuration for the GPU diagnostics' own tests (bench/gpu/experiments).
# Not part of the product suite and not run by CI or ctest; run by hand:
#   lit bench/gpu/experiments/tests [--param build=DIR] [--param llvm=DIR]
# build: the monodc build folder (default build/), whose bin/ has monodc;
# llvm: where FileCheck is (default /usr/lib/llvm-22/bin).
import os
import lit.formats

here = os.path.dirname(os.path.abspath(__file__))
root = os.path.abspath(os.path.join(here, "..", "..", "..", ".."))
build = lit_config.params.get("build", os.path.join(root, "build"))
llvm = lit_config.params.get("llvm", "/usr/lib/llvm-22/bin")

config.name = "monodc-gpu-experiments"
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = [".test"]
config.test_source_root = here
config.test_exec_root = os.path.join(build, "experiments-lit")
config.excludes = ["Inputs", "lit.cfg.py"]
config.environment["PATH"] = os.pathsep.join(
    [os.path.join(build, "bin"), llvm, os.environ.get("PATH", "")])
config.substitutions.append(("%monodc_src", root))
