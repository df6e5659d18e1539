//! The shapes people model first: crates on a grid, planks crossed at right angles,
//! sheets, exact touches, quarter turns. Every pair of the generated families is answered
//! by the walk (no failure), `collide` is right exactly (touching counts), and the distance
//! and closest points match the analytic answer: the boxes stay axis-aligned under quarter
//! turns, so the per-axis gaps give the exact distance.

use glam::{DQuat, DVec3};
use proxima::bodies::Pose;
use proxima::exact::walk::{WalkCache, WalkInput, WalkState, walk};
use proxima::geometry::brute::polytope_distance;
use proxima::geometry::generators;
use proxima::rng::Rng;

/// A box of half extents `h` at a pose whose rotation is a quarter or half turn (or none).
#[derive(Clone, Copy, Debug)]
struct PlacedBox {
    half: DVec3,
    pose: Pose,
}

impl PlacedBox {
    /// Half extents along the world axes (quarter turns permute them).
    fn world_half(&self) -> DVec3 {
        let m = glam::DMat3::from_quat(self.pose.rotation);
        DVec3::from_array(std::array::from_fn(|i| {
            (0..3)
                .map(|j| m.row(i)[j].abs().round() * self.half[j])
                .sum()
        }))
    }

    fn contains(&self, p: DVec3, tol: f64) -> bool {
        let d = (p - self.pose.translation).abs() - self.world_half();
        d.max_element() <= tol
    }
}

/// Rotations a user writes for boxes: identity, quarter and half turns about each axis
/// (the quarter turn's components are √½ rounded, as users write them).
fn axis_turn(rng: &mut Rng) -> DQuat {
    let s = std::f64::consts::FRAC_1_SQRT_2;
    let choices = [
        DQuat::IDENTITY,
        DQuat::from_xyzw(s, 0.0, 0.0, s),
        DQuat::from_xyzw(0.0, s, 0.0, s),
        DQuat::from_xyzw(0.0, 0.0, s, s),
        DQuat::from_xyzw(-s, 0.0, 0.0, s),
        DQuat::from_xyzw(0.0, 0.0, -s, s),
        DQuat::from_xyzw(1.0, 0.0, 0.0, 0.0),
        DQuat::from_xyzw(0.0, 0.0, 1.0, 0.0),
    ];
    choices[rng.below(choices.len() as u64) as usize]
}

/// k/64 for k in [lo, hi].
fn dyadic(rng: &mut Rng, lo: i64, hi: i64) -> f64 {
    (lo + rng.below((hi - lo + 1) as u64) as i64) as f64 / 64.0
}

fn dyadic_vec(rng: &mut Rng, lo: i64, hi: i64) -> DVec3 {
    DVec3::new(
        dyadic(rng, lo, hi),
        dyadic(rng, lo, hi),
        dyadic(rng, lo, hi),
    )
}

/// One pair of a family, by index: crates, planks, sheets, crossed planks.
fn family_pair(rng: &mut Rng, family: u64) -> (PlacedBox, PlacedBox) {
    let plank = |rng: &mut Rng| {
        let t = dyadic(rng, 2, 16);
        let mut h = DVec3::splat(t);
        h[rng.below(3) as usize] = 8.0 * t;
        h
    };
    let sheet = |rng: &mut Rng| {
        let mut h = dyadic_vec(rng, 8, 64);
        h[rng.below(3) as usize] = 2f64.powi(-30);
        h
    };
    let (ha, hb, rotations) = match family {
        // Crates: boxes on the grid, identity rotations.
        0 => (dyadic_vec(rng, 1, 96), dyadic_vec(rng, 1, 96), false),
        // Crates with quarter turns.
        1 => (dyadic_vec(rng, 1, 96), dyadic_vec(rng, 1, 96), true),
        // Planks, turned.
        2 => (plank(rng), plank(rng), true),
        // Sheets, turned.
        3 => (sheet(rng), sheet(rng), true),
        // Crossed planks: B is A's plank turned a quarter about z, stacked, side by side or
        // through each other.
        _ => {
            let t = dyadic(rng, 2, 16);
            let h = DVec3::new(8.0 * t, t, t);
            let a = PlacedBox {
                half: h,
                pose: Pose::default(),
            };
            let s = std::f64::consts::FRAC_1_SQRT_2;
            let lift = match rng.below(4) {
                0 => 2.0 * t,                              // resting on it: touching
                1 => 2.0 * t + dyadic(rng, 1, 64),         // above it
                2 => dyadic(rng, 0, 127) / 64.0 * 2.0 * t, // through it
                _ => 2.0 * t - 2f64.powi(-30),             // sunk by a hair
            };
            let slide = DVec3::new(dyadic(rng, -64, 64), dyadic(rng, -64, 64), lift);
            let b = PlacedBox {
                half: h,
                pose: Pose {
                    translation: slide,
                    rotation: DQuat::from_xyzw(0.0, 0.0, s, s),
                },
            };
            return (a, b);
        }
    };
    let pose = |rng: &mut Rng| Pose {
        translation: dyadic_vec(rng, -192, 192),
        rotation: if rotations {
            axis_turn(rng)
        } else {
            DQuat::IDENTITY
        },
    };
    (
        PlacedBox {
            half: ha,
            pose: pose(rng),
        },
        PlacedBox {
            half: hb,
            pose: pose(rng),
        },
    )
}

