//! The dynamic OBB filter (Eberly, with a rotation bound) against dense sampling of the
//! exact static separating-axis test: on random motions with rotation, it never answers
//! "separated" for boxes that touch at a sampled time. Its tightness (how often it says
//! "may collide" when sampling finds no contact) is printed.

use glam::{DMat3, DQuat, DVec3};
use proxima::bodies::Pose;
use proxima::exact::dynamic_obb::{
    MAX_DEPTH, MovingBox, candidates_during, piece_pairs_during, separated_during,
};
use proxima::exact::sat;
use proxima::exact::tree_toi::FILTER_DEPTH;
use proxima::geometry::decompose::{Cache, DecomposeParams};
use proxima::geometry::obb::Obb;
use proxima::geometry::{HullTree, generators};
use proxima::motion::ScrewMotion;
use proxima::rng::Rng;

/// Static separating-axis test of two world boxes, written out from the definition:
/// true when some axis strictly separates them.
fn apart_at(a: &Obb, pa: &Pose, b: &Obb, pb: &Pose) -> bool {
    let ax = [
        pa.rotation * a.axes.x_axis,
        pa.rotation * a.axes.y_axis,
        pa.rotation * a.axes.z_axis,
    ];
    let bx = [
        pb.rotation * b.axes.x_axis,
        pb.rotation * b.axes.y_axis,
        pb.rotation * b.axes.z_axis,
    ];
    let d = pb.transform_point(b.center) - pa.transform_point(a.center);
    let project = |axes: &[DVec3; 3], half: DVec3, l: DVec3| {
        (0..3).map(|i| half[i] * axes[i].dot(l).abs()).sum::<f64>()
    };
    let mut candidates: Vec<DVec3> = ax.iter().chain(&bx).copied().collect();
    for x in ax {
        for y in bx {
            let c = x.cross(y);
            if c.length() > 1e-9 {
                candidates.push(c / c.length());
            }
        }
    }
    candidates
        .iter()
        .any(|&l| d.dot(l).abs() > project(&ax, a.half, l) + project(&bx, b.half, l))
}

/// Whether the boxes touch at any of `samples` evenly spaced times.
fn touch_sampled(a: &Obb, ma: &ScrewMotion, b: &Obb, mb: &ScrewMotion, samples: u32) -> bool {
    (0..samples).any(|k| {
        let t = f64::from(k) / f64::from(samples - 1);
        !apart_at(a, &ma.at(t), b, &mb.at(t))
    })
}

fn random_obb(rng: &mut Rng) -> Obb {
    Obb {
        center: rng.point_in(DVec3::splat(-0.5), DVec3::splat(0.5)),
        axes: DMat3::from_quat(rng.rotation()),
        half: rng.point_in(DVec3::splat(0.02), DVec3::splat(1.0)),
    }
}

/// A motion from near `at` that moves up to `reach` and turns up to `turn` radians.
fn random_motion(rng: &mut Rng, at: DVec3, reach: f64, turn: f64) -> ScrewMotion {
    let start = Pose::new(
        at + rng.point_in(DVec3::splat(-0.5), DVec3::splat(0.5)),
        rng.rotation(),
    );
    let spin = DQuat::from_axis_angle(rng.unit_vector(), rng.range(0.0, turn));
    let end = Pose::new(
        start.translation + rng.unit_vector() * rng.range(0.0, reach),
        (spin * start.rotation).normalize(),
    );
    ScrewMotion::between(start, end).unwrap()
}

