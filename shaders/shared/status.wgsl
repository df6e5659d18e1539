// Per-pass error report, written with atomics by the pass and read back by the CPU, so a
// bad input is named instead of silently producing garbage. Rust twin: GpuPassStatus.
// `first_error` starts at 0xffffffff (see PassStatus::initial on the Rust side).
struct PassStatus {
    error_count: atomic<u32>,
    first_error: atomic<u32>,
    error_kinds: atomic<u32>,
    _pad: u32,
}
