//! Penetration depth: the Gauss-map walk against enumeration of every candidate (the
//! oracle), parry3d-f64's EPA as a peer (its disagreements settled by enumeration),
//! analytic boxes, everyday shapes and warm sequences.

mod common;

use glam::{DQuat, DVec3};
use proxima::bodies::Pose;
use proxima::exact::depth::{DepthCache, DepthInput, Penetration, enumerate, walk};
use proxima::exact::walk::{WalkInput, WalkState};
use proxima::geometry::{ConvexPolytope, generators};
use proxima::rng::Rng;

fn cold(a: &ConvexPolytope, pa: Pose, b: &ConvexPolytope, pb: Pose) -> Option<Penetration> {
    walk(&DepthInput::new(a, pa, b, pb))
}

/// The answer's own contract: unit normal, `(point_a − point_b)·normal = depth`, each point
/// on its body's surface, and moving B by depth·normal (plus a hair) separates the bodies.
fn check_contract(
    label: &str,
    p: &Penetration,
    a: &ConvexPolytope,
    pa: &Pose,
    b: &ConvexPolytope,
    pb: &Pose,
) {
    let scale = 1.0 + pa.translation.abs().max_element() + pb.translation.abs().max_element();
    let tol = 1e-9 * scale;
    assert!(
        (p.normal.length() - 1.0).abs() < 1e-12,
        "{label}: normal {p:?}"
    );
    assert!(
        ((p.point_a - p.point_b).dot(p.normal) - p.depth).abs() <= tol,
        "{label}: witness gap vs depth {p:?}"
    );
    assert!(
        common::height(a, pa, p.point_a).abs() <= tol,
        "{label}: point_a off A's surface {p:?}"
    );
    assert!(
        common::height(b, pb, p.point_b).abs() <= tol,
        "{label}: point_b off B's surface {p:?}"
    );
    let moved = Pose::new(
        pb.translation + p.normal * (p.depth + 1e-6 * scale),
        pb.rotation,
    );
    let w = proxima::exact::walk::walk(&WalkInput::new(a, *pa, b, moved));
    assert_eq!(
        w.state,
        WalkState::Separated,
        "{label}: moving B by the depth does not separate"
    );
}

/// Random overlapping pair: hulls of 4 to 60 points, B's center inside A's reach.
fn random_pair(rng: &mut Rng) -> (ConvexPolytope, Pose, ConvexPolytope, Pose) {
    let (ka, kb) = (4 + rng.below(57) as usize, 4 + rng.below(57) as usize);
    let (ra, rb) = (rng.range(0.2, 2.0), rng.range(0.2, 2.0));
    let a = generators::random_hull(rng, ka, ra).unwrap();
    let b = generators::random_hull(rng, kb, rb).unwrap();
    let pa = Pose::new(
        rng.point_in(DVec3::splat(-3.0), DVec3::splat(3.0)),
        rng.rotation(),
    );
    let pb = Pose::new(
        pa.translation + rng.unit_vector() * rng.range(0.0, 0.9 * (ra + rb)),
        rng.rotation(),
    );
    (a, pa, b, pb)
}

