//! The main job's crowd: bodies at constant velocities inside a box of walls, bouncing off
//! the walls and off each other by the world's contacts and impacts, and never passing
//! through each other.
//!
//! One frame of `dt`:
//! 1. [`World::step`] at the current poses: the pairs and the contacts.
//! 2. Contacts: a pair that overlaps or touches and closes along its normal exchanges the
//!    normal parts of its velocities (equal masses, elastic); a fixed body
//!    ([`KinematicCrowd::fix`]: a floor, a wall) keeps its velocity, and the other
//!    bounces off it.
//! 3. Walls: a body whose reach crosses a wall while it moves outward turns back.
//! 4. Impacts: with those velocities, every pair that would meet during the frame
//!    ([`World::impacts`]) stops both its bodies for this frame and exchanges the normal
//!    parts of their velocities for the next; a pair whose normal parts already part it
//!    was brought together by its spins, which stop (a crate facing another tips a corner
//!    toward it turning either way: with their spins, two stopped bodies would meet again
//!    every frame and never move again). Stopping a body changes its pairs, so the
//!    impacts of the pairs with a newly stopped body are asked again, until none hits
//!    (the swept boxes' broadphase runs once: a stopped body's box only shrinks).
//!    Then no pair meets during the frame's motions (each round stops at least one more
//!    body, so this ends). Pairs that overlap at the frame's start are the contacts' to
//!    part (step 2).
//! 5. [`World::advance`] moves the bodies; the stopped ones take their new velocities.
//!
//! Before the first frame, [`KinematicCrowd::settle`] parts bodies a scene placed
//! overlapping (the default crowd is placed at random): each round moves every
//! overlapping pair apart along its contact normal by its depth, until none overlaps.
//! From then on no pair overlaps at a frame's start, and none meets during a frame.
//!
//! Not physics: no masses, friction or resting contact, and a stopped body loses the rest
//! of its frame. It is the workload the pipeline is built for, and the check that the
//! pieces fit: contacts, impacts and poses through one `World`.

use std::collections::HashSet;
use std::time::Instant;

use glam::DVec3;

use crate::Result;
use crate::bodies::Pose;
use crate::exact::advance::ToiState;
use crate::parallel::par_chunks;
use crate::world::{BodyId, FrameReport, Impact, Velocity, World};

/// What one frame of the crowd did.
#[derive(Clone, Debug)]
pub struct CrowdFrame {
    /// The world's report at the frame's start poses (pairs, contacts, stage times).
    pub report: FrameReport,
    /// Every impact found during the frame (all rounds), earliest first per round.
    pub impacts: Vec<Impact>,
    /// Impact rounds run (1 when the first found none).
    pub rounds: u32,
    /// Moving bodies stopped for this frame (a body at rest that an impact holds, such as
    /// a floor, is not counted).
    pub stopped: usize,
    /// Contact pairs whose closing velocities were exchanged.
    pub bounced: usize,
    /// Seconds spent in the impact rounds and the response.
    pub impact_seconds: f64,
    /// Those seconds by phase, named as stages, in order: `impacts/velocities` (the
    /// contacts' exchanges, the walls, the overlapping pairs, the velocities set),
    /// `impacts/candidates` (the swept boxes and their broadphase), `impacts/rounds`
    /// (conservative advancement of the candidates, round by round, and the bodies
    /// stopped), `impacts/advance` (the end poses, the next velocities).
    pub impact_phases: [(&'static str, f64); 4],
}

/// What [`KinematicCrowd::settle`] did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Settled {
    /// Rounds that moved bodies.
    pub rounds: u32,
    /// Pairs of bodies overlapping at the start (two non-convex bodies once, however many
    /// of their pieces overlap).
    pub initial: usize,
    /// Pairs still overlapping (0: settled).
    pub overlapping: usize,
    /// Body moves over all rounds.
    pub moved: usize,
    /// The last round's pushes moved no body: each was below the rounding of its body's
    /// coordinates, or cancelled (see `pinched`), so more rounds would change nothing. A
    /// guard: a pushed pair overlaps by more than the contact tolerance, at least 64 ulps
    /// of its coordinates, and its push is more than that.
    pub stuck: bool,
    /// Free bodies of the last round's overlapping pairs whose pushes cancelled (a ball
    /// caught between two fixed walls closer than its width, pushed out of each into the
    /// other): no round parts them.
    pub pinched: usize,
    /// Pairs of two fixed bodies overlapping at the start: left as the scene placed them,
    /// and counted in neither `initial` nor `overlapping`.
    pub fixed_overlapping: usize,
}

/// A world whose bodies move as a kinematic crowd.
#[derive(Debug)]
pub struct KinematicCrowd {
    /// The world (shapes, bodies, velocities).
    pub world: World,
    /// Walls: the bodies stay in this box (`None`: no walls).
    pub walls: Option<(DVec3, DVec3)>,
    reach: Vec<f64>,
    /// Bodies whose velocity contacts and impacts leave as it is (a floor, a wall, a
    /// moving platform): what meets one bounces off it as off a body of infinite mass.
    fixed: Vec<bool>,
}

impl KinematicCrowd {
    /// The crowd of a world's bodies, inside `walls`.
    pub fn new(world: World, walls: Option<(DVec3, DVec3)>) -> Self {
        let reach: Vec<f64> = world
            .bodies()
            .iter()
            .map(|b| world.shapes()[b.shape as usize].reach())
            .collect();
        let fixed = vec![false; reach.len()];
        KinematicCrowd {
            world,
            walls,
            reach,
            fixed,
        }
    }

