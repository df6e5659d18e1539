// Work distribution. Large dispatches are split over a 2D grid of workgroups (x at most
// 65535, the default limit); every thread gets one linear index. Rust side: src/gpu/sizes.rs.

fn linear_index(gid: vec3<u32>, groups: vec3<u32>, workgroup_size: u32) -> u32 {
    return gid.x + gid.y * groups.x * workgroup_size;
}

// Linear index of the workgroup itself in the same 2D grid (Rust: sizes::dispatch_grid
// over workgroups).
fn workgroup_index(wid: vec3<u32>, groups: vec3<u32>) -> u32 {
    return wid.x + wid.y * groups.x;
}
