//! Running the broadphase: on the GPU (with the re-run-on-overflow rule, so no pair is ever
//! dropped) or on the CPU twins, with the method chosen by the caller or from the scene's
//! statistics. The passes themselves live in [`crate::passes::broadphase`].

use std::time::Duration;

use crate::bodies::GpuAabb;
use crate::gpu::Engine;
use crate::graph::Recording;
use crate::memory::PairBudget;
use crate::passes::broadphase::{
    self, Capacities, GpuPairCounter, Method, hash_pairs_cpu_within, record_broadphase,
    sap_pairs_cpu_within,
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
        let n = aabbs.len() as u32; // at most MAX_BODIES (validated)
        let caps = self.caps.unwrap_or_else(|| Capacities::guess(aabbs.len()));
        let max = Capacities::device_max(&engine.context().limits());
        let (run, next) = run_until_fits(caps, method, max, |caps| {
            let mut rec = Recording::new();
            rec.stage("upload");
            let boxes = rec.array_buffer::<GpuAabb>(aabbs.len(), "aabbs");
            rec.upload(boxes, aabbs);
            let out = record_broadphase(&mut rec, boxes, n, method, caps);
            rec.stage("readback");
            let counter_rb = rec.readback(out.counter);
            let pairs_rb = rec.readback(out.pairs);
            let frame = engine.run(&rec, &[])?;
            let counter: GpuPairCounter = frame.values::<GpuPairCounter>(counter_rb)[0];
            Ok(Attempt {
                value: (
                    frame.values(pairs_rb),
                    frame.profile.stage_seconds("broadphase"),
                    frame.profile.wall,
                ),
                counter,
            })
        })?;
        self.caps = Some(next);
        let ((raw, gpu_time, wall), runs, counter) = run;
        Ok(GpuRun {
            pairs: sorted_pairs(&raw, &counter),
            runs,
            gpu_time,
            wall,
        })
    }
}

/// What one attempt at a frame with a broadphase reports: its result and the pair counter.
#[derive(Debug)]
pub struct Attempt<T> {
    /// The frame's result.
    pub value: T,
    /// Pairs and hash entries found, and the room they had.
    pub counter: GpuPairCounter,
}

/// The rule that no pair is ever dropped: runs `attempt` with `caps`, and while pairs or
/// hash entries overflowed, again with exactly enough room (at most 4 runs). Room stays
/// within `max` per buffer unless a run needs more (the engine then reports the
/// buffer limit). Returns the result, the runs it took and its counter, and the
/// capacities for the next frame (what this one used plus a quarter).
pub fn run_until_fits<T>(
    caps: Capacities,
    method: Method,
    max: Capacities,
    mut attempt: impl FnMut(Capacities) -> Result<Attempt<T>>,
) -> Result<((T, u32, GpuPairCounter), Capacities)> {
    let mut caps = caps.capped(max, None);
    for runs in 1..=4 {
        let a = attempt(caps)?;
        if a.counter.cut != 0 {
            return Err(Error::Gpu(format!(
                "broadphase ({}): the adapter stopped a shader loop before it ended, so \
                 pairs would be lost (llvmpipe ends every loop of an invocation after 65535 \
                 iterations in all; a sweep or hash bucket this long needs a hardware GPU or \
                 `--device cpu`)",
                method.name()
            )));
        }
        if a.counter.wrapped != 0 {
            return Err(Error::Gpu(format!(
                "broadphase ({}): 2^32 or more pairs, hash entries or spill items (a u32 \
                 counter passed 4294967295; {} pairs, {} entries, {} spill items counted mod \
                 2^32): no buffer can hold that many; spread the bodies out or use fewer",
                method.name(),
                a.counter.count,
                a.counter.entries,
                a.counter.spill
            )));
        }
        if caps.overflowed(&a.counter) {
            caps = caps.grown_for(&a.counter).capped(max, Some(&a.counter));
            continue;
        }
        let next = Capacities::fitted_to(&a.counter).capped(max, Some(&a.counter));
        return Ok(((a.value, runs, a.counter), next));
    }
    Err(Error::Gpu(format!(
        "broadphase ({}) still overflowed after 4 runs (capacities {caps:?})",
        method.name()
    )))
}

/// The valid pairs of a pair buffer read back after a run that fit, sorted.
pub fn sorted_pairs(raw: &[[u32; 2]], counter: &GpuPairCounter) -> Vec<[u32; 2]> {
    let valid = (counter.count.min(counter.capacity) as usize).min(raw.len());
    let mut pairs = raw[..valid].to_vec();
    broadphase::sort_body_pairs(&mut pairs);
    pairs
}

/// The CPU twin of `method` (multi-threaded), sorted pairs; errors on a box that is not
/// finite or has min > max, and with the memory error when the pairs would not fit in
/// the machine's memory beside the bodies (counted as they are found: the twin stops
/// there instead of growing its vectors until the process is killed).
pub fn cpu_pairs(aabbs: &[GpuAabb], method: Method) -> Result<Vec<[u32; 2]>> {
    broadphase::validate_boxes(aabbs)?;
    let budget = PairBudget::new(aabbs.len());
    let pairs = match method {
        Method::Hash => hash_pairs_cpu_within(aabbs, &budget),
        Method::Sweep => sap_pairs_cpu_within(aabbs, &budget),
    };
    budget.check(|found| {
        format!(
            "the broadphase's pairs among {} bodies (it stopped at {found}, each taking \
             at least {} bytes with its contact)",
            aabbs.len(),
            crate::memory::PAIR_BYTES
        )
    })?;
    Ok(pairs)
}
