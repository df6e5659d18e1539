// Indirect dispatch arguments from a count the GPU produced (a pair counter, say), so a
// later pass runs one thread per item without a CPU round trip. The grid is 2D when the
// group count exceeds max_groups_x, matching linear_index() in shared/dispatch.wgsl.
// CPU twin: gpu::sizes::dispatch_grid.

struct DispatchArgsParams {
    // Index of the count inside `counts`.
    count_index: u32,
    // Threads per workgroup of the pass being dispatched.
    workgroup_size: u32,
    // Largest x dimension of the grid (the device's per-dimension limit).
    max_groups_x: u32,
    // Threads per counted item.
    per_item: u32,
}

@group(0) @binding(0) var<uniform> params: DispatchArgsParams;
@group(0) @binding(1) var<storage, read> counts: array<u32>;
@group(0) @binding(2) var<storage, read_write> args: array<u32, 3>;

@compute @workgroup_size(1)
fn main() {
    let items = counts[params.count_index] * params.per_item;
    let groups = items / params.workgroup_size + select(0u, 1u, items % params.workgroup_size != 0u);
    let x = min(groups, params.max_groups_x);
    var y = 0u;
    if x > 0u {
        y = groups / x + select(0u, 1u, groups % x != 0u);
    }
    args[0] = x;
    args[1] = y;
    args[2] = 1u;
}
