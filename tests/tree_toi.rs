//! Time of impact between non-convex bodies (hull trees): against advancement on every
//! piece pair without the OBB filter (the same first contact), and against dense sampling
//! of the tree collision test (never later than the first sampled contact, no miss where
//! sampling finds one).

use std::path::Path;
use std::sync::Arc;

use glam::{DQuat, DVec3};
use proxima::bodies::Pose;
use proxima::exact::advance::{ToiInput, ToiState, time_of_impact};
use proxima::exact::tree::{self, TreeCache};
use proxima::exact::tree_toi;
use proxima::geometry::decompose::{Cache, DecomposeParams};
use proxima::geometry::{HullTree, generators};
use proxima::motion::ScrewMotion;
use proxima::rng::Rng;

fn torus() -> HullTree {
    let mesh = generators::torus(1.0, 0.3, 32, 16).unwrap();
    let cache = Cache::At(Path::new(env!("CARGO_TARGET_TMPDIR")).join("hull-cache"));
    HullTree::decompose(&mesh, &DecomposeParams::default(), &cache, &mut |_| {}).unwrap()
}

/// A motion from near `at` by about `shift`, turning up to 2.5 radians.
fn random_motion(rng: &mut Rng, at: DVec3, shift: DVec3) -> ScrewMotion {
    let start = Pose::new(
        at + rng.point_in(DVec3::splat(-0.3), DVec3::splat(0.3)),
        rng.rotation(),
    );
    let spin = DQuat::from_axis_angle(rng.unit_vector(), rng.range(0.0, 2.5));
    let end = Pose::new(
        start.translation + shift + rng.point_in(DVec3::splat(-0.8), DVec3::splat(0.8)),
        (spin * start.rotation).normalize(),
    );
    ScrewMotion::between(start, end).unwrap()
}

/// Random motions of a torus against a torus and against a box.
fn cases() -> Vec<(HullTree, HullTree, ScrewMotion, ScrewMotion)> {
    let t = torus();
    let slab = HullTree::from_convex(Arc::new(
        generators::cuboid(DVec3::new(0.8, 0.15, 0.3)).unwrap(),
    ));
    let mut rng = Rng::new(404);
    let mut out = Vec::new();
    for k in 0..80 {
        let ma = random_motion(&mut rng, DVec3::ZERO, DVec3::ZERO);
        // B starts 1.5 to 3.5 away and heads back toward A, passing it or not.
        let from = rng.unit_vector() * rng.range(1.5, 3.5);
        let shift = -from * rng.range(0.3, 1.6);
        let mb = random_motion(&mut rng, from, shift);
        let other = if k % 2 == 0 { t.clone() } else { slab.clone() };
        out.push((t.clone(), other, ma, mb));
    }
    out
}

#[test]
fn the_first_contact_of_all_piece_pairs() {
    let (mut hits, mut kept, mut all, mut worst) = (0, 0, 0, 0.0f64);
    for (a, b, ma, mb) in cases() {
        let ours = tree_toi::time_of_impact(&a, ma, &b, mb);
        let mut first: Option<(f64, ToiState)> = None;
        for (i, x) in a.pieces().enumerate() {
            for (j, y) in b.pieces().enumerate() {
                let r = time_of_impact(&ToiInput::new(x, ma, y, mb));
                all += 1;
                if r.state != ToiState::Miss && first.is_none_or(|(t, _)| r.toi < t) {
                    first = Some((r.toi, r.state));
                    let _ = (i, j);
                }
            }
        }
        kept += ours.candidates;
        match first {
            None => assert_eq!(ours.output.state, ToiState::Miss, "{ours:?}"),
            Some((t, state)) => {
                // The winning pair starts where the filter proved it apart until, so its
                // advancement lands elsewhere in the window where the pieces are within
                // the tolerance: the same contact, a few ulps of the tolerance away.
                assert_eq!(ours.output.state, state, "{ours:?}");
                assert!((ours.output.toi - t).abs() <= 1e-6, "{t} vs {ours:?}");
                worst = worst.max((ours.output.toi - t).abs());
                hits += 1;
            }
        }
    }
    eprintln!(
        "{hits} hits (at most {worst:e} from all pairs' first); the OBB filter kept {kept} of \
         {all} piece pairs"
    );
    assert!(hits > 20, "{hits}");
}

