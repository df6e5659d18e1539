//! Embedding: a renderer's device created with `Limits::default()` and its own instance
//! buffer handed to proxima. The poses gathered on the GPU from the buffer give the same
//! pairs and contacts as the same poses set on the CPU twins; a wrong buffer or layout is
//! a named error.

mod common;

use glam::{DQuat, DVec3, Mat3, Mat4, Quat, Vec3};
use proxima::Pipeline;
use proxima::bodies::{GpuBody, Pose};
use proxima::geometry::generators::{cuboid, random_hull};
use proxima::gpu::GpuContext;
use proxima::passes::pose_gather::{PoseLayout, RotationForm, gather_cpu, matrix_quaternion};
use proxima::rng::Rng;
use proxima::world::{FrameReport, ShapeId, World};
use std::f64::consts::{FRAC_PI_2, PI};

/// A renderer's device with default limits, or `None` without an adapter.
fn renderer_device() -> Option<(wgpu::Device, wgpu::Queue)> {
    common::device_with_limits("embed", wgpu::Limits::default())
}

/// A renderer's instance buffer (vertex and storage usage) holding `words`.
fn instance_buffer(device: &wgpu::Device, queue: &wgpu::Queue, words: &[u32]) -> wgpu::Buffer {
    let buffer = device.create_buffer(&wgpu::BufferDescriptor {
        label: Some("instances"),
        size: (words.len() * 4) as u64,
        usage: wgpu::BufferUsages::VERTEX
            | wgpu::BufferUsages::STORAGE
            | wgpu::BufferUsages::COPY_DST,
        mapped_at_creation: false,
    });
    queue.write_buffer(&buffer, 0, bytemuck::cast_slice(words));
    buffer
}

/// 12 words per instance: position, scale, rotation, colour.
const LAYOUT: PoseLayout = PoseLayout {
    stride: 48,
    position: 0,
    rotation: 16,
    form: RotationForm::Quaternion,
};

fn add_shapes(world: &mut World, rng: &mut Rng) -> Vec<ShapeId> {
    vec![
        world
            .add_convex(cuboid(DVec3::new(0.5, 0.3, 0.2)).unwrap())
            .unwrap(),
        world
            .add_convex(random_hull(rng, 16, 0.5).unwrap())
            .unwrap(),
    ]
}

/// A world on the renderer's device and one on the CPU twins, each with the two shapes of
/// [`add_shapes`] and a body of shape `kinds[i]` per instance (at the identity: the
/// poses come from the buffer, or the twin's gather), speculative distance 0.02; and
/// each body's shape index.
fn twin_worlds(
    device: wgpu::Device,
    queue: &wgpu::Queue,
    kinds: &[usize],
) -> (World, World, Vec<u32>) {
    let mut gpu = World::on_context(GpuContext::from_device(device, queue.clone()));
    let mut cpu = World::on(Pipeline::cpu());
    let mut shape_of = Vec::new();
    for w in [&mut gpu, &mut cpu] {
        let mut rng = Rng::new(5);
        let shapes = add_shapes(w, &mut rng);
        shape_of = kinds.iter().map(|&k| shapes[k].0).collect();
        for &k in kinds {
            w.add_body(shapes[k], Pose::IDENTITY).unwrap();
        }
        w.set_speculative(0.02).unwrap();
    }
    (gpu, cpu, shape_of)
}