/// The exact answer: per-axis gaps (exact in binary for these inputs).
fn analytic(a: &PlacedBox, b: &PlacedBox) -> (f64, f64) {
    let gaps = (a.pose.translation - b.pose.translation).abs() - (a.world_half() + b.world_half());
    let distance = gaps.max(DVec3::ZERO).length();
    (gaps.max_element(), distance)
}

struct Tally {
    pairs: usize,
    touching: usize,
    overlapping: usize,
    separated: usize,
}

fn check_pair(label: &str, a: &PlacedBox, b: &PlacedBox, tally: &mut Tally) {
    let pa = generators::cuboid(a.half).expect("box");
    let pb = generators::cuboid(b.half).expect("box");
    let out = walk(&WalkInput::new(&pa, a.pose, &pb, b.pose));
    let (gap, want) = analytic(a, b);
    tally.pairs += 1;
    assert!(
        !matches!(out.state, WalkState::Failed(_)),
        "{label}: walk failed: {out:?} for {a:?} {b:?}"
    );
    if gap > 0.0 {
        tally.separated += 1;
        assert_eq!(out.state, WalkState::Separated, "{label}: {a:?} {b:?}");
        assert!(
            (out.distance - want).abs() <= 1e-12 * want.max(1.0),
            "{label}: distance {} vs exact {want} for {a:?} {b:?}",
            out.distance
        );
    } else if gap == 0.0 {
        tally.touching += 1;
        assert_eq!(out.state, WalkState::Touching, "{label}: {a:?} {b:?}");
        assert_eq!(out.distance, 0.0);
    } else {
        tally.overlapping += 1;
        assert_eq!(out.state, WalkState::Penetrating, "{label}: {a:?} {b:?}");
    }
    if out.state != WalkState::Penetrating {
        let scale =
            1e-9 * (a.pose.translation.abs() + b.pose.translation.abs() + 4.0).max_element();
        assert!(
            a.contains(out.point_a, scale),
            "{label}: point_a off A: {out:?} {a:?}"
        );
        assert!(
            b.contains(out.point_b, scale),
            "{label}: point_b off B: {out:?} {b:?}"
        );
        assert!(
            (out.point_a.distance(out.point_b) - out.distance).abs() <= 1e-12 * want.max(1.0),
            "{label}: points are not `distance` apart: {out:?}"
        );
    }
}

#[test]
fn a_hundred_thousand_everyday_pairs_are_answered_exactly() {
    let mut rng = Rng::new(10);
    let mut tally = Tally {
        pairs: 0,
        touching: 0,
        overlapping: 0,
        separated: 0,
    };
    for i in 0..100_000u64 {
        let family = i % 5;
        let (a, b) = family_pair(&mut rng, family);
        check_pair(&format!("pair {i} (family {family})"), &a, &b, &mut tally);
    }
    // The families reach every outcome often.
    assert!(
        tally.touching > 3_000 && tally.overlapping > 5_000 && tally.separated > 20_000,
        "touching {} overlapping {} separated {}",
        tally.touching,
        tally.overlapping,
        tally.separated
    );
}

