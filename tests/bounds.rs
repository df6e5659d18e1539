//! The bounds pass against an independent f64 oracle (the eight transformed corners of the
//! local box, clipped by the bounding sphere), on the CPU twin and on the GPU, and the two
//! against each other.

mod common;

use glam::{DVec3, Quat, Vec3};
use proxima::bodies::{Aabb, GpuAabb, GpuBody, GpuShapeBounds, Pose};
use proxima::frame::{self, Plan};
use proxima::gpu::Engine;
use proxima::gpu::sizes::{BODY_WORKGROUP_SIZE, DEFAULT_MAX_GROUPS_X, dispatch_grid};
use proxima::graph::Recording;
use proxima::passes::bounds::{GpuBoundsParams, MARGIN_ABS, MARGIN_REL, bounds_cpu, record_bounds};
use proxima::passes::dispatch_args::record_dispatch_args;
use proxima::passes::status::GpuPassStatus;
use proxima::rng::Rng;
use proxima::shaders::ShaderId;
use proxima::{Error, Pipeline};

/// The exact world box of the local bounds, in f64, by brute force over the corners.
fn exact_box(body: &GpuBody, shape: &GpuShapeBounds) -> Aabb {
    let pose = Pose::from_gpu(body);
    let c = Vec3::from_array(shape.center).as_dvec3();
    let h = Vec3::from_array(shape.half_extents).as_dvec3();
    let mut lo = DVec3::INFINITY;
    let mut hi = DVec3::NEG_INFINITY;
    for k in 0..8 {
        let s = DVec3::new(
            if k & 1 == 0 { -1.0 } else { 1.0 },
            if k & 2 == 0 { -1.0 } else { 1.0 },
            if k & 4 == 0 { -1.0 } else { 1.0 },
        );
        let p = pose.transform_point(c + s * h);
        lo = lo.min(p);
        hi = hi.max(p);
    }
    let center = pose.transform_point(c);
    let r = f64::from(shape.radius);
    Aabb {
        min: lo.max(center - r),
        max: hi.min(center + r),
    }
}

/// The stated margin per axis, in f64.
fn margin(body: &GpuBody, shape: &GpuShapeBounds) -> DVec3 {
    let p = Vec3::from_array(body.position).as_dvec3().abs();
    let c = Vec3::from_array(shape.center)
        .as_dvec3()
        .abs()
        .element_sum();
    let h = Vec3::from_array(shape.half_extents)
        .as_dvec3()
        .element_sum();
    (p + DVec3::splat(c + h)) * f64::from(MARGIN_REL) + f64::from(MARGIN_ABS)
}

/// Bodies over five decades of position, shapes from 1e-3 to 1e3, offset centers, flat
/// boxes, spheres tighter than the box, and a quarter of the quaternions not normalised.
fn random_scene(n: usize, seed: u64) -> (Vec<GpuBody>, Vec<GpuShapeBounds>) {
    let mut rng = Rng::new(seed);
    let shapes: Vec<GpuShapeBounds> = (0..64)
        .map(|k| {
            let scale = [1e-3, 1.0, 10.0, 1e3][k % 4];
            let center = (rng.point_in(DVec3::splat(-2.0), DVec3::splat(2.0)) * scale).as_vec3();
            let mut half = (rng.point_in(DVec3::ZERO, DVec3::splat(3.0)) * scale).as_vec3();
            if k % 7 == 0 {
                half.y = 0.0;
            }
            let radius = half.length() * rng.range(0.6, 1.01) as f32;
            GpuShapeBounds::new(center, half, radius)
        })
        .collect();
    let bodies = (0..n)
        .map(|_| {
            let s = [1.0, 100.0, 1e4, 1e6][rng.below(4) as usize];
            let p = rng.point_in(DVec3::splat(-s), DVec3::splat(s)).as_vec3();
            let mut q = rng.rotation().as_quat();
            if rng.below(4) == 0 {
                q *= rng.range(0.5, 2.0) as f32;
            }
            GpuBody::new(p, q, rng.below(shapes.len() as u64) as u32)
        })
        .collect();
    (bodies, shapes)
}