#[test]
fn poses_gathered_from_a_renderers_buffer_give_the_cpu_twins_report() {
    let Some((device, queue)) = renderer_device() else {
        return;
    };
    let n = 400;
    let mut rng = Rng::new(31);
    let mut words = Vec::with_capacity(n * 12);
    for _ in 0..n {
        let p = rng.point_in(DVec3::ZERO, DVec3::splat(6.0)).as_vec3();
        let q = rng.rotation().as_quat();
        words.extend(p.to_array().map(f32::to_bits));
        words.push(1.5f32.to_bits());
        words.extend(q.to_array().map(f32::to_bits));
        words.extend([0.2f32, 0.3, 0.4, 1.0].map(f32::to_bits));
    }
    let buffer = instance_buffer(&device, &queue, &words);

    let mut pick = Rng::new(9);
    let kinds: Vec<usize> = (0..n).map(|_| pick.below(2) as usize).collect();
    let (mut gpu, mut cpu, shape_of) = twin_worlds(device, &queue, &kinds);
    gpu.bind_pose_buffer(&buffer, LAYOUT).unwrap();
    // The CPU twin of the gather gives the poses the CPU world is set to.
    let table: Vec<GpuBody> = gather_cpu(&words, &shape_of, LAYOUT.params(n)).0;
    let poses: Vec<Pose> = table.iter().map(Pose::from_gpu).collect();
    cpu.set_poses(&poses).unwrap();
    let (g, c) = (gpu.step(0.0).unwrap(), cpu.step(0.0).unwrap());
    assert!(g.contacts.len() > 20, "{}", g.contacts.len());
    assert_eq!(g.pairs, c.pairs);
    assert_eq!(g.contacts, c.contacts);
    for (got, want) in gpu.bodies().iter().zip(cpu.bodies()) {
        assert_eq!(
            got.pose, want.pose,
            "the gathered pose is the one the frame used"
        );
    }
    // The renderer moves its instances: the next step sees them.
    for k in 0..n {
        let x = f32::from_bits(words[k * 12]) + 100.0;
        words[k * 12] = x.to_bits();
    }
    queue.write_buffer(&buffer, 0, bytemuck::cast_slice(&words));
    let moved = gpu.step(0.0).unwrap();
    assert!(gpu.bodies()[0].pose.translation.x > 99.0);
    let table = gather_cpu(&words, &shape_of, LAYOUT.params(n)).0;
    let poses: Vec<Pose> = table.iter().map(Pose::from_gpu).collect();
    cpu.set_poses(&poses).unwrap();
    let twin = cpu.step(0.0).unwrap();
    assert!(
        moved.pairs == twin.pairs,
        "moved: the pairs differ from the twin's"
    );
    assert!(
        moved.contacts == twin.contacts,
        "moved: the contacts differ"
    );
}

#[test]
fn a_wrong_pose_buffer_is_a_named_error() {
    let Some((device, queue)) = renderer_device() else {
        return;
    };
    let mut world = World::on_context(GpuContext::from_device(device.clone(), queue.clone()));
    let mut rng = Rng::new(1);
    let shapes = add_shapes(&mut world, &mut rng);
    for _ in 0..10 {
        world.add_body(shapes[0], Pose::IDENTITY).unwrap();
    }
    let make = |size, usage| {
        device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("instances"),
            size,
            usage,
            mapped_at_creation: false,
        })
    };
    let storage = wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_DST;
    let err = |r: proxima::Result<()>| r.unwrap_err().to_string();
    let e = err(world.bind_pose_buffer(&make(480, wgpu::BufferUsages::VERTEX), LAYOUT));
    assert!(e.contains("STORAGE"), "{e}");
    let e = err(world.bind_pose_buffer(&make(400, storage), LAYOUT));
    assert!(e.contains("400 bytes") && e.contains("10 instances"), "{e}");
    let bad = PoseLayout {
        stride: 10,
        ..LAYOUT
    };
    assert!(err(world.bind_pose_buffer(&make(480, storage), bad)).contains("4-byte"));
    let overlapping = PoseLayout {
        stride: 28,
        position: 8,
        rotation: 12,
        form: RotationForm::Quaternion,
    };
    assert!(err(world.bind_pose_buffer(&make(480, storage), overlapping)).contains("overlap"));
    // Bound, then the world grows past the buffer: the step says so.
    world.bind_pose_buffer(&make(480, storage), LAYOUT).unwrap();
    world.add_body(shapes[1], Pose::IDENTITY).unwrap();
    let e = world.step(0.0).unwrap_err().to_string();
    assert!(e.contains("11 instances"), "{e}");
    // A NaN written by the renderer: a named pose error, not a panic.
    let nan = make(11 * 48, storage);
    let mut words = vec![0f32; 11 * 12];
    for k in 0..11 {
        words[k * 12 + 7] = 1.0; // w
    }
    words[3 * 12] = f32::NAN;
    queue.write_buffer(&nan, 0, bytemuck::cast_slice(&words));
    world.bind_pose_buffer(&nan, LAYOUT).unwrap();
    let e = world.step(0.0).unwrap_err().to_string();
    assert!(e.contains("body 3"), "{e}");
    // A quaternion far from unit length (w = 2) is the one rule's named error, as a pose
    // set on the CPU is (it was made unit without a word).
    words[3 * 12] = 0.0;
    words[5 * 12 + 7] = 2.0;
    queue.write_buffer(&nan, 0, bytemuck::cast_slice(&words));
    let e = world.step(0.0).unwrap_err().to_string();
    assert!(e.contains("body 5") && e.contains("unit"), "{e}");
    // On the CPU twins there is no device to read a buffer on.
    let mut cpu = World::on(Pipeline::cpu());
    let _ = add_shapes(&mut cpu, &mut rng);
    assert!(err(cpu.bind_pose_buffer(&nan, LAYOUT)).contains("GPU"));
}