#[test]
fn the_walk_equals_enumeration_on_random_pairs_and_parry_agrees_but_for_epa_misses() {
    let mut rng = Rng::new(11);
    let (mut overlapping, mut epa_under, mut epa_worst) = (0, 0, 0.0f64);
    for case in 0..10_000 {
        let (a, pa, b, pb) = random_pair(&mut rng);
        let oracle = enumerate(&a, &pa, &b, &pb);
        let closest = proxima::exact::walk::walk(&WalkInput::new(&a, pa, &b, pb));
        let Some(want) = oracle else {
            assert_eq!(
                closest.state,
                WalkState::Separated,
                "case {case}: enumeration says separated"
            );
            continue;
        };
        if closest.state == WalkState::Separated {
            panic!(
                "case {case}: enumeration says overlap {want:?}, the closest-feature walk says separated"
            );
        }
        overlapping += 1;
        let got =
            cold(&a, pa, &b, pb).unwrap_or_else(|| panic!("case {case}: walk says separated"));
        assert!(
            (got.depth - want.depth).abs() <= 1e-9 * want.depth.max(1e-3),
            "case {case}: walk {} vs enumeration {} ({got:?} / {want:?})",
            got.depth,
            want.depth
        );
        check_contract(&format!("case {case}"), &got, &a, &pa, &b, &pb);
        // The peer: EPA never reports more than the exact depth; less is a miss.
        let (ga, gb) = (common::to_parry(&a), common::to_parry(&b));
        if let Ok(Some(c)) = parry3d_f64::query::contact(
            &common::parry_pose(&pa),
            &ga,
            &common::parry_pose(&pb),
            &gb,
            0.0,
        ) {
            let epa = -c.dist;
            assert!(
                epa <= want.depth + 1e-6,
                "case {case}: EPA {epa} > exact {}",
                want.depth
            );
            if epa < want.depth - 1e-9 {
                epa_under += 1;
                epa_worst = epa_worst.max(want.depth - epa);
            }
        }
    }
    eprintln!(
        "{overlapping} overlapping pairs; EPA under-reports {epa_under} (worst by {epa_worst:e})"
    );
    assert!(overlapping > 5000, "{overlapping}");
}

/// Axis-aligned boxes: the depth is the smallest per-axis overlap.
#[test]
fn boxes_have_the_analytic_depth() {
    let mut rng = Rng::new(3);
    for case in 0..2000 {
        let ha = DVec3::new(
            rng.range(0.1, 2.0),
            rng.range(0.1, 2.0),
            rng.range(0.1, 2.0),
        );
        let hb = DVec3::new(
            rng.range(0.1, 2.0),
            rng.range(0.1, 2.0),
            rng.range(0.1, 2.0),
        );
        let d = rng.point_in(-(ha + hb) * 0.99, (ha + hb) * 0.99);
        let (a, b) = (
            generators::cuboid(ha).unwrap(),
            generators::cuboid(hb).unwrap(),
        );
        let (pa, pb) = (Pose::IDENTITY, Pose::new(d, DQuat::IDENTITY));
        let overlap = (ha + hb) - d.abs();
        let want = overlap.min_element();
        let got = cold(&a, pa, &b, pb).unwrap_or_else(|| panic!("case {case}: separated"));
        assert!(
            (got.depth - want).abs() < 1e-12,
            "case {case}: {} vs {want}",
            got.depth
        );
        check_contract(&format!("box {case}"), &got, &a, &pa, &b, &pb);
    }
}

