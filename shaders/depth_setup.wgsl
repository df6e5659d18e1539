// Sampled depth inside a frame: the depth passes' pair count from the broadphase's counter
// (the pairs found, or the room when they overflowed: such a frame is run again), written
// into their parameters on the GPU, so the depth stage follows the broadphase with nothing
// read back between them. CPU twin: the pairs a CPU frame found are the count.

// The pair count and the room in the pair buffer (a PairCounter's first two words).
@group(0) @binding(0) var<storage, read> counter: array<u32>;
// The depth passes' DepthParams, whose first word is `pairs`.
@group(0) @binding(1) var<storage, read_write> params: array<u32>;

@compute @workgroup_size(1)
fn main() {
    params[0] = min(counter[0], counter[1]);
}