    /// Fixes these bodies: contacts and impacts leave their velocities as they are (a
    /// scene's `fixed` bodies). A fixed body still stops for a frame where it would meet
    /// another, and walls still turn it.
    pub fn fix(&mut self, bodies: &[u32]) -> Result<()> {
        for &b in bodies {
            let slot = self.fixed.get_mut(b as usize).ok_or_else(|| {
                crate::Error::Usage(format!(
                    "body {b} cannot be fixed: the crowd has {} bodies",
                    self.reach.len()
                ))
            })?;
            *slot = true;
        }
        Ok(())
    }

    /// Parts the bodies that overlap now: each round (a [`World::step`] for the contacts)
    /// moves the two bodies of every pair overlapping by more than the contact tolerance
    /// ([`contact_tolerance`](crate::exact::advance::contact_tolerance): less is a touch) apart along its normal, each by the
    /// depth and a thousandth of the smaller body's size (two non-convex bodies overlapping
    /// by several pairs of pieces by the push that meets each of them, `pair_push`; a
    /// body in several pairs takes the sum of its pushes, scaled down to the most that one
    /// of them asks of the sum; a fixed body is not moved, and two fixed bodies are left
    /// overlapping), until no pair overlaps or `max_rounds` ran. Bodies are placed, not
    /// moved: this is for a scene's start, before the first frame. Returns the rounds run
    /// and the pairs still overlapping after the last (0 when settled); it stops early,
    /// `stuck`, when a round's pushes move no body (each below its coordinates' rounding,
    /// or cancelled: `pinched`).
    ///
    /// The rounds run without the depth estimate ([`World::set_depth_estimate`]), which
    /// is put back after: they need only the contacts, the same with it or without, and on
    /// the CPU twins it cost more than the rounds themselves (20,000 crowd bodies at
    /// k = 8: the start took 12.7 s with it, 0.2 s without).
    pub fn settle(&mut self, max_rounds: u32) -> Result<Settled> {
        let k = self.world.depth_estimate();
        if k.is_some() {
            self.world.set_depth_estimate(None)?;
        }
        let settled = self.settle_rounds(max_rounds);
        if k.is_some() {
            self.world.set_depth_estimate(k)?;
        }
        settled
    }