/// Every box contains the exact one and exceeds it by at most 1.25 margins per face.
fn check_against_oracle(
    label: &str,
    bodies: &[GpuBody],
    shapes: &[GpuShapeBounds],
    boxes: &[GpuAabb],
) {
    assert_eq!(boxes.len(), bodies.len(), "{label}");
    let mut worst = 0.0f64;
    for (i, (b, got)) in bodies.iter().zip(boxes).enumerate() {
        let shape = &shapes[b.shape as usize];
        let exact = exact_box(b, shape);
        let got = got.to_f64();
        let m = margin(b, shape);
        assert!(
            got.contains(&exact),
            "{label}: body {i}: {got:?} does not contain {exact:?}"
        );
        let over = (exact.min - got.min).max(got.max - exact.max) / m;
        assert!(
            over.max_element() <= 1.25,
            "{label}: body {i}: box exceeds the exact one by {over:?} margins"
        );
        worst = worst.max(over.max_element());
    }
    eprintln!("{label}: worst excess {worst:.3} margins");
}

fn cpu_boxes(bodies: &[GpuBody], shapes: &[GpuShapeBounds]) -> Vec<GpuAabb> {
    let params = GpuBoundsParams::new(bodies.len() as u32, shapes.len() as u32);
    let mut out = Vec::new();
    let status = bounds_cpu(bodies, shapes, params, &mut out);
    assert!(status.is_ok(), "{status:?}");
    out
}

#[test]
fn cpu_twin_contains_the_exact_boxes_within_the_margin() {
    let (bodies, shapes) = random_scene(100_000, 11);
    check_against_oracle("cpu", &bodies, &shapes, &cpu_boxes(&bodies, &shapes));
}

#[test]
fn analytic_box_rotated_45_degrees() {
    // A unit cube (half 0.5) turned 45° about z at (10, 0, 0): x and y extents become
    // 0.5·√2, z stays 0.5; the circumscribed sphere (r = 0.5·√3) does not clip.
    let body = GpuBody::new(
        Vec3::new(10.0, 0.0, 0.0),
        Quat::from_rotation_z(std::f32::consts::FRAC_PI_4),
        0,
    );
    let shapes = [GpuShapeBounds::from_box(Vec3::ZERO, Vec3::splat(0.5))];
    let got = cpu_boxes(&[body], &shapes)[0].to_f64();
    let e = 0.5 * 2f64.sqrt();
    let want = Aabb {
        min: DVec3::new(10.0 - e, -e, -0.5),
        max: DVec3::new(10.0 + e, e, 0.5),
    };
    assert!(got.contains(&want), "{got:?}");
    assert!(got.max_face_gap(&want) < 1e-3, "{got:?}");
    // A ball of radius 1 whose box is loose: the sphere decides.
    let ball = [GpuShapeBounds::new(Vec3::ZERO, Vec3::splat(1.0), 1.0)];
    let got = cpu_boxes(&[body], &ball)[0].to_f64();
    assert!(
        got.max_face_gap(&Aabb {
            min: DVec3::new(9.0, -1.0, -1.0),
            max: DVec3::new(11.0, 1.0, 1.0)
        }) < 1e-3
    );
}