/// The shapes people model first: identical bodies at identical poses (depth: the
/// smallest width), crossed planks sunk into each other, stacked crates pressed together
/// by a hair (1e-7), a box deep inside a box.
#[test]
fn everyday_shapes() {
    let plank = generators::cuboid(DVec3::new(1.0, 0.125, 0.125)).unwrap();
    let crate_box = generators::cuboid(DVec3::splat(0.5)).unwrap();
    let big = generators::cuboid(DVec3::new(4.0, 1.0, 3.0)).unwrap();
    let s = std::f64::consts::FRAC_1_SQRT_2;
    let quarter = DQuat::from_xyzw(0.0, 0.0, s, s);
    let cases: [(&str, &ConvexPolytope, Pose, &ConvexPolytope, Pose, f64); 6] = [
        (
            "identical plank",
            &plank,
            Pose::IDENTITY,
            &plank,
            Pose::IDENTITY,
            0.25,
        ),
        (
            "identical crate",
            &crate_box,
            Pose::IDENTITY,
            &crate_box,
            Pose::IDENTITY,
            1.0,
        ),
        (
            "crossed planks sunk 0.0625",
            &plank,
            Pose::IDENTITY,
            &plank,
            Pose::new(DVec3::new(0.0, 0.0, 0.25 - 0.0625), quarter),
            0.0625,
        ),
        (
            "crates pressed by 1e-7",
            &crate_box,
            Pose::IDENTITY,
            &crate_box,
            Pose::new(DVec3::new(0.3, 0.0, 1.0 - 1e-7), DQuat::IDENTITY),
            1e-7,
        ),
        (
            "crate deep in a slab",
            &big,
            Pose::IDENTITY,
            &crate_box,
            Pose::new(DVec3::new(0.5, 0.25, 0.0), DQuat::IDENTITY),
            // Out through the nearest side: y, 1 − 0.25 + 0.5.
            1.25,
        ),
        (
            "quarter-turned crate in a slab",
            &big,
            Pose::new(
                DVec3::ZERO,
                DQuat::from_rotation_y(std::f64::consts::FRAC_PI_2),
            ),
            &crate_box,
            Pose::new(DVec3::new(0.25, 0.0, 1.0), DQuat::IDENTITY),
            // The slab turned: its x half extent 4 lies along −z, z's 3 along x; nearest
            // exit along y: 1 + 0.5.
            1.5,
        ),
    ];
    for (label, a, pa, b, pb, want) in cases {
        let got = cold(a, pa, b, pb).unwrap_or_else(|| panic!("{label}: separated"));
        let oracle = enumerate(a, &pa, b, &pb).expect("overlap");
        assert!(
            (got.depth - want).abs() < 1e-12,
            "{label}: {} vs {want}",
            got.depth
        );
        assert!(
            (oracle.depth - want).abs() < 1e-12,
            "{label}: enumeration {}",
            oracle.depth
        );
        check_contract(label, &got, a, &pa, b, &pb);
    }
    // Touching exactly: depth 0.
    let pb = Pose::new(DVec3::new(0.25, 0.0, 1.0), DQuat::IDENTITY);
    let got = cold(&crate_box, Pose::IDENTITY, &crate_box, pb).expect("touching");
    assert_eq!(got.depth, 0.0);
}

/// Deep overlaps hunt the walk's local minima: a long thin box through a flat wide one at
/// random angles, the origin far inside A − B. Oracle: enumeration.
/// Sheets 1e-10 to 1e-8 thick, turned by 1e-11 to 1e-9, against a rod, a plank and a
/// crate they cut into: the facets through a support vertex of A − B are measured no lower
/// than s along the axis there, and the inscribed polytope's loop raised its goal to one
/// and named the other forever (two such rod–sheet poses never returned). Every query
/// ends, equals enumeration, and keeps its contract.
#[test]
fn thin_sheets_turned_a_hair_end_and_equal_enumeration() {
    let others = [
        generators::cuboid(DVec3::new(5.0, 0.05, 0.05)).unwrap(),
        generators::cuboid(DVec3::new(2.0, 0.5, 0.1)).unwrap(),
        generators::cuboid(DVec3::ONE).unwrap(),
    ];
    let mut rng = Rng::new(41);
    for k in 0..600 {
        let a = &others[k % others.len()];
        let thick = 10f64.powf(rng.range(-10.0, -8.0));
        let sheet = generators::cuboid(DVec3::new(thick, 1.0, 1.0)).unwrap();
        let turn = rng.unit_vector() * 10f64.powf(rng.range(-11.0, -9.0));
        let reach = a.extreme(DVec3::X, 0).1;
        let pb = Pose::new(
            DVec3::new(
                rng.range(-reach, reach) * 0.9,
                rng.range(-1.0, 1.0),
                rng.range(-1.0, 1.0),
            ),
            DQuat::from_scaled_axis(turn),
        );
        let pa = Pose::IDENTITY;
        let label = format!("case {k} (thickness {thick:e})");
        let (Some(want), got) = (enumerate(a, &pa, &sheet, &pb), cold(a, pa, &sheet, pb)) else {
            continue;
        };
        let got = got.unwrap_or_else(|| panic!("{label}: apart, enumeration {want:?}"));
        assert!(
            (got.depth - want.depth).abs() <= 1e-9 * want.depth.max(1e-9),
            "{label}: {} against enumeration's {}",
            got.depth,
            want.depth
        );
        check_contract(&label, &got, a, &pa, &sheet, &pb);
    }
}

