//! The error report every GPU pass writes (and its CPU twin fills the same way): how many
//! items were bad, the lowest bad index, and which kinds of error occurred.

use crate::wgsl_twin;

wgsl_twin! {
    /// Twin of `PassStatus` in `shaders/shared/status.wgsl`.
    pub struct GpuPassStatus as "PassStatus" {
        /// Number of bad items.
        pub error_count: u32,
        /// Lowest bad index (`u32::MAX` when none).
        pub first_error: u32,
        /// Bitwise or of the pass's error kinds.
        pub error_kinds: u32,
        /// Padding.
        pub _pad: u32,
    }
}

impl GpuPassStatus {
    /// The value a pass starts from: no errors, `first_error` at its maximum so that
    /// `atomicMin` finds the lowest bad index.
    pub const INITIAL: GpuPassStatus = GpuPassStatus {
        error_count: 0,
        first_error: u32::MAX,
        error_kinds: 0,
        _pad: 0,
    };

    /// Records a bad item, as the shaders' `report_error` does.
    pub fn report(&mut self, index: u32, kind: u32) {
        self.error_count += 1;
        self.first_error = self.first_error.min(index);
        self.error_kinds |= kind;
    }

    /// Combines the reports of two halves of a pass.
    pub fn merge(self, other: GpuPassStatus) -> GpuPassStatus {
        GpuPassStatus {
            error_count: self.error_count + other.error_count,
            first_error: self.first_error.min(other.first_error),
            error_kinds: self.error_kinds | other.error_kinds,
            _pad: 0,
        }
    }

    /// True when the pass found nothing wrong.
    pub fn is_ok(&self) -> bool {
        self.error_count == 0
    }
}