fn bad_bodies() -> (
    Vec<GpuBody>,
    Vec<GpuShapeBounds>,
    Vec<(usize, &'static str)>,
) {
    let shapes = vec![GpuShapeBounds::from_box(Vec3::ZERO, Vec3::ONE)];
    let good = GpuBody::new(Vec3::ONE, Quat::IDENTITY, 0);
    let mut cases = Vec::new();
    let mut nan = good;
    nan.position[1] = f32::NAN;
    cases.push((nan, "position"));
    let mut zero = good;
    zero.rotation = [0.0; 4];
    cases.push((zero, "quaternion"));
    let mut inf = good;
    inf.rotation[3] = f32::INFINITY;
    cases.push((inf, "rotation"));
    let mut shape = good;
    shape.shape = 5;
    cases.push((shape, "shape index 5"));
    let mut bodies = vec![good; 1000];
    let mut expect = Vec::new();
    for (k, (b, what)) in cases.into_iter().enumerate() {
        let mut scene = bodies.clone();
        let at = 300 + 100 * k;
        scene[at] = b;
        expect.push((at, what));
        if k == 0 {
            bodies = scene;
        } else {
            bodies[at] = b;
        }
    }
    (bodies, shapes, expect)
}

fn assert_names(err: &Error, at: usize, what: &str) {
    let text = err.to_string();
    assert!(
        text.contains(&format!("body {at}")) && text.contains(what),
        "`{text}` should name body {at} and `{what}`"
    );
}

#[test]
fn bad_poses_and_shapes_are_named_errors_on_the_cpu() {
    let (bodies, shapes, expect) = bad_bodies();
    // Each bad body on its own, then all together (the lowest index is named).
    for &(at, what) in &expect {
        let mut one = vec![bodies[0]; 1000];
        one[at] = bodies[at];
        let err = frame::cpu(&one, &shapes, None).unwrap_err();
        assert_names(&err, at, what);
    }
    let err = frame::cpu(&bodies, &shapes, None).unwrap_err();
    assert_names(&err, expect[0].0, expect[0].1);
    assert!(err.to_string().contains("3 more bad bodies"), "{err}");
    // Bad shape bounds are rejected before any pass runs.
    let bad_shape = GpuShapeBounds::new(Vec3::ZERO, Vec3::new(1.0, -1.0, 1.0), 1.0);
    let err = bad_shape.validate(3).unwrap_err();
    assert!(err.to_string().contains("shape 3"), "{err}");
}

#[test]
fn gpu_pass_contains_the_exact_boxes_and_matches_the_cpu_twin() {
    let Some(ctx) = common::gpu("gpu bounds") else {
        return;
    };
    let (bodies, shapes) = random_scene(100_000, 12);
    let mut engine = Engine::new(ctx);
    let (rec, rb) = frame::record(frame::Bodies::Upload(&bodies), &shapes, Plan::Bounds);
    let out = engine.run(&rec, &[]).expect("frame runs");
    let gpu = frame::finish(&out, &rb, &bodies, &shapes)
        .expect("no bad bodies")
        .result;
    check_against_oracle("gpu", &bodies, &shapes, &gpu.aabbs);
    let cpu = cpu_boxes(&bodies, &shapes);
    for (i, ((g, c), b)) in gpu.aabbs.iter().zip(&cpu).zip(&bodies).enumerate() {
        let m = margin(b, &shapes[b.shape as usize]);
        let (g, c) = (g.to_f64(), c.to_f64());
        let d = (g.min - c.min).abs().max((g.max - c.max).abs()) / m;
        assert!(d.max_element() <= 0.5, "body {i}: gpu {g:?} vs cpu {c:?}");
    }
}

#[test]
fn gpu_reports_the_same_bad_body_as_the_cpu() {
    let Some(ctx) = common::gpu("gpu bad bodies") else {
        return;
    };
    let (bodies, shapes, expect) = bad_bodies();
    let mut pipeline = Pipeline::on_gpu(ctx);
    let mut world = proxima::crowd::Crowd {
        shapes,
        bodies: bodies.clone(),
        motions: vec![Default::default(); bodies.len()],
        wrap: None,
    };
    let err = pipeline.bounds(&world).unwrap_err();
    assert_names(&err, expect[0].0, expect[0].1);
    assert!(err.to_string().contains("3 more bad bodies"), "{err}");
    world.bodies = vec![bodies[0]; 1000];
    world.bodies[700] = bodies[600];
    let err = pipeline.bounds(&world).unwrap_err();
    assert_names(&err, 600 + 100, "shape index 5");
}

#[test]
fn gpu_indirect_dispatch_matches_direct() {
    let Some(ctx) = common::gpu("gpu indirect") else {
        return;
    };
    let mut engine = Engine::new(ctx);
    for n in [0usize, 1, 255, 257, 5000] {
        let (bodies, shapes) = random_scene(n, 13 + n as u64);
        let mut rec = Recording::new();
        let body_buf = rec.array_buffer::<GpuBody>(n, "bodies");
        rec.upload(body_buf, &bodies);
        let shape_buf = rec.array_buffer::<GpuShapeBounds>(shapes.len(), "shapes");
        rec.upload(shape_buf, &shapes);
        // The count lives only on the GPU: slot 1 of a small buffer.
        let counts = rec.buffer(16, "counts");
        rec.upload(counts, &[7u32, n as u32, 9, 9]);
        let args = record_dispatch_args(
            &mut rec,
            counts,
            1,
            BODY_WORKGROUP_SIZE,
            DEFAULT_MAX_GROUPS_X,
        );
        let args_rb = rec.readback(args);
        let params = rec.buffer(16, "params");
        rec.upload(
            params,
            &[GpuBoundsParams::new(n as u32, shapes.len() as u32)],
        );
        let aabbs = rec.array_buffer::<GpuAabb>(n, "aabbs");
        let status = rec.buffer(16, "status");
        rec.upload(status, &[GpuPassStatus::INITIAL]);
        rec.dispatch_indirect(
            ShaderId::Bounds,
            args,
            0,
            &[params, body_buf, shape_buf, aabbs, status],
        );
        let boxes_rb = rec.readback_range(aabbs, 0, (n * 32) as u64);
        let status_rb = rec.readback(status);
        let out = engine.run(&rec, &[]).expect("indirect frame");
        let grid: Vec<u32> = out.values(args_rb);
        assert_eq!(
            grid,
            dispatch_grid(n as u32, BODY_WORKGROUP_SIZE, DEFAULT_MAX_GROUPS_X),
            "n = {n}"
        );
        let s: Vec<GpuPassStatus> = out.values(status_rb);
        assert!(s[0].is_ok(), "{s:?}");
        let boxes: Vec<GpuAabb> = out.values(boxes_rb);
        check_against_oracle("gpu indirect", &bodies, &shapes, &boxes);

        let mut direct = Recording::new();
        let b = direct.array_buffer::<GpuBody>(n, "bodies");
        direct.upload(b, &bodies);
        let s = direct.array_buffer::<GpuShapeBounds>(shapes.len(), "shapes");
        direct.upload(s, &shapes);
        let o = record_bounds(
            &mut direct,
            b,
            s,
            GpuBoundsParams::new(n as u32, shapes.len() as u32),
        );
        let rb = direct.readback_range(o.aabbs, 0, (n * 32) as u64);
        let out = engine.run(&direct, &[]).expect("direct frame");
        // Padding words are never written by the pass: compare the corners only.
        let direct_boxes: Vec<GpuAabb> = out.values(rb);
        for (i, (d, b)) in direct_boxes.iter().zip(&boxes).enumerate() {
            assert!(
                d.min == b.min && d.max == b.max,
                "n = {n}, body {i}: direct {d:?} vs indirect {b:?}"
            );
        }
    }
}

#[test]
fn gpu_handles_empty_and_single_body_scenes() {
    let Some(ctx) = common::gpu("gpu tiny") else {
        return;
    };
    let mut pipeline = Pipeline::on_gpu(ctx);
    for n in [0, 1] {
        let mut world = proxima::crowd::Crowd::random(n, 3);
        world.validate().unwrap();
        let r = pipeline.bounds(&world).expect("tiny frame");
        assert_eq!(r.aabbs.len(), n);
        check_against_oracle("tiny", &world.bodies, &world.shapes, &r.aabbs);
        world.advance(0.1);
    }
}

#[test]
fn gpu_one_million_bodies_match_the_cpu_twin() {
    let Some(ctx) = common::gpu("gpu 1M") else {
        return;
    };
    let world = proxima::crowd::Crowd::random(1_000_000, 5);
    let mut pipeline = Pipeline::on_gpu(ctx);
    let gpu = pipeline.bounds(&world).expect("1M frame");
    let cpu = cpu_boxes(&world.bodies, &world.shapes);
    assert_eq!(gpu.aabbs.len(), 1_000_000);
    let mut worst = 0.0f64;
    for (i, ((g, c), b)) in gpu.aabbs.iter().zip(&cpu).zip(&world.bodies).enumerate() {
        let m = margin(b, &world.shapes[b.shape as usize]);
        let (g, c) = (g.to_f64(), c.to_f64());
        let d = ((g.min - c.min).abs().max((g.max - c.max).abs()) / m).max_element();
        assert!(d <= 0.5, "body {i}: gpu {g:?} vs cpu {c:?}");
        worst = worst.max(d);
    }
    // Spot-check the oracle on every 97th body (the full check runs at 100k above).
    let sample: Vec<usize> = (0..world.len()).step_by(97).collect();
    let bodies: Vec<GpuBody> = sample.iter().map(|&i| world.bodies[i]).collect();
    let boxes: Vec<GpuAabb> = sample.iter().map(|&i| gpu.aabbs[i]).collect();
    check_against_oracle("gpu 1M sample", &bodies, &world.shapes, &boxes);
    eprintln!("1M: worst gpu/cpu gap {worst:.3} margins");
}