/// Rotations a renderer's matrices hold, every branch of the conversion among them: random
/// ones, half turns about each axis and about diagonals (trace −1), quarter turns, the
/// identity, and turns a hair short of a half turn.
fn test_rotations(rng: &mut Rng) -> Vec<DQuat> {
    let mut out = vec![DQuat::IDENTITY];
    for axis in [
        DVec3::X,
        DVec3::Y,
        DVec3::Z,
        DVec3::ONE,
        DVec3::new(1.0, -2.0, 0.5),
    ] {
        let axis = axis.normalize();
        for angle in [PI, PI - 1e-4, FRAC_PI_2, -FRAC_PI_2, 1e-7] {
            out.push(DQuat::from_axis_angle(axis, angle));
        }
    }
    out.extend((0..2_000).map(|_| rng.rotation()));
    out
}

#[test]
fn model_matrices_turn_into_their_quaternions_and_scaled_ones_are_named() {
    let mut rng = Rng::new(17);
    for q in test_rotations(&mut rng) {
        let m = Mat3::from_quat(q.as_quat());
        let got = matrix_quaternion(m).as_dquat();
        // The same rotation: q or −q.
        let err = (got - q).length().min((got + q).length());
        assert!(err < 2e-6, "{q}: {got} (error {err:e})");
    }
    let turn = Mat3::from_quat(rng.rotation().as_quat());
    let zero = Quat::from_xyzw(0.0, 0.0, 0.0, 0.0);
    // Scale, one axis stretched, a shear, a mirror: not rotations.
    for (name, m) in [
        ("uniform scale 2", turn * 2.0),
        (
            "scale 1.001 on x",
            turn * Mat3::from_diagonal(Vec3::new(1.001, 1.0, 1.0)),
        ),
        (
            "shear",
            turn * Mat3::from_cols(Vec3::X, Vec3::new(0.01, 1.0, 0.0), Vec3::Z),
        ),
        (
            "mirror",
            turn * Mat3::from_diagonal(Vec3::new(1.0, 1.0, -1.0)),
        ),
        ("zero", Mat3::ZERO),
    ] {
        assert_eq!(matrix_quaternion(m), zero, "{name}");
    }
    // Drift well inside the tolerance is still a rotation.
    let drifted = turn * Mat3::from_diagonal(Vec3::splat(1.0 + 1e-6));
    assert_ne!(matrix_quaternion(drifted), zero);
}

/// A renderer's instance of 20 f32: a column-major model matrix, then a colour.
fn matrix_instances(poses: &[(Vec3, Quat)], scaled: &[(usize, f32)]) -> Vec<u32> {
    let mut words = Vec::new();
    for (i, &(p, q)) in poses.iter().enumerate() {
        let s = scaled
            .iter()
            .find(|(k, _)| *k == i)
            .map_or(1.0, |&(_, s)| s);
        let m = Mat4::from_scale_rotation_translation(Vec3::splat(s), q, p);
        words.extend(m.to_cols_array().map(f32::to_bits));
        words.extend([0.5f32, 0.5, 0.5, 1.0].map(f32::to_bits));
    }
    words
}