#[test]
fn deep_overlaps_find_the_global_minimum() {
    let mut rng = Rng::new(17);
    let shapes = [
        generators::cuboid(DVec3::new(3.0, 0.2, 0.2)).unwrap(),
        generators::cuboid(DVec3::new(2.0, 2.0, 0.1)).unwrap(),
        generators::cylinder(12, 1.0, 0.05).unwrap(),
        generators::cone(9, 1.5, 1.0).unwrap(),
        generators::random_hull(&mut rng, 30, 1.0).unwrap(),
    ];
    let mut checked = 0;
    for case in 0..4000 {
        let a = &shapes[rng.below(shapes.len() as u64) as usize];
        let b = &shapes[rng.below(shapes.len() as u64) as usize];
        let pa = Pose::new(DVec3::ZERO, rng.rotation());
        let pb = Pose::new(
            rng.point_in(DVec3::splat(-0.3), DVec3::splat(0.3)),
            rng.rotation(),
        );
        let Some(want) = enumerate(a, &pa, b, &pb) else {
            continue; // thin shapes turned apart
        };
        let got = cold(a, pa, b, pb).unwrap_or_else(|| panic!("case {case}: separated"));
        assert!(
            (got.depth - want.depth).abs() <= 1e-9 * want.depth.max(1e-3),
            "case {case}: walk {} vs enumeration {}",
            got.depth,
            want.depth
        );
        checked += 1;
    }
    assert!(checked > 3000, "{checked} overlapping");
}

/// A coherent sequence (B sliding and turning through A): warm answers equal cold ones.
#[test]
fn warm_sequences_give_the_cold_answers() {
    let mut rng = Rng::new(5);
    let a = generators::random_hull(&mut rng, 80, 1.0).unwrap();
    let b = generators::random_hull(&mut rng, 50, 0.8).unwrap();
    let mut cache = DepthCache::default();
    let mut warm_steps = 0;
    for k in 0..400 {
        let t = f64::from(k) * 0.01;
        let pa = Pose::new(DVec3::ZERO, DQuat::from_rotation_y(0.5 * t));
        let pb = Pose::new(
            DVec3::new(0.6 * t.cos(), 0.2 * t.sin(), 0.6 * t.sin()),
            DQuat::from_rotation_z(t) * DQuat::from_rotation_x(0.3 * t),
        );
        let Some(want) = enumerate(&a, &pa, &b, &pb) else {
            continue;
        };
        let warm = cache.query(&a, pa, &b, pb).expect("overlap");
        let cold = cold(&a, pa, &b, pb).expect("overlap");
        warm_steps += warm.steps;
        for (name, got) in [("warm", warm), ("cold", cold)] {
            assert!(
                (got.depth - want.depth).abs() <= 1e-9 * want.depth.max(1e-3),
                "frame {k}: {name} {} vs {}",
                got.depth,
                want.depth
            );
        }
    }
    eprintln!("warm steps over the sequence: {warm_steps}");
}

/// A shape people model, or a random hull, chosen by `pick`.
fn sequence_shape(rng: &mut Rng, pick: u32) -> ConvexPolytope {
    match pick % 6 {
        0 => generators::cuboid(DVec3::new(0.5, 0.5, 0.5)).unwrap(),
        1 => generators::cuboid(DVec3::new(2.0, 0.1, 0.4)).unwrap(),
        2 => generators::cylinder(12, 0.4, 1.2).unwrap(),
        3 => generators::icosphere(0.8, 2).unwrap(),
        _ => {
            let k = 4 + rng.below(60) as usize;
            let radius = rng.range(0.3, 1.5);
            generators::random_hull(rng, k, radius).unwrap()
        }
    }
}

/// For overlapping bodies, asserts that the cached walk equals enumeration; whether they
/// overlap.
fn warm_equals_enumeration(
    label: &str,
    cache: &mut DepthCache,
    a: &ConvexPolytope,
    pa: Pose,
    b: &ConvexPolytope,
    pb: Pose,
) -> bool {
    let Some(want) = enumerate(a, &pa, b, &pb) else {
        return false;
    };
    let got = cache.query(a, pa, b, pb).expect("overlap");
    assert!(
        (got.depth - want.depth).abs() <= 1e-9 * want.depth.max(1e-3),
        "{label}: {} vs enumeration {}",
        got.depth,
        want.depth
    );
    true
}

