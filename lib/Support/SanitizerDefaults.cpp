//===- SanitizerDefaults.cpp - sanitizer options of the sanitizer build ----===//
//
// Linked into every executable of the sanitizer build (TFM_SANITIZE), so that
// the tools behave the same however they are started (lit, Python, a shell).
//
// allow_user_poisoning=0: LLVM's BumpPtrAllocator poisons a new slab and
// unpoisons each allocation, but only where it is compiled with ASan. Our
// instrumented code and the uninstrumented libMLIR share allocators (the
// context's attribute storage), so a slab poisoned by our code is handed out
// by libMLIR without unpoisoning: false use-after-poison reports. ASan's own
// checks stay on.
//
//===----------------------------------------------------------------------===//

extern "C" const char *__asan_default_options() {
  return "allow_user_poisoning=0";
}

extern "C" const char *__ubsan_default_options() {
  return "print_stacktrace=1";
}
