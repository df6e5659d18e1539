//! Embedding: a renderer's device created with `Limits::default()` and its own instance
//! buffer handed to proxima. The poses gathered on the GPU from the buffer give the same
//! pairs and contacts as the same poses set on the CPU twins; a wrong buffer or layout is
//! a named error.

mod common;

use glam::DVec3;
use proxima::Pipeline;
use proxima::bodies::{GpuBody, Pose};
use proxima::geometry::generators::{cuboid, random_hull};
use proxima::gpu::GpuContext;
use proxima::passes::pose_gather::{PoseLayout, gather_cpu};
use proxima::rng::Rng;
use proxima::world::{ShapeId, World};

/// A renderer's device with default limits, or `None` without an adapter.
fn renderer_device() -> Option<(wgpu::Device, wgpu::Queue)> {
    common::gpu("embed")?;
    let instance =
        wgpu::Instance::new(wgpu::InstanceDescriptor::new_without_display_handle().with_env());
    let adapter = pollster::block_on(instance.request_adapter(&Default::default())).ok()?;
    pollster::block_on(adapter.request_device(&wgpu::DeviceDescriptor {
        label: Some("renderer"),
        required_limits: wgpu::Limits::default(),
        ..Default::default()
    }))
    .ok()
}

/// 12 words per instance: position, scale, rotation, colour.
const LAYOUT: PoseLayout = PoseLayout {
    stride: 48,
    position: 0,
    rotation: 16,
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
    let buffer = device.create_buffer(&wgpu::BufferDescriptor {
        label: Some("instances"),
        size: (words.len() * 4) as u64,
        usage: wgpu::BufferUsages::VERTEX
            | wgpu::BufferUsages::STORAGE
            | wgpu::BufferUsages::COPY_DST,
        mapped_at_creation: false,
    });
    queue.write_buffer(&buffer, 0, bytemuck::cast_slice(&words));

    let mut gpu = World::on_context(GpuContext::from_device(device, queue.clone()));
    let mut cpu = World::on(Pipeline::cpu());
    let mut shape_of = Vec::new();
    for w in [&mut gpu, &mut cpu] {
        let mut rng = Rng::new(5);
        let shapes = add_shapes(w, &mut rng);
        let mut pick = Rng::new(9);
        shape_of.clear();
        for _ in 0..n {
            let s = shapes[pick.below(2) as usize];
            shape_of.push(s.0);
            w.add_body(s, Pose::IDENTITY).unwrap();
        }
        w.set_speculative(0.02).unwrap();
    }
    gpu.bind_pose_buffer(&buffer, LAYOUT).unwrap();
    // The CPU twin of the gather gives the poses the CPU world is set to.
    let table: Vec<GpuBody> = gather_cpu(&words, &shape_of, LAYOUT.params(n));
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
    let table = gather_cpu(&words, &shape_of, LAYOUT.params(n));
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
    // On the CPU twins there is no device to read a buffer on.
    let mut cpu = World::on(Pipeline::cpu());
    let _ = add_shapes(&mut cpu, &mut rng);
    assert!(err(cpu.bind_pose_buffer(&nan, LAYOUT)).contains("GPU"));
}