/// The renderer's buffer of model matrices `words` (layout `layout`, bodies of shapes 0
/// and 1 by turns) bound to a GPU world, and a CPU-twin world set to the twin gather's
/// poses and stepped once (with its report); the buffer and the bodies' shape indices.
fn matrix_twins(
    device: wgpu::Device,
    queue: &wgpu::Queue,
    layout: PoseLayout,
    words: &[u32],
) -> (World, (World, FrameReport), wgpu::Buffer, Vec<u32>) {
    let n = words.len() * 4 / layout.stride as usize;
    let buffer = instance_buffer(&device, queue, words);
    let kinds: Vec<usize> = (0..n).map(|i| i % 2).collect();
    let (mut gpu, mut cpu, shape_of) = twin_worlds(device, queue, &kinds);
    gpu.bind_pose_buffer(&buffer, layout).unwrap();
    let (table, status) = gather_cpu(words, &shape_of, layout.params(n));
    assert!(status.is_ok());
    cpu.set_poses(&table.iter().map(Pose::from_gpu).collect::<Vec<_>>())
        .unwrap();
    let report = cpu.step(0.0).unwrap();
    (gpu, (cpu, report), buffer, shape_of)
}

#[test]
fn model_matrices_gathered_from_a_renderers_buffer_give_the_cpu_twins_report() {
    let Some((device, queue)) = renderer_device() else {
        return;
    };
    let layout = PoseLayout::model_matrix(80, 0);
    let n = 300;
    let mut rng = Rng::new(44);
    let poses: Vec<(Vec3, Quat)> = (0..n)
        .map(|_| {
            let p = rng.point_in(DVec3::ZERO, DVec3::splat(5.0)).as_vec3();
            (p, rng.rotation().as_quat())
        })
        .collect();
    let words = matrix_instances(&poses, &[]);
    let (mut gpu, (cpu, c), buffer, shape_of) = matrix_twins(device, &queue, layout, &words);
    let g = gpu.step(0.0).unwrap();
    assert!(g.contacts.len() > 20, "{}", g.contacts.len());
    for ((got, want), &(p, q)) in gpu.bodies().iter().zip(cpu.bodies()).zip(&poses) {
        // The GPU's conversion and its twin's: the same f32 steps, within their rounding;
        // both the quaternion the matrix was made from.
        let (a, b) = (got.pose.rotation, want.pose.rotation);
        assert!((a - b).length() < 1e-6, "{a} vs {b}");
        let q = q.as_dquat();
        assert!((a - q).length().min((a + q).length()) < 2e-6, "{a} vs {q}");
        assert_eq!(got.pose.translation, p.as_dvec3());
    }
    // The pairs (boxes with margins) agree; the touching pairs too, though a contact's
    // numbers may differ in the last bits where the GPU's f32 rounding differs.
    assert_eq!(g.pairs, c.pairs);
    let touching =
        |r: &FrameReport| -> Vec<[u32; 2]> { r.contacts.iter().map(|c| c.bodies).collect() };
    assert_eq!(touching(&g), touching(&c));
    let exact = gpu
        .bodies()
        .iter()
        .zip(cpu.bodies())
        .filter(|(a, b)| a.pose == b.pose)
        .count();
    println!("{exact} of {n} gathered poses equal the twin's to the bit");

    // A renderer that scales two of its instances: a named error naming the first.
    let scaled = matrix_instances(&poses, &[(7, 1.5), (40, 0.5)]);
    queue.write_buffer(&buffer, 0, bytemuck::cast_slice(&scaled));
    let e = gpu.step(0.0).unwrap_err().to_string();
    assert!(
        e.contains("instance 7") && e.contains("not a rotation") && e.contains("2 instance"),
        "{e}"
    );
    let (_, status) = gather_cpu(&scaled, &shape_of, layout.params(n));
    assert_eq!((status.first_error, status.error_count), (7, 2));
    // A layout whose matrix runs past the stride is refused when bound.
    let e = gpu
        .bind_pose_buffer(&buffer, PoseLayout::model_matrix(80, 40))
        .unwrap_err()
        .to_string();
    assert!(e.contains("44 bytes"), "{e}");
}

