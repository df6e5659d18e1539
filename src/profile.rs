//! Per-stage timings, part of every frame's result on the GPU and on the CPU path alike.

use std::fmt;
use std::time::Duration;

/// Which clock measured the stages.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Clock {
    /// GPU timestamp queries around each compute pass (sum of the passes of a stage).
    GpuTimestamps,
    /// Wall time on the CPU; on the GPU path each stage is then submitted and waited for on
    /// its own, which serialises the frame.
    Cpu,
}

/// Time spent in one named stage.
#[derive(Clone, Debug, PartialEq)]
pub struct StageTime {
    /// Stage name as recorded.
    pub name: &'static str,
    /// Seconds.
    pub seconds: f64,
}

/// Timings of one frame.
#[derive(Clone, Debug, PartialEq)]
pub struct Profile {
    /// Stages in execution order (a name recorded twice appears twice).
    pub stages: Vec<StageTime>,
    /// How the stages were timed.
    pub clock: Clock,
    /// Wall time from submission to the readbacks being available.
    pub wall: Duration,
}

impl Profile {
    /// Adds the stages and wall time of a frame run after this one (a frame run in parts:
    /// slabs, or runs of the bounds pass).
    pub fn append(&mut self, later: Profile) {
        self.stages.extend(later.stages);
        self.wall += later.wall;
    }

    /// A frame run in slabs: the bodies' placing (`placing` seconds of CPU wall time) as
    /// its first stage, `slabs`, then each slab's frame, under the slabs' clock.
    pub fn of_slabs(placing: f64, parts: Vec<Profile>) -> Profile {
        let mut profile = Profile::joined(parts);
        profile.stages.insert(
            0,
            StageTime {
                name: "slabs",
                seconds: placing,
            },
        );
        profile.wall += Duration::from_secs_f64(placing);
        profile
    }

    /// The profile of a frame run in `parts`, one after another, under the first part's
    /// clock (no stages when there are none).
    pub fn joined(parts: Vec<Profile>) -> Profile {
        let mut parts = parts.into_iter();
        let mut profile = parts.next().unwrap_or(Profile {
            stages: Vec::new(),
            clock: Clock::Cpu,
            wall: Duration::ZERO,
        });
        for part in parts {
            profile.append(part);
        }
        profile
    }

    /// Seconds spent in stages named `name` or `name/…` (a stage's parts, such as
    /// `broadphase/table`), summed.
    pub fn stage_seconds(&self, name: &str) -> f64 {
        self.stages
            .iter()
            .filter(|s| {
                s.name
                    .strip_prefix(name)
                    .is_some_and(|rest| rest.is_empty() || rest.starts_with('/'))
            })
            .map(|s| s.seconds)
            .sum()
    }
}

impl fmt::Display for Profile {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let clock = match self.clock {
            Clock::GpuTimestamps => "gpu timestamps",
            Clock::Cpu => "cpu clock",
        };
        for s in &self.stages {
            writeln!(
                f,
                "  {:<24} {:>10.3} ms  ({clock})",
                s.name,
                s.seconds * 1e3
            )?;
        }
        write!(
            f,
            "  {:<24} {:>10.3} ms  (wall)",
            "frame",
            self.wall.as_secs_f64() * 1e3
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stage_sums_its_parts_and_only_them() {
        let stage = |name, seconds| StageTime { name, seconds };
        let p = Profile {
            stages: vec![
                stage("bounds", 1.0),
                stage("broadphase/setup", 2.0),
                stage("broadphase/table", 4.0),
                stage("broadphases", 8.0),
                stage("broadphase", 16.0),
            ],
            clock: Clock::Cpu,
            wall: Duration::ZERO,
        };
        assert_eq!(p.stage_seconds("broadphase"), 22.0);
        assert_eq!(p.stage_seconds("broadphase/table"), 4.0);
        assert_eq!(p.stage_seconds("bounds"), 1.0);
        assert_eq!(p.stage_seconds("upload"), 0.0);
    }
}
