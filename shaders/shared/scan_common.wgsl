// Shared by the scan and radix-sort passes. Rust twins: passes::scan::{GpuScanParams,
// SCAN_CHUNK}.

const SCAN_ITEMS: u32 = 4u;
const SCAN_CHUNK: u32 = 1024u; // 256 threads × SCAN_ITEMS

struct ScanParams {
    // Number of values to scan.
    count: u32,
    // Index of the first value inside `data`.
    offset: u32,
    // Number of chunks (workgroups with work).
    groups: u32,
    // 1 when the chunks' scanned partials are added, 0 for a single chunk.
    use_offsets: u32,
}
