//! Running the broadphase: on the GPU (with the re-run-on-overflow rule, so no pair is ever
//! dropped) or on the CPU twins, with the method chosen by the caller or from the scene's
//! statistics. The passes themselves live in [`crate::passes::broadphase`].

use std::time::Duration;

use crate::bodies::GpuAabb;
use crate::gpu::Engine;
use crate::graph::Recording;
use crate::passes::broadphase::{
    self, Capacities, GpuBroadphaseSetup, GpuPairCounter, Method, hash_pairs_cpu,
    record_broadphase, sap_pairs_cpu,
};
use crate::{Error, Result};

/// Which broadphase to run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Choice {
    /// Chosen from the boxes ([`broadphase::choose_method`]).
    Auto,
    /// A given method.
    Method(Method),
}

impl Choice {
    /// The method for these boxes.
    pub fn resolve(self, aabbs: &[GpuAabb]) -> Method {
        match self {
            Choice::Auto => broadphase::choose_method(aabbs),
            Choice::Method(m) => m,
        }
    }
}

/// Result of a GPU broadphase run.
#[derive(Clone, Debug)]
pub struct GpuRun {
    /// The pairs, sorted.
    pub pairs: Vec<[u32; 2]>,
    /// Runs it took (more than one when a buffer overflowed).
    pub runs: u32,
    /// GPU time of the broadphase stage in the last run.
    pub gpu_time: f64,
    /// Wall time of the last run (upload, passes, readback).
    pub wall: Duration,
}

/// GPU broadphase state: capacities learned from earlier frames.
#[derive(Clone, Copy, Debug, Default)]
pub struct GpuBroadphase {
    caps: Option<Capacities>,
}

impl GpuBroadphase {
    /// Uploads `aabbs`, runs `method`, reads the pairs back. Re-runs with exactly enough
    /// room when pairs or hash entries overflowed.
    pub fn run(
        &mut self,
        engine: &mut Engine,
        aabbs: &[GpuAabb],
        method: Method,
    ) -> Result<GpuRun> {
        broadphase::validate_boxes(aabbs)?;
        let n = u32::try_from(aabbs.len())
            .map_err(|_| Error::Usage(format!("{} boxes: at most 2^32 - 1", aabbs.len())))?;
        let mut caps = self.caps.unwrap_or_else(|| Capacities::guess(aabbs.len()));
        for runs in 1..=4 {
            let mut rec = Recording::new();
            rec.stage("upload");
            let boxes = rec.array_buffer::<GpuAabb>(aabbs.len(), "aabbs");
            rec.upload(boxes, aabbs);
            rec.stage("broadphase");
            let out = record_broadphase(&mut rec, boxes, n, method, caps);
            rec.stage("readback");
            let counter_rb = rec.readback(out.counter);
            let setup_rb = rec.readback(out.setup);
            let pairs_rb = rec.readback(out.pairs);
            let frame = engine.run(&rec, &[])?;
            let counter: GpuPairCounter = frame.values::<GpuPairCounter>(counter_rb)[0];
            if caps.overflowed(&counter) {
                caps = caps.grown_for(&counter);
                continue;
            }
            let setup: GpuBroadphaseSetup = frame.values::<GpuBroadphaseSetup>(setup_rb)[0];
            self.caps = Some(Capacities::fitted_to(&counter, &setup));
            let raw: Vec<[u32; 2]> = frame.values(pairs_rb);
            let mut pairs = raw[..counter.count as usize].to_vec();
            pairs.sort_unstable();
            return Ok(GpuRun {
                pairs,
                runs,
                gpu_time: frame.profile.stage_seconds("broadphase"),
                wall: frame.profile.wall,
            });
        }
        Err(Error::Gpu(format!(
            "broadphase ({}) still overflowed after 4 runs (capacities {caps:?})",
            method.name()
        )))
    }
}

/// The CPU twin of `method` (multi-threaded), sorted pairs; errors on a box that is not
/// finite or has min > max.
pub fn cpu_pairs(aabbs: &[GpuAabb], method: Method) -> Result<Vec<[u32; 2]>> {
    broadphase::validate_boxes(aabbs)?;
    Ok(match method {
        Method::Hash => hash_pairs_cpu(aabbs),
        Method::Sweep => sap_pairs_cpu(aabbs),
    })
}