/// The per-pair cache keeps its global check standing across frames (most queries skip
/// the full check): on coherent sequences of boxes, planks, cylinders, spheres and random
/// hulls, each turning and sliding at its own speed (from a crawl to a fifth of the
/// bodies' size a frame), with B now and then teleported, and a long plank turning inside
/// a slab so that the deepest facet jumps between faces, every answer equals enumeration.
#[test]
fn standing_certificates_equal_enumeration_on_coherent_sequences() {
    let mut rng = Rng::new(77);
    let (mut queries, mut held, mut full) = (0u64, 0u64, 0u64);
    for seq in 0..240u32 {
        let a = sequence_shape(&mut rng, seq);
        let b = sequence_shape(&mut rng, seq / 6 + seq);
        let speed = 10f64.powf(rng.range(-4.0, -0.7));
        let (axis_a, axis_b) = (rng.unit_vector(), rng.unit_vector());
        let (spin_a, spin_b) = (rng.range(-3.0, 3.0), rng.range(-3.0, 3.0));
        let (qa, qb) = (rng.rotation(), rng.rotation());
        let origin = rng.point_in(DVec3::splat(-50.0), DVec3::splat(50.0));
        let mut offset = rng.unit_vector() * rng.range(0.0, 0.8);
        let drift = rng.unit_vector();
        let mut cache = DepthCache::default();
        for k in 0..120 {
            let t = f64::from(k) * speed;
            if k % 37 == 36 {
                offset = rng.unit_vector() * rng.range(0.0, 0.8);
            }
            let pa = Pose::new(origin, DQuat::from_axis_angle(axis_a, spin_a * t) * qa);
            let pb = Pose::new(
                origin + offset + drift * (0.3 * t.sin()),
                DQuat::from_axis_angle(axis_b, spin_b * t) * qb,
            );
            if warm_equals_enumeration(
                &format!("sequence {seq} frame {k}"),
                &mut cache,
                &a,
                pa,
                &b,
                pb,
            ) {
                queries += 1;
            }
        }
        let (f, h) = cache.certificates();
        full += f;
        held += h;
    }
    // The plank in the slab: the slab's broad faces win while the plank lies flat, its
    // ends while it stands up.
    let slab = generators::cuboid(DVec3::new(3.0, 0.3, 3.0)).unwrap();
    let plank = generators::cuboid(DVec3::new(1.5, 0.1, 0.3)).unwrap();
    let mut cache = DepthCache::default();
    for k in 0..400 {
        let t = f64::from(k) * 0.01;
        let pa = Pose::new(DVec3::ZERO, DQuat::IDENTITY);
        let pb = Pose::new(
            DVec3::new(2.0 * (0.7 * t).sin(), 0.1, 0.0),
            DQuat::from_rotation_z(t),
        );
        let label = format!("plank frame {k}");
        assert!(warm_equals_enumeration(
            &label, &mut cache, &slab, pa, &plank, pb
        ));
        queries += 1;
    }
    let (f, h) = cache.certificates();
    full += f;
    held += h;
    eprintln!(
        "{queries} queries: {held} settled without a full check (inscribed polytope or standing certificate), {full} full checks"
    );
    assert!(queries > 10_000, "{queries} overlapping frames");
    assert!(
        held > queries / 2,
        "only {held} of {queries} queries were settled without a full check"
    );
}

/// Boxes dropped at one point, as a new scene often starts: every pair of 30 unit crates
/// at the origin in random orientations overlaps with the origin at the centre of A − B
/// (the deepest case, where the inscribed surface needs most of A − B). Each pair through
/// a new cache (a crowd's first frame), then again after every crate moved a little (the
/// caches warm): every depth equals enumeration.
#[test]
fn a_pile_of_crates_at_one_point_equals_enumeration() {
    let mut rng = Rng::new(0x9_11e);
    let crate_ = generators::cuboid(DVec3::splat(0.5)).unwrap();
    let mut poses: Vec<Pose> = (0..30)
        .map(|_| Pose::new(DVec3::ZERO, rng.rotation()))
        .collect();
    let n = poses.len();
    let mut caches = vec![DepthCache::default(); n * n];
    for round in 0..2 {
        for i in 0..n {
            for j in i + 1..n {
                assert!(warm_equals_enumeration(
                    &format!("round {round}, crates {i} and {j}"),
                    &mut caches[i * n + j],
                    &crate_,
                    poses[i],
                    &crate_,
                    poses[j],
                ));
            }
        }
        for p in &mut poses {
            let turn = DQuat::from_axis_angle(rng.unit_vector(), rng.range(0.0, 0.05));
            *p = Pose::new(rng.unit_vector() * rng.range(0.0, 0.05), turn * p.rotation);
        }
    }
}