    fn settle_rounds(&mut self, max_rounds: u32) -> Result<Settled> {
        let (mut moved, mut initial, mut fixed_overlapping) = (0, 0, 0);
        for round in 0..=max_rounds {
            let report = self.world.step(0.0)?;
            let mut push = vec![DVec3::ZERO; self.world.len()];
            // The contacts that push, by index (a pile of crates at one point has half a
            // million), each with its push along the normal.
            let mut pushing: Vec<(u32, f64)> = Vec::new();
            // Body pairs, not contacts: two non-convex bodies overlap by several pieces.
            let mut pairs: Vec<[u32; 2]> = Vec::new();
            let mut fixed_pairs: Vec<[u32; 2]> = Vec::new();
            // Each pair of bodies' contacts (several for two non-convex bodies, one piece
            // pair each), by the pair, in the contacts' order.
            let mut by_pair: std::collections::HashMap<[u32; 2], Vec<(u32, f64)>> =
                std::collections::HashMap::new();
            for (k, c) in report.contacts.iter().enumerate() {
                let depth = -c.manifold.min_separation();
                let [a, b] = c.bodies.map(|i| i as usize);
                // Within the contact tolerance the bodies touch: a stack written in
                // decimals overlaps by its rounding (planks at 0.05 and 0.15 high, 0.05
                // thick, by 1.4e-17), and parting it pushed a floor away from its crates.
                if !self.world.overlaps_past_touch(c) {
                    continue;
                }
                // Two fixed bodies stay where the scene put them, and are counted apart.
                if self.fixed[a] && self.fixed[b] {
                    fixed_pairs.push(c.bodies);
                    continue;
                }
                pairs.push(c.bodies);
                // Each body is pushed the whole depth, and a thousandth of the smaller
                // body's size beyond (of the pair's, a floor 100 across lifted a crate 0.07
                // clear of it, out of the speculative distance): in a cluster the pushes
                // undo each other in part, and with half the depth each a crowd took four
                // times the rounds to part.
                let clear = 1e-3 * self.reach[a].min(self.reach[b]);
                let need = depth + clear;
                by_pair.entry(c.bodies).or_default().push((k as u32, need));
            }
            // A pair of bodies pushes once ([`pair_push`]), in the contacts' order, whatever
            // the map's: the same sums every run.
            let mut chosen: Vec<Vec<(u32, f64)>> = by_pair.into_values().collect();
            chosen.sort_unstable_by_key(|contacts| contacts[0].0);
            for contacts in chosen {
                let along = pair_push(&contacts, |k| report.contacts[k as usize].manifold.normal);
                // The deepest contact stands for the pair in a body's own scaling below.
                let bind = contacts
                    .iter()
                    .copied()
                    .fold(contacts[0], |best, c| if c.1 > best.1 { c } else { best });
                let c = &report.contacts[bind.0 as usize];
                let [a, b] = c.bodies.map(|i| i as usize);
                // A fixed body stays (a floor pushed down left the crates resting on it in
                // the air), and the other goes the same way.
                if !self.fixed[a] {
                    push[a] -= along;
                }
                if !self.fixed[b] {
                    push[b] += along;
                }
                pushing.push(bind);
            }
            // A body's pushes add up, scaled down to what the push that needs the most
            // of their sum asks: a crate sunk into two floor tiles at once went up by both
            // depths and was left in the air, where one lifts it clear of both (a
            // non-convex body went up by every overlapping piece's). Pushes at right
            // angles keep their sum, and so do pushes that oppose each other.
            let mut scale = vec![0.0f64; push.len()];
            for &(k, need) in &pushing {
                let c = &report.contacts[k as usize];
                let [a, b] = c.bodies.map(|i| i as usize);
                for (body, n) in [(a, -c.manifold.normal), (b, c.manifold.normal)] {
                    if self.fixed[body] {
                        continue;
                    }
                    let along = push[body].dot(n);
                    scale[body] = scale[body].max(if along > 0.0 {
                        need / along
                    } else {
                        f64::INFINITY
                    });
                }
            }
            for (p, s) in push.iter_mut().zip(&scale) {
                if *s < 1.0 {
                    *p *= *s;
                }
            }
            let count = |pairs: &mut Vec<[u32; 2]>| {
                pairs.sort_unstable();
                pairs.dedup();
                pairs.len()
            };
            let pinched = {
                let mut free: Vec<u32> = pairs
                    .iter()
                    .flatten()
                    .copied()
                    .filter(|&i| !self.fixed[i as usize] && push[i as usize] == DVec3::ZERO)
                    .collect();
                free.sort_unstable();
                free.dedup();
                free.len()
            };
            let overlapping = count(&mut pairs);
            if round == 0 {
                (initial, fixed_overlapping) = (overlapping, count(&mut fixed_pairs));
            }
            let settled = |rounds, stuck| Settled {
                rounds,
                initial,
                overlapping,
                moved,
                stuck,
                pinched,
                fixed_overlapping,
            };
            if overlapping == 0 || round == max_rounds {
                return Ok(settled(round, false));
            }
            let poses: Vec<Pose> = self
                .world
                .bodies()
                .iter()
                .zip(&push)
                .map(|(b, &p)| Pose::new(b.pose.translation + p, b.pose.rotation))
                .collect();
            let now = self.world.bodies().iter().zip(&poses);
            let moves = now
                .filter(|(b, p)| b.pose.translation != p.translation)
                .count();
            if moves == 0 {
                return Ok(settled(round, true));
            }
            moved += moves;
            self.world.set_poses(&poses)?;
        }
        unreachable!("the last round returns")
    }

