# lit configuration for the tfm test suite.

import ctypes
import os
import shutil

import lit.formats
from lit.llvm import llvm_config

config.name = "tfm"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir", ".test"]
config.excludes = ["CMakeLists.txt", "lit.cfg.py", "lit.site.cfg.py", "Inputs",
                   "harness.py"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.tfm_obj_root, "test")

llvm_config.use_default_substitutions()

# Our tools first, then LLVM's (FileCheck, not, split-file, stock mlir-opt).
llvm_config.with_environment("PATH", config.llvm_tools_dir, append_path=True)
llvm_config.with_environment("PATH", config.tfm_tools_dir, append_path=True)

config.substitutions.append(("%shlibext", config.llvm_shlib_ext))
config.substitutions.append(("%tfm_libs", config.tfm_libs_dir))
config.substitutions.append(("%tfm_src", config.tfm_src_root))
config.substitutions.append(("%tfm_obj", config.tfm_obj_root))
config.substitutions.append(
    ("%mlir_opt", os.path.join(config.llvm_tools_dir, "mlir-opt"))
)

llvm_config.add_tool_substitutions(
    ["tfm-opt", "tfm-compile", "tfm-run"], [config.tfm_tools_dir])

# End-to-end tests run Debian's python3 (it has NumPy) with the tfm package
# and the test harness importable, and find the tools of this build.
config.substitutions.append(("%python", "/usr/bin/python3"))
config.environment["PYTHONPATH"] = os.pathsep.join(
    [os.path.join(config.tfm_src_root, "python"),
     os.path.join(config.tfm_src_root, "test", "Integration")])
config.environment["TFM_BUILD_DIR"] = config.tfm_obj_root

# The sanitizer build (scripts/sanitize.sh; its options are built into the
# tools, lib/Support/SanitizerDefaults.cpp): any report fails its test. Stock
# mlir-opt cannot load an instrumented plugin (the ASan runtime must come
# first), so the tests that load the plugin are unsupported there.
if config.tfm_sanitize:
    config.available_features.add("asan")

# SentencePiece tokenizers: tfm-run built with libsentencepiece, and
# spm_train to make the models the tests use.
if config.tfm_sentencepiece and shutil.which("spm_train"):
    config.available_features.add("sentencepiece")

# The CUDA target: its PTX is checked with ptxas where the CUDA toolkit has
# one, its libraries are run where an NVIDIA driver and GPU are, and the
# toolkit's stub libcuda (a driver that has no GPU) shows the error paths.
cuda_bins = [os.path.join(os.environ.get("CUDA_HOME", "/nonexistent"), "bin"),
             "/usr/local/cuda/bin"]
ptxas = shutil.which("ptxas", path=os.pathsep.join(
    cuda_bins + [os.environ.get("PATH", "")]))
if ptxas:
    config.available_features.add("ptxas")
    config.substitutions.append(("%ptxas", ptxas))
for stub in ["lib64/stubs", "lib/stubs", "targets/x86_64-linux/lib/stubs"]:
    stub_dir = os.path.join(os.path.dirname(cuda_bins[1]), stub)
    if os.path.exists(os.path.join(stub_dir, "libcuda.so")):
        config.available_features.add("cuda-stub")
        config.substitutions.append(("%cuda_stub", os.path.join(stub_dir, "libcuda.so")))
        break


def cuda_devices():
    """The compute capability major of each CUDA device (none without a
    driver)."""
    try:
        cuda = ctypes.CDLL("libcuda.so.1")
        count = ctypes.c_int(0)
        if cuda.cuInit(0) != 0 or cuda.cuDeviceGetCount(ctypes.byref(count)) != 0:
            return []
        majors = []
        for ordinal in range(count.value):
            device, major = ctypes.c_int(0), ctypes.c_int(0)
            cuda.cuDeviceGet(ctypes.byref(device), ordinal)
            # CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR
            cuda.cuDeviceGetAttribute(ctypes.byref(major), 75, device)
            majors.append(major.value)
        return majors
    except OSError:
        return []


majors = cuda_devices()
if majors:
    config.available_features.add("cuda-device")
# sm_90a code (warpgroup MMA) runs on compute capability 9.0 only.
if majors and majors[0] == 9:
    config.available_features.add("cuda-sm90")