/// The convex hulls of real meshes, each centred and scaled to reach 1: a scan's hull (the
/// bunny's: 1,502 vertices, 3,000 faces, many of them slivers nearly coplanar with their
/// neighbours), a CAD part's (the fandisk's large exactly flat faces, merged), the cow's,
/// spot's and suzanne's. At random poses, turned and not, near the origin and a million
/// units out, the depth cold and warm over a short coherent sequence equals enumeration
/// and keeps its contract; separated bodies' distance equals brute force.
#[test]
fn real_meshes_hulls_answer_as_enumeration() {
    let names = ["suzanne", "cow", "fandisk", "spot", "stanford-bunny"];
    let mut hulls = Vec::new();
    for name in names {
        let Some(mesh) = common::shared_mesh(&format!("{name}.obj")) else {
            return;
        };
        let centre = mesh.vertices.iter().sum::<DVec3>() / mesh.vertices.len() as f64;
        let reach = mesh
            .vertices
            .iter()
            .map(|v| v.distance(centre))
            .fold(0.0, f64::max);
        let points: Vec<DVec3> = mesh
            .vertices
            .iter()
            .map(|v| (*v - centre) / reach)
            .collect();
        hulls.push((name, ConvexPolytope::from_points(&points).unwrap()));
    }
    let mut rng = Rng::new(11);
    let (mut overlapping, mut apart) = (0, 0);
    for k in 0..60 {
        // The bunny's hull only against the smaller ones: enumeration over its 4,500
        // edges against another's is the test's cost.
        let i = rng.below(hulls.len() as u64) as usize;
        let j = rng.below(hulls.len() as u64 - 1) as usize;
        let ((na, a), (nb, b)) = (&hulls[i], &hulls[j]);
        let label = format!("#{k} {na} against {nb}");
        let offset = DVec3::splat(if k % 4 == 0 { 1e6 } else { 0.0 });
        let turn = |rng: &mut Rng| {
            if rng.below(3) == 0 {
                DQuat::IDENTITY
            } else {
                rng.rotation()
            }
        };
        let pa = Pose::new(offset, turn(&mut rng));
        let pb = Pose::new(
            offset + rng.unit_vector() * rng.range(0.0, 2.6),
            turn(&mut rng),
        );
        let tol = 1e-9 * (2.0 + offset.x);
        let walked = proxima::exact::walk::walk(&WalkInput::new(a, pa, b, pb));
        if walked.state != WalkState::Penetrating {
            apart += 1;
            assert!(
                matches!(walked.state, WalkState::Separated | WalkState::Touching),
                "{label}: {:?}",
                walked.state
            );
            let brute = proxima::geometry::brute::polytope_distance(a, &pa, b, &pb).0;
            assert!(
                (walked.distance - brute).abs() <= tol,
                "{label}: distance {} against brute force {brute}",
                walked.distance
            );
            continue;
        }
        overlapping += 1;
        let want = enumerate(a, &pa, b, &pb).expect("overlap");
        let got = cold(a, pa, b, pb).expect("overlap");
        assert!(
            (got.depth - want.depth).abs() <= tol,
            "{label}: cold {} against enumeration {}",
            got.depth,
            want.depth
        );
        check_contract(&label, &got, a, &pa, b, &pb);
        let mut cache = DepthCache::default();
        for f in 0..3 {
            let s = f64::from(f) * 3e-3;
            let moved = Pose::new(
                pb.translation + DVec3::new(s, -s, 0.5 * s),
                (DQuat::from_rotation_z(s) * pb.rotation).normalize(),
            );
            let Some(want) = enumerate(a, &pa, b, &moved) else {
                continue;
            };
            let got = cache.query(a, pa, b, moved).expect("overlap");
            assert!(
                (got.depth - want.depth).abs() <= tol,
                "{label}, frame {f}: warm {} against enumeration {}",
                got.depth,
                want.depth
            );
        }
    }
    eprintln!("{overlapping} overlapping, {apart} apart");
    assert!(overlapping >= 20 && apart >= 10, "{overlapping} / {apart}");
}