    /// One frame of `dt` seconds (see the module comment).
    pub fn frame(&mut self, dt: f64) -> Result<CrowdFrame> {
        let report = self.world.step(0.0)?;
        let t = Instant::now();
        let n = self.world.len();
        let mut velocity: Vec<Velocity> = self.world.velocities().to_vec();
        // The bodies whose velocity the contacts and walls change (a few of them), set in
        // the world one by one: a copy and check of every velocity cost more.
        let mut turned = Vec::new();
        let mut bounced = 0;
        for c in &report.contacts {
            if c.manifold.min_separation() > 0.0 {
                continue;
            }
            let [a, b] = c.bodies.map(|i| i as usize);
            if exchange(&mut velocity, &self.fixed, a, b, c.manifold.normal) {
                bounced += 1;
                turned.extend([a, b]);
            }
        }
        if let Some((lo, hi)) = self.walls {
            // Every body read on all cores (a pass over the whole crowd on one thread was
            // most of this phase), the few that turn set after.
            let (bodies, reach, moving) = (self.world.bodies(), &self.reach, &velocity);
            let turns = par_chunks(bodies, WALLS_A_THREAD, |offset, part| {
                let mut turns = Vec::new();
                for (j, body) in part.iter().enumerate() {
                    let i = offset + j;
                    let (p, r) = (body.pose.translation, reach[i]);
                    let mut v = moving[i].linear;
                    for k in 0..3 {
                        if (p[k] - r < lo[k] && v[k] < 0.0) || (p[k] + r > hi[k] && v[k] > 0.0) {
                            v[k] = -v[k];
                        }
                    }
                    if v != moving[i].linear {
                        turns.push((i, v));
                    }
                }
                turns
            });
            for (i, v) in turns {
                velocity[i].linear = v;
                turned.push(i);
            }
        }
        // Impact rounds: the bodies of a pair that would meet stay put this frame.
        // Pairs that overlap now by more than their contact tolerance are the contacts' to
        // part: they have no first contact. Within it they touch (a stack written in
        // decimals overlaps by its rounding) and may close: a crate given its neighbour's
        // speed by a bounce moved a frame's travel into the crate it rested on.
        let overlapping: HashSet<[u32; 2]> = report
            .contacts
            .iter()
            .filter(|c| self.world.overlaps_past_touch(c))
            .map(|c| c.bodies)
            .collect();
        for &i in &turned {
            self.world.set_velocity(BodyId(i as u32), velocity[i])?;
        }
        // From here `velocity` holds what each body moves with next frame: a stopped body
        // takes up its velocity again, exchanged with what it met (only stopped bodies'
        // change, and they are set back after the advance).
        let (mut halted, mut moving_stopped) = (Vec::new(), 0);
        let mut stopped = vec![false; n];
        let mut changed = vec![true; n];
        let (mut impacts, mut rounds) = (Vec::new(), 0);
        let mut phases = [
            ("impacts/velocities", 0.0),
            ("impacts/candidates", 0.0),
            ("impacts/rounds", 0.0),
            ("impacts/advance", 0.0),
        ];
        let mut phase_start = t;
        let mut lap = |phase: usize| {
            let now = Instant::now();
            phases[phase].1 = (now - phase_start).as_secs_f64();
            phase_start = now;
        };
        lap(0);
        // One broadphase over the swept boxes: stopping bodies only shrinks their boxes.
        let mut candidates = self.world.impact_candidates(dt)?;
        if !overlapping.is_empty() {
            candidates.retain(|p| !overlapping.contains(p));
        }
        lap(1);
        loop {
            rounds += 1;
            let asked: Vec<[u32; 2]> = candidates
                .iter()
                .copied()
                .filter(|&[a, b]| changed[a as usize] || changed[b as usize])
                .collect();
            let found = self.world.impacts_among(dt, &asked)?;
            changed.fill(false);
            let mut progress = false;
            for hit in &found {
                let [a, b] = hit.bodies.map(|i| i as usize);
                if stopped[a] && stopped[b] {
                    continue;
                }
                // A pair whose linear parts already part it was brought together by its
                // spins, and would be whichever way they turned.
                if hit.output.state == ToiState::Hit
                    && !exchange(&mut velocity, &self.fixed, a, b, hit.output.normal)
                {
                    for i in [a, b].into_iter().filter(|&i| !self.fixed[i]) {
                        velocity[i].angular = DVec3::ZERO;
                    }
                }
                for i in [a, b] {
                    if !stopped[i] {
                        (stopped[i], changed[i], progress) = (true, true, true);
                        let id = BodyId(i as u32);
                        // A body at rest (a floor, a wall) is held, not stopped.
                        if self.world.velocity(id)? != Velocity::default() {
                            moving_stopped += 1;
                        }
                        self.world.set_velocity(id, Velocity::default())?;
                        halted.push(i);
                    }
                }
            }
            impacts.extend(found);
            if !progress {
                break;
            }
        }
        lap(2);
        self.world.advance(dt)?;
        for &i in &halted {
            self.world.set_velocity(BodyId(i as u32), velocity[i])?;
        }
        lap(3);
        Ok(CrowdFrame {
            report,
            impacts,
            rounds,
            stopped: moving_stopped,
            bounced,
            impact_seconds: t.elapsed().as_secs_f64(),
            impact_phases: phases,
        })
    }
}

/// Sweeps over a pair's contacts when the start works out the push that meets them all
/// (two non-convex bodies' piece pairs); the next round sees what is left.
const PAIR_SWEEPS: usize = 16;

/// The start's push of a pair of bodies (b's way; a goes the other), from its `contacts`
/// (contact index, need) and their normals: the push that meets each need along its own
/// normal, projected onto each contact's half-space in turn from none, a few sweeps
/// (Kaczmarz). The sum of every piece pair's push took two tori 0.4 deep 3.2 each way; the
/// deepest piece pair's alone sent a cow and a thin plate back and forth between two piece
/// pairs for a hundred rounds. One contact is pushed by its need along its normal, as it
/// is.
fn pair_push(contacts: &[(u32, f64)], normal: impl Fn(u32) -> DVec3) -> DVec3 {
    if let [(k, need)] = contacts {
        return normal(*k) * *need;
    }
    let mut along = DVec3::ZERO;
    for _ in 0..PAIR_SWEEPS {
        let mut met = true;
        for &(k, need) in contacts {
            let n = normal(k);
            // Short by more than the rounding of the last projection.
            let short = need - along.dot(n);
            if short > 1e-9 * need {
                along += short * n;
                met = false;
            }
        }
        if met {
            break;
        }
    }
    along
}

/// Bodies a thread checks against the walls at least (a chunk smaller than this costs
/// more to hand out than to check).
const WALLS_A_THREAD: usize = 4096;

/// Equal masses meeting along `n` (from `a` to `b`): when they close, they exchange the
/// normal parts of their velocities; a fixed body's stays, and the other's normal part
/// relative to it turns back (a body of infinite mass); two fixed bodies keep theirs.
/// Returns whether a velocity changed.
fn exchange(v: &mut [Velocity], fixed: &[bool], a: usize, b: usize, n: DVec3) -> bool {
    let (va, vb) = (v[a].linear.dot(n), v[b].linear.dot(n));
    if vb - va >= 0.0 {
        return false;
    }
    match (fixed[a], fixed[b]) {
        (false, false) => {
            v[a].linear += n * (vb - va);
            v[b].linear += n * (va - vb);
        }
        (true, false) => v[b].linear += n * (2.0 * (va - vb)),
        (false, true) => v[a].linear += n * (2.0 * (vb - va)),
        (true, true) => return false,
    }
    true
}
