// RUN: tfm-opt %s --split-input-file --tfm-gpu-emulate-kernels --verify-diagnostics -o /dev/null

// A module without kernels, and an op the emulator has no form for.
// expected-error @+1 {{no gpu.module: emulate a module at the cuda target's kernels stage}}
module {
  func.func @host() {
    return
  }
}

// -----

module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @unknown() kernel {
      // expected-error @+1 {{has no emulated form}}
      nvvm.cluster.arrive
      gpu.return
    }
  }
}

// -----

module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @other_assembly() kernel {
      // expected-error @+1 {{has no emulated form (inline assembly other than a wgmma)}}
      llvm.inline_asm has_side_effects "exit;", "" : () -> ()
      gpu.return
    }
  }
}