/// Tiny depths (1e-8 to 1e-6) are exact to 1e-9 of themselves, warm through a rocking
/// sequence and cold: the walk's tolerance, 1e-13 of the coordinates' size, is coarser
/// than that below depths of 1e-4 of the size, and an icosphere 6.8e-8 into a 12-vertex
/// hull read 6.83e-8 + 1.5e-13 (the facet the inscribed polytope accepted within the
/// tolerance, not the least one; 5 of a probe's 30,000 such depths). A facet is now
/// compared within 1e-9 of its s there (never below 64 ulps of the reach). Oracle:
/// enumeration of every candidate.
#[test]
fn tiny_depths_are_exact_to_a_billionth_of_themselves() {
    let mut rng = Rng::new(11);
    let hull = generators::random_hull(&mut rng, 12, 0.5).unwrap();
    let shapes = [
        generators::cuboid(DVec3::splat(0.5)).unwrap(),
        generators::cuboid(DVec3::new(1.0, 0.1, 0.5)).unwrap(),
        hull,
        generators::random_hull(&mut rng, 40, 0.5).unwrap(),
        generators::cylinder(16, 0.5, 0.3).unwrap(),
        generators::icosphere(0.5, 2).unwrap(),
    ];
    // The probe's case (A the icosphere, B the 12-vertex hull), then random ones.
    let found = (
        5,
        2,
        DVec3::new(
            0.868_588_752_020_671_1,
            -0.437_653_685_400_060_33,
            0.232_406_608_165_340_64,
        ),
        3.098_844_844_625_215_3e-5,
        -6.860_123_506_105_016e-8,
        DVec3::new(
            -0.838_224_988_460_479_9,
            0.422_223_608_431_725_2,
            -0.345_117_506_370_397_95,
        ),
        DQuat::from_array([
            -0.985_488_521_159_774_4,
            -0.124_321_496_506_471_26,
            0.056_657_017_166_164_16,
            -0.100_729_948_746_863_07,
        ]),
    );
    let mut cases = vec![found];
    for k in 0..300 {
        cases.push((
            k % 6,
            (k / 6) % 6,
            rng.unit_vector(),
            10f64.powf(rng.range(-9.0, -2.0)),
            -10f64.powf(rng.range(-8.0, -6.0)),
            rng.unit_vector(),
            rng.rotation(),
        ));
    }
    let pa = Pose::IDENTITY;
    let mut checked = 0;
    for (case, &(ia, ib, axis, amplitude, gap, direction, turn)) in cases.iter().enumerate() {
        let (a, b) = (&shapes[ia], &shapes[ib]);
        let mut cache = DepthCache::default();
        for frame in 0..10 {
            let q = DQuat::from_axis_angle(axis, amplitude * (f64::from(frame) * 0.7).sin()) * turn;
            let pb = common::at_gap(a, &pa, b, Pose::new(direction * 3.0, q), gap);
            let want = enumerate(a, &pa, b, &pb).expect("pressed in").depth;
            for (how, got) in [
                ("warm", cache.query(a, pa, b, pb)),
                ("cold", cold(a, pa, b, pb)),
            ] {
                let got = got.unwrap_or_else(|| panic!("case {case} frame {frame} {how}: apart"));
                assert!(
                    (got.depth - want).abs() <= 1e-9 * want + 1e-15,
                    "case {case} frame {frame} {how}: {} against enumeration's {want}",
                    got.depth
                );
            }
            checked += 1;
        }
    }
    assert_eq!(checked, 3010);
}
