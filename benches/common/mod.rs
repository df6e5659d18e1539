//! What every bench shares: criterion's settings and the GPU context.
// Each bench is its own crate and uses only part of this.
#![allow(dead_code)]

use std::time::Duration;

use criterion::Criterion;
use proxima::gpu::{ContextOptions, GpuContext};

/// Ten samples of a few seconds: the largest cases take a second an iteration on a
/// software adapter, and the reports compare ratios within one run, not tight intervals.
pub fn criterion(measurement_secs: u64) -> Criterion {
    Criterion::default()
        .sample_size(10)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(measurement_secs))
}

/// The default adapter, or `None` (said on stderr) where there is none: the CPU rows of
/// a bench still run.
pub fn gpu(bench: &str) -> Option<GpuContext> {
    match GpuContext::new(&ContextOptions::default()) {
        Ok(ctx) => Some(ctx),
        Err(e) => {
            eprintln!("{bench} bench: GPU rows skipped: {e}");
            None
        }
    }
}