#[test]
fn never_later_than_sampled_contact() {
    let (mut hits, mut misses) = (0, 0);
    for (a, b, ma, mb) in cases() {
        let ours = tree_toi::time_of_impact(&a, ma, &b, mb);
        let samples = 1_000;
        let sampled = (0..=samples)
            .map(|k| f64::from(k) / f64::from(samples))
            .find(|&t| tree::collide(&a, ma.at(t), &b, mb.at(t), &mut TreeCache::new()).is_some());
        match sampled {
            Some(t) => {
                assert_ne!(ours.output.state, ToiState::Miss, "sampled contact at {t}");
                assert!(
                    ours.output.toi <= t,
                    "ours {} after sampled {t}",
                    ours.output.toi
                );
                // Not much earlier either: the sample before was clear.
                assert!(ours.output.toi >= t - 1.0 / f64::from(samples) - 1e-9);
                hits += 1;
            }
            None => misses += usize::from(ours.output.state == ToiState::Miss),
        }
    }
    assert!(hits > 20 && misses > 10, "{hits} hits, {misses} misses");
}

/// A hull tree against spheres and capsules: the first contact of the rounded advancement
/// over every piece (to within 1e-6), and never later than sampled contact.
#[test]
fn a_tree_against_rounded_bodies() {
    use proxima::exact::rounded::plain;
    use proxima::exact::rounded_toi;
    use proxima::geometry::rounded::Rounded;
    let t = torus();
    let bodies = [
        Rounded::sphere(0.3).unwrap(),
        Rounded::capsule(0.6, 0.15).unwrap(),
    ];
    let mut rng = Rng::new(808);
    let (mut hits, mut worst) = (0, 0.0f64);
    for k in 0..60 {
        let body = &bodies[k % 2];
        let ma = random_motion(&mut rng, DVec3::ZERO, DVec3::ZERO);
        let from = rng.unit_vector() * rng.range(1.5, 3.0);
        let shift = -from * rng.range(0.3, 1.6);
        let mb = random_motion(&mut rng, from, shift);
        let ours = tree_toi::time_of_impact_rounded(&t, ma, body, mb);
        let every = t
            .pieces()
            .map(|p| rounded_toi::time_of_impact(&plain(p.clone()), ma, body, mb, None, None))
            .filter(|o| o.state != ToiState::Miss)
            .map(|o| o.toi)
            .fold(f64::INFINITY, f64::min);
        if every.is_finite() {
            // The winning piece starts where the filter proved it apart until: the same
            // contact, elsewhere in the window where it is within the tolerance.
            assert!(
                (ours.output.toi - every).abs() <= 1e-6,
                "{every} vs {ours:?}"
            );
            assert_ne!(ours.output.state, ToiState::Miss, "{ours:?}");
            worst = worst.max((ours.output.toi - every).abs());
            hits += 1;
        } else {
            assert_eq!(ours.output.state, ToiState::Miss, "{ours:?}");
        }
        let sampled = (0..=1000)
            .map(|k| f64::from(k) / 1000.0)
            .find(|&s| tree::collide_with_rounded(&t, ma.at(s), body, mb.at(s)));
        if let Some(s) = sampled {
            assert_ne!(ours.output.state, ToiState::Miss, "sampled contact at {s}");
            assert!(ours.output.toi <= s, "{} after {s}", ours.output.toi);
        }
    }
    eprintln!("{hits} hits, at most {worst:e} from every piece's first contact");
    assert!(hits > 15, "{hits}");
}