#[test]
fn everyday_pairs_agree_with_brute_force_enumeration() {
    // The analytic oracle checks the boxes as boxes; enumeration over the polytopes' feature
    // pairs checks the same answers through the polytopes the walk sees.
    let mut rng = Rng::new(11);
    for i in 0..2_000u64 {
        let (a, b) = family_pair(&mut rng, i % 5);
        let (gap, _) = analytic(&a, &b);
        if gap <= 0.0 {
            continue;
        }
        let pa = generators::cuboid(a.half).expect("box");
        let pb = generators::cuboid(b.half).expect("box");
        let out = walk(&WalkInput::new(&pa, a.pose, &pb, b.pose));
        let (brute, _, _) = polytope_distance(&pa, &a.pose, &pb, &b.pose);
        assert!(
            (out.distance - brute).abs() <= 1e-12 * brute.max(1.0),
            "pair {i}: walk {} brute {brute}",
            out.distance
        );
    }
}

#[test]
fn warm_started_walks_along_a_sliding_stack_never_fail() {
    // A plank sliding across another, resting on it, then lifting off: the cached pair of
    // each step starts the next (coherence through the degenerate touching states).
    let h = DVec3::new(1.0, 0.125, 0.125);
    let a = generators::cuboid(h).expect("box");
    let s = std::f64::consts::FRAC_1_SQRT_2;
    let turn = DQuat::from_xyzw(0.0, 0.0, s, s);
    let mut cache = WalkCache::default();
    for k in 0..=512 {
        let x = -1.5 + f64::from(k) / 128.0;
        let lift = if k < 256 {
            0.25
        } else {
            0.25 + f64::from(k - 256) / 1024.0
        };
        let pose_b = Pose {
            translation: DVec3::new(x, 0.0, lift),
            rotation: turn,
        };
        let out = cache.query(&a, Pose::default(), &a, pose_b);
        let b = PlacedBox {
            half: h,
            pose: pose_b,
        };
        let (gap, want) = analytic(
            &PlacedBox {
                half: h,
                pose: Pose::default(),
            },
            &b,
        );
        let label = format!("step {k}");
        assert!(
            !matches!(out.state, WalkState::Failed(_)),
            "{label}: {out:?}"
        );
        if gap == 0.0 {
            assert_eq!(out.state, WalkState::Touching, "{label}");
        } else if gap > 0.0 {
            assert!(
                (out.distance - want).abs() <= 1e-12,
                "{label}: {out:?} want {want}"
            );
        }
    }
}

/// The issue's examples, as the binary answers them.
#[test]
fn the_reported_examples_are_answered() {
    let cases = [
        // crossed planks apart: "walk failed (Cycle)" before
        (
            r#"{"id":3,"query":"distance","a":{"box":[1,0.1,0.1]},"b":{"box":[0.1,1,0.1]},"pose_b":{"translation":[0,0,1]}}"#,
            Some(0.8),
        ),
        // exact face touch: `false` and 2.2e-16 before
        (
            r#"{"id":4,"query":"distance","a":{"box":[0.25,0.75,1.625]},"b":{"box":[0.625,1.75,1.75]},"pose_b":{"translation":[-0.875,0.375,-1.5]}}"#,
            Some(0.0),
        ),
        // crossed planks resting on each other: point_b was 0.9 away from b
        (
            r#"{"id":5,"query":"distance","a":{"box":[1,0.1,0.1]},"b":{"box":[0.1,1,0.1]},"pose_b":{"translation":[0,0,0.2]}}"#,
            Some(0.0),
        ),
    ];
    let mut engine = proxima::query::QueryEngine::new();
    for (line, want) in cases {
        let answer = engine.answer_line(line);
        let got = answer["distance"].as_f64();
        assert!(
            got.zip(want).is_some_and(|(g, w)| (g - w).abs() <= 1e-15),
            "{line}: {answer}"
        );
        if want == Some(0.0) {
            assert_eq!(answer["intersecting"], true, "{line}: {answer}");
            let collide = engine.answer_line(&line.replace("\"distance\"", "\"collide\""));
            assert_eq!(collide["intersecting"], true, "{line}: {collide}");
        }
    }
    // Point b of example 5 lies on b.
    let answer = engine.answer_line(cases[2].0);
    let pb = DVec3::from_array(std::array::from_fn(|i| {
        answer["point_b"][i].as_f64().expect("point_b")
    }));
    let b = PlacedBox {
        half: DVec3::new(0.1, 1.0, 0.1),
        pose: Pose {
            translation: DVec3::new(0.0, 0.0, 0.2),
            rotation: DQuat::IDENTITY,
        },
    };
    assert!(b.contains(pb, 1e-12), "{answer}");
}