/// A renderer's pose buffer larger than one storage binding: on a device whose bindings
/// hold 256 KiB (8,192 bodies a frame; 3,276 80-byte model matrices), the gather runs over
/// windows of the buffer, and past 8,192 bodies the frame runs in slabs. The pairs and
/// touching pairs equal the CPU twins' on the twin gather's poses; a scaled matrix in a
/// later window is named by its index in the whole buffer.
#[test]
fn a_pose_buffer_past_one_binding_is_gathered_in_windows() {
    let limits = wgpu::Limits {
        max_storage_buffer_binding_size: 256 << 10,
        ..wgpu::Limits::default()
    };
    let Some((device, queue)) = common::device_with_limits("embed windows", limits) else {
        return;
    };
    let layout = PoseLayout::model_matrix(80, 0);
    for n in [6_000usize, 20_000] {
        let mut rng = Rng::new(n as u64);
        // About one touching neighbour a body.
        let side = (n as f64 * 1.5).cbrt();
        let poses: Vec<(Vec3, Quat)> = (0..n)
            .map(|_| {
                let p = rng.point_in(DVec3::ZERO, DVec3::splat(side)).as_vec3();
                (p, rng.rotation().as_quat())
            })
            .collect();
        let words = matrix_instances(&poses, &[]);
        let (mut gpu, (cpu, c), buffer, _) = matrix_twins(device.clone(), &queue, layout, &words);
        assert!(buffer.size() > 256 << 10);
        let g = gpu.step(0.0).unwrap();
        assert!(
            g.contacts.len() > n / 4,
            "{n}: {} contacts",
            g.contacts.len()
        );
        for ((got, want), &(p, _)) in gpu.bodies().iter().zip(cpu.bodies()).zip(&poses) {
            let (a, b) = (got.pose.rotation, want.pose.rotation);
            assert!((a - b).length() < 1e-6, "{a} vs {b}");
            assert_eq!(got.pose.translation, p.as_dvec3());
        }
        assert_eq!(g.pairs, c.pairs, "{n} bodies");
        let touching =
            |r: &FrameReport| -> Vec<[u32; 2]> { r.contacts.iter().map(|c| c.bodies).collect() };
        assert_eq!(touching(&g), touching(&c), "{n} bodies");
        let runs = g
            .profile
            .stages
            .iter()
            .filter(|s| s.name == "gather")
            .count();
        assert!(runs >= n / 3072, "{n} bodies: {runs} gather runs");
        println!("{n} bodies: {runs} gather runs, {} pairs", g.pairs.len());

        // A scaled matrix in a later window, named by its place in the buffer.
        let bad = n - 7;
        let scaled = matrix_instances(&poses, &[(bad, 1.5)]);
        queue.write_buffer(&buffer, 0, bytemuck::cast_slice(&scaled));
        let e = gpu.step(0.0).unwrap_err().to_string();
        assert!(e.contains(&format!("instance {bad}'s")), "{e}");
    }
}

/// A renderer's device short of what the passes need (made with WebGL2's downlevel limits:
/// no storage buffer at all) is named by its limits at the first step. A row of 50 crates
/// was said to be "more than one frame binds (0)", denser than the device's bindings hold.
#[test]
fn a_device_short_of_the_passes_limits_is_named() {
    let limits = wgpu::Limits::downlevel_webgl2_defaults();
    let Some((device, queue)) = common::device_with_limits("short limits", limits) else {
        return;
    };
    let mut world = World::on_context(GpuContext::from_device(device, queue));
    let krate = world
        .add_convex(cuboid(DVec3::splat(0.5)).unwrap())
        .unwrap();
    for i in 0..50 {
        let at = DVec3::new(f64::from(i) * 0.9, 0.0, 0.0);
        world
            .add_body(krate, Pose::new(at, DQuat::IDENTITY))
            .unwrap();
    }
    let e = world.step(0.0).unwrap_err().to_string();
    assert!(
        e.contains("max_storage_buffers_per_shader_stage 0") && e.contains("Limits::default()"),
        "{e}"
    );
}
