//! Waiting for submitted GPU work by its progress, not by a deadline.
//!
//! A frame is submitted as one command buffer per stage, and each submission counts itself
//! done through `Queue::on_submitted_work_done`. A wait polls in short slices and gives up
//! only when the GPU has shown no progress for [`STALL_LIMIT`]: no stage finished and, on a
//! software adapter (whose "GPU" is threads of this process), no CPU time was spent by the
//! process either. A slow frame on a loaded machine therefore keeps advancing and is waited
//! for however long it takes; a hung one is an error naming the stage it hangs in.
//!
//! Dead end: a fixed 120 s limit per frame. The GPU sweep of a uniform 1M crowd on lavapipe
//! takes 31 s on an idle 2-core machine and went past 120 s when other tests ran beside it.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use super::context::GpuContext;
use crate::{Error, Result};

/// How long the GPU may show no progress at all before a wait is an error.
pub const STALL_LIMIT: Duration = Duration::from_secs(120);
/// How often a wait looks for progress.
const SLICE: Duration = Duration::from_millis(500);

/// The submissions of one frame, stage by stage, and how many of them have finished.
#[derive(Debug, Default)]
pub struct StageSubmissions {
    done: Arc<AtomicUsize>,
    names: Vec<&'static str>,
    last: Option<wgpu::SubmissionIndex>,
}

impl StageSubmissions {
    /// Submits one stage's commands and counts them done when the GPU finishes them.
    pub fn submit(
        &mut self,
        ctx: &GpuContext,
        name: &'static str,
        commands: wgpu::CommandBuffer,
    ) -> wgpu::SubmissionIndex {
        let index = ctx.queue.submit([commands]);
        let done = Arc::clone(&self.done);
        ctx.queue.on_submitted_work_done(move || {
            done.fetch_add(1, Ordering::Relaxed);
        });
        self.names.push(name);
        self.last = Some(index.clone());
        index
    }

    /// Stages submitted so far.
    pub fn submitted(&self) -> usize {
        self.names.len()
    }

    /// Stages the GPU has finished.
    pub fn finished(&self) -> usize {
        self.done.load(Ordering::Relaxed)
    }

    /// The stage the GPU is working on (the first one not finished).
    fn current(&self) -> &'static str {
        self.names.get(self.finished()).copied().unwrap_or("(none)")
    }

    /// Waits until every submitted stage has finished (see the module comment).
    pub fn wait_all(&self, ctx: &GpuContext) -> Result<()> {
        match &self.last {
            Some(last) => self.wait(ctx, last),
            None => Ok(()),
        }
    }

    /// Waits until `submission` (one of ours) has finished.
    pub fn wait(&self, ctx: &GpuContext, submission: &wgpu::SubmissionIndex) -> Result<()> {
        // A submission that failed (validation error, lost device) has an index wgpu never
        // completes, and waiting on it panics inside wgpu: rule those out first. Errors are
        // reported synchronously on native backends, so `check` sees them here.
        ctx.check()?;
        let mut watch = Watch::new(ctx.is_software(), self.finished(), STALL_LIMIT);
        loop {
            let polled = ctx.device.poll(wgpu::PollType::Wait {
                submission_index: Some(submission.clone()),
                timeout: Some(SLICE),
            });
            match polled {
                Ok(_) => return ctx.check(),
                Err(wgpu::PollError::Timeout) => {}
                // The submission never ran; the reason (usually a lost device, whose
                // callback wgpu delivers during the poll) is in the fault log.
                Err(other) => {
                    return Err(ctx
                        .check()
                        .err()
                        .unwrap_or_else(|| Error::DeviceLost(other.to_string())));
                }
            }
            ctx.check()?;
            if watch.stalled(self.finished()) {
                return Err(Error::Readback(format!(
                    "the GPU made no progress for {} s in stage `{}` ({} of {} stages finished){}",
                    STALL_LIMIT.as_secs(),
                    self.current(),
                    self.finished(),
                    self.submitted(),
                    if ctx.is_software() {
                        " and the software adapter spent no CPU time"
                    } else {
                        ""
                    }
                )));
            }
        }
    }
}

/// What progress looked like when it was last seen.
struct Watch {
    software: bool,
    finished: usize,
    cpu: Option<Duration>,
    since: Instant,
    limit: Duration,
}

impl Watch {
    fn new(software: bool, finished: usize, limit: Duration) -> Self {
        Self {
            software,
            finished,
            cpu: software.then(process_cpu_time).flatten(),
            since: Instant::now(),
            limit,
        }
    }

    /// Records what progress there was since the last look; true when there was none for
    /// `limit`.
    fn stalled(&mut self, finished: usize) -> bool {
        let cpu = if self.software {
            process_cpu_time()
        } else {
            None
        };
        let advanced = finished > self.finished
            || matches!((cpu, self.cpu), (Some(now), Some(then)) if now > then);
        if advanced {
            self.finished = finished;
            self.cpu = cpu;
            self.since = Instant::now();
        }
        self.since.elapsed() > self.limit
    }
}

/// CPU time this process has spent (user + system), where the platform tells it cheaply.
/// A software adapter runs its shaders on threads of this process: while that time grows,
/// the adapter is working (or other threads of the process are; either way the wait is not
/// the thing that is stuck).
pub fn process_cpu_time() -> Option<Duration> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    // Fields after the command name, which is in parentheses and may hold spaces.
    let rest = &stat[stat.rfind(')')? + 1..];
    let fields: Vec<&str> = rest.split_whitespace().collect();
    // utime and stime are fields 14 and 15 of the line, 12 and 13 after the name.
    let ticks: u64 = fields.get(11)?.parse::<u64>().ok()? + fields.get(12)?.parse::<u64>().ok()?;
    // Linux reports these in USER_HZ, which is 100 on every architecture it runs on.
    Some(Duration::from_millis(ticks * 10))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spin_cpu() {
        let start = process_cpu_time();
        let mut x = 1u64;
        while process_cpu_time() == start {
            for i in 0..100_000u64 {
                x = x.wrapping_mul(6364136223846793005).wrapping_add(i);
            }
            std::hint::black_box(x);
        }
    }

    // Each assertion's outcome is fixed by the order of events, not by how fast the
    // machine runs: "stalled" is asked only after sleeping past a short limit, and "not
    // stalled" only of a watch whose limit is an hour.
    const HOUR: Duration = Duration::from_secs(3600);
    const SHORT: Duration = Duration::from_millis(20);

    #[test]
    fn a_finished_stage_is_progress() {
        let mut quiet = Watch::new(false, 0, SHORT);
        std::thread::sleep(Duration::from_millis(30));
        assert!(
            quiet.stalled(0),
            "nothing finished for longer than the limit"
        );
        let mut busy = Watch::new(false, 0, HOUR);
        assert!(!busy.stalled(1), "a stage finished: progress");
        assert_eq!(busy.finished, 1);
    }

    #[test]
    fn cpu_time_is_progress_only_on_a_software_adapter() {
        if process_cpu_time().is_none() {
            return; // not a platform that reports it cheaply
        }
        let mut software = Watch::new(true, 0, HOUR);
        let mut hardware = Watch::new(false, 0, SHORT);
        let before = software.cpu;
        std::thread::sleep(Duration::from_millis(30));
        spin_cpu();
        assert!(
            !software.stalled(0),
            "the software adapter's threads worked"
        );
        assert!(software.cpu > before, "the CPU time seen moved on");
        assert!(
            hardware.stalled(0),
            "a hardware adapter's progress is its stages"
        );
    }
}