/// Runs `count` random motions from `seed`, sampling `samples` times where the filter says
/// "separated"; returns (separated, may collide, may collide but no sampled contact).
fn run(seed: u64, count: usize, samples: u32) -> (usize, usize, usize) {
    let mut rng = Rng::new(seed);
    let (mut separated, mut may, mut loose) = (0, 0, 0);
    for i in 0..count {
        let a = random_obb(&mut rng);
        let b = random_obb(&mut rng);
        let ma = random_motion(&mut rng, DVec3::ZERO, 2.0, 3.0);
        let gap = rng.range(0.5, 4.0);
        let toward = rng.unit_vector() * gap;
        let mb = random_motion(&mut rng, toward, 3.0, 3.0);
        let apart = separated_during(
            &MovingBox::new(&a, &ma),
            &MovingBox::new(&b, &mb),
            MAX_DEPTH,
        );
        if apart {
            separated += 1;
            assert!(
                !touch_sampled(&a, &ma, &b, &mb, samples),
                "motion {i} of seed {seed}: \"separated\" but the boxes touch at a sampled time"
            );
        } else {
            may += 1;
            if i % 10 == 0 && !touch_sampled(&a, &ma, &b, &mb, 2_000) {
                loose += 1;
            }
        }
    }
    (separated, may, loose)
}

#[test]
fn never_separated_when_sampling_finds_contact() {
    // 10,000 motions at 10^4 samples each, and 200 more at 10^5, on two threads.
    let jobs: [(u64, usize, u32); 4] = [
        (1, 5_000, 10_000),
        (2, 5_000, 10_000),
        (3, 100, 100_000),
        (4, 100, 100_000),
    ];
    let results: Vec<(usize, usize, usize)> = std::thread::scope(|s| {
        let handles: Vec<_> = jobs
            .iter()
            .map(|&(seed, count, samples)| s.spawn(move || run(seed, count, samples)))
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let separated: usize = results.iter().map(|r| r.0).sum();
    let may: usize = results.iter().map(|r| r.1).sum();
    let loose: usize = results.iter().map(|r| r.2).sum();
    eprintln!(
        "{separated} motions proved separated (0 touch when sampled), {may} may collide (of a tenth of them, {loose} show no contact at 2,000 samples)"
    );
    assert!(separated > 2_000 && may > 1_000, "{separated} / {may}");
}

/// Everyday cases: a box resting on another and sliding along it touches throughout; a
/// box that passes 1e-6 above another without turning is separated; a plank spinning a
/// third of a turn next to a post sweeps through it although both end poses are clear.
#[test]
fn everyday_motions() {
    let unit = Obb {
        center: DVec3::ZERO,
        axes: DMat3::IDENTITY,
        half: DVec3::ONE,
    };
    let rest = ScrewMotion::resting(Pose::default());
    let slide = ScrewMotion::between(
        Pose::new(DVec3::new(-3.0, 0.0, 2.0), DQuat::IDENTITY),
        Pose::new(DVec3::new(3.0, 0.0, 2.0), DQuat::IDENTITY),
    )
    .unwrap();
    let fixed = MovingBox::new(&unit, &rest);
    assert!(!separated_during(
        &fixed,
        &MovingBox::new(&unit, &slide),
        MAX_DEPTH
    ));
    let above = ScrewMotion::between(
        Pose::new(DVec3::new(-3.0, 0.0, 2.0 + 1e-6), DQuat::IDENTITY),
        Pose::new(DVec3::new(3.0, 0.0, 2.0 + 1e-6), DQuat::IDENTITY),
    )
    .unwrap();
    assert!(separated_during(
        &fixed,
        &MovingBox::new(&unit, &above),
        MAX_DEPTH
    ));
    let plank = Obb {
        center: DVec3::ZERO,
        axes: DMat3::IDENTITY,
        half: DVec3::new(3.0, 0.1, 0.1),
    };
    let post = Obb {
        center: DVec3::new(0.0, 2.0, 0.0),
        axes: DMat3::IDENTITY,
        half: DVec3::new(0.1, 0.1, 1.0),
    };
    let spin = ScrewMotion::between(
        Pose::default(),
        Pose::new(DVec3::ZERO, DQuat::from_rotation_z(2.0)),
    )
    .unwrap();
    let (start_clear, end_clear) = (
        !touch_sampled(&plank, &ScrewMotion::resting(spin.start()), &post, &rest, 2),
        !touch_sampled(&plank, &ScrewMotion::resting(spin.end()), &post, &rest, 2),
    );
    assert!(start_clear && end_clear);
    assert!(!separated_during(
        &MovingBox::new(&plank, &spin),
        &MovingBox::new(&post, &rest),
        MAX_DEPTH
    ));
}

/// A fitted box holds its points, and its first axis follows the cloud's long side.
#[test]
fn fitted_boxes_hold_their_points() {
    let mut rng = Rng::new(9);
    for _ in 0..50 {
        let turn = rng.rotation();
        let points: Vec<DVec3> = (0..400)
            .map(|_| turn * rng.point_in(DVec3::new(-3.0, -1.0, -0.2), DVec3::new(3.0, 1.0, 0.2)))
            .collect();
        let obb = Obb::fit(&points);
        for p in &points {
            let u = obb.axes.transpose() * (*p - obb.center);
            assert!(u.abs().cmple(obb.half).all(), "{u} outside {}", obb.half);
        }
        let long = turn * DVec3::X;
        assert!(obb.axes.x_axis.dot(long).abs() > 0.95, "{:?}", obb.axes);
    }
}

/// The OBB-tree filter on two tori: every piece pair that overlaps at a sampled time of
/// the step (the exact separating-axis test, after a bounding-sphere check) is in the
/// filter's list (unhalved, at the time-of-impact filter's depth and at the deepest, each
/// pair once), proved apart only until a time before the overlap.
#[test]
fn tree_filter_keeps_every_touching_piece_pair() {
    let mesh = generators::torus(1.0, 0.3, 32, 16).unwrap();
    let torus =
        HullTree::decompose(&mesh, &DecomposeParams::default(), &Cache::Off, &mut |_| {}).unwrap();
    let mut rng = Rng::new(31);
    let (mut kept, mut touching, mut total) = (0, 0, 0);
    for _ in 0..40 {
        let ma = random_motion(&mut rng, DVec3::ZERO, 1.0, 2.0);
        let toward = rng.unit_vector() * rng.range(1.0, 3.0);
        let mb = random_motion(&mut rng, toward, 2.0, 2.0);
        // Unhalved, at the time-of-impact filter's depth, and at the deepest.
        let lists = [0, FILTER_DEPTH, MAX_DEPTH]
            .map(|depth| candidates_during(&torus, &ma, &torus, &mb, depth));
        for list in &lists {
            assert!(
                list.windows(2).all(|w| w[0].pieces < w[1].pieces),
                "a pair listed twice"
            );
        }
        let pairs: Vec<(u32, u32)> = lists[2].iter().map(|c| c.pieces).collect();
        assert_eq!(
            piece_pairs_during(&torus, &ma, &torus, &mb, MAX_DEPTH),
            pairs
        );
        kept += lists[2].len();
        total += torus.num_pieces() * torus.num_pieces();
        for k in 0..100 {
            let t = f64::from(k) / 99.0;
            let (pa, pb) = (ma.at(t), mb.at(t));
            for (i, x) in torus.pieces().enumerate() {
                for (j, y) in torus.pieces().enumerate() {
                    let gap = pa
                        .transform_point(x.centroid())
                        .distance(pb.transform_point(y.centroid()));
                    let reach = |p: &proxima::geometry::ConvexPolytope| {
                        p.vertices()
                            .iter()
                            .map(|v| v.distance(p.centroid()))
                            .fold(0.0, f64::max)
                    };
                    if gap > reach(x) + reach(y) || !sat::intersects(x, &pa, y, &pb) {
                        continue;
                    }
                    touching += 1;
                    for (list, depth) in lists.iter().zip([0, FILTER_DEPTH, MAX_DEPTH]) {
                        let kept = list
                            .binary_search_by_key(&(i as u32, j as u32), |c| c.pieces)
                            .map(|k| list[k]);
                        assert!(
                            kept.is_ok_and(|c| c.apart_until <= t),
                            "pieces {i}, {j} overlap at t = {t} but were filtered out at \
                             depth {depth}, or proved apart until later: {kept:?}"
                        );
                    }
                }
            }
        }
    }
    eprintln!("filter kept {kept} of {total} piece pairs; {touching} sampled overlaps, all kept");
    assert!(touching > 100, "{touching}");
}

/// A tree against one moving box (what a tree against a sphere or a capsule filters with):
/// every piece whose hull overlaps the box at a sampled time of the step is listed, and
/// proved apart only until a time before the overlap.
#[test]
fn pieces_near_a_box_keep_every_touching_piece() {
    use proxima::exact::dynamic_obb::pieces_near_box;
    use proxima::geometry::generators::cuboid;
    let mesh = generators::torus(1.0, 0.3, 32, 16).unwrap();
    let torus =
        HullTree::decompose(&mesh, &DecomposeParams::default(), &Cache::Off, &mut |_| {}).unwrap();
    let mut rng = Rng::new(32);
    let (mut kept, mut touching) = (0, 0);
    for _ in 0..60 {
        let body = random_obb(&mut rng);
        let hull = cuboid(body.half).unwrap();
        // The box as a polytope in its body frame.
        let place = Pose::new(body.center, DQuat::from_mat3(&body.axes));
        let ma = random_motion(&mut rng, DVec3::ZERO, 1.0, 2.0);
        let toward = rng.unit_vector() * rng.range(1.0, 3.0);
        let mb = random_motion(&mut rng, toward, 2.0, 2.0);
        for depth in [0, FILTER_DEPTH, MAX_DEPTH] {
            let list = pieces_near_box(&torus, &ma, &body, &mb, depth);
            assert!(list.windows(2).all(|w| w[0].pieces < w[1].pieces));
            assert!(list.iter().all(|c| c.pieces.1 == 0));
            kept += list.len();
            for k in 0..200 {
                let t = f64::from(k) / 199.0;
                let (pa, pb) = (ma.at(t), mb.at(t));
                let pose_box = Pose::new(
                    pb.transform_point(place.translation),
                    pb.rotation * place.rotation,
                );
                for (i, piece) in torus.pieces().enumerate() {
                    if !sat::intersects(piece, &pa, &hull, &pose_box) {
                        continue;
                    }
                    touching += 1;
                    let found = list
                        .binary_search_by_key(&(i as u32, 0), |c| c.pieces)
                        .map(|k| list[k]);
                    assert!(
                        found.is_ok_and(|c| c.apart_until <= t),
                        "piece {i} overlaps the box at t = {t}, depth {depth}: {found:?}"
                    );
                }
            }
        }
    }
    eprintln!("{kept} pieces listed; {touching} sampled overlaps, all listed in time");
    assert!(touching > 100, "{touching}");
}

/// Deeper than the placements a sweep keeps (8 halvings), the sub-intervals' starts are
/// computed as asked: 12 halvings separate every motion 8 do, and what they separate
/// shows no contact at 2,000 samples; 30 (the most) on boxes far apart answers at once.
#[test]
fn deep_halving_never_loosens() {
    let mut rng = Rng::new(33);
    let (mut more, mut both) = (0, 0);
    for _ in 0..300 {
        let (a, b) = (random_obb(&mut rng), random_obb(&mut rng));
        let ma = random_motion(&mut rng, DVec3::ZERO, 2.0, 3.0);
        let toward = rng.unit_vector() * rng.range(0.5, 4.0);
        let mb = random_motion(&mut rng, toward, 3.0, 3.0);
        let (x, y) = (MovingBox::new(&a, &ma), MovingBox::new(&b, &mb));
        let (shallow, deep) = (
            separated_during(&x, &y, MAX_DEPTH),
            separated_during(&x, &y, 12),
        );
        assert!(!shallow || deep, "8 halvings separate what 12 do not");
        if deep {
            assert!(!touch_sampled(&a, &ma, &b, &mb, 2_000));
            both += usize::from(shallow);
            more += usize::from(!shallow);
        }
    }
    eprintln!("{both} separated at 8 and 12 halvings, {more} more at 12");
    assert!(both > 50, "{both}");
    let far = ScrewMotion::resting(Pose::new(DVec3::splat(100.0), DQuat::IDENTITY));
    let rest = ScrewMotion::resting(Pose::default());
    let unit = Obb {
        center: DVec3::ZERO,
        axes: DMat3::IDENTITY,
        half: DVec3::ONE,
    };
    assert!(separated_during(
        &MovingBox::new(&unit, &rest),
        &MovingBox::new(&unit, &far),
        30
    ));
}
