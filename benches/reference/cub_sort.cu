// The hardware's reference for the radix sort's goal: CUB's DeviceRadixSort::SortPairs
// (NVIDIA's own sort, the one CUDA's libraries call) over pairs like those `proxima bench
// gpu` sorts: random u32 keys (a fixed xorshift stream), u32 values 0..n, 32 key bits, 8 B a
// pair. Each sort is
// timed on the GPU by CUDA events around one call, after warm-up runs that also hold the
// clock up; the median of 51, and of 20 sorts timed back to back, is printed beside the
// bandwidth at 64 B a pair (4 passes, each
// reading and writing a key and a value: the floor `bench gpu` measures against) and a
// device-to-device copy's rate, the card's practical ceiling. Every size's answer is
// checked against std::stable_sort on the host.
//
// Built and run by benches/gpu-figures.sh where nvcc is on the machine:
//   nvcc -O3 -arch=native -std=c++17 -o cub_sort benches/reference/cub_sort.cu && ./cub_sort
#include <cub/cub.cuh>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <numeric>
#include <vector>

#define CHECK(call)                                                                     \
    do {                                                                                \
        cudaError_t e = (call);                                                         \
        if (e != cudaSuccess) {                                                         \
            std::fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, cudaGetErrorString(e)); \
            std::exit(1);                                                               \
        }                                                                               \
    } while (0)

static float median(std::vector<float> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

int main(int argc, char** argv) {
    std::vector<size_t> sizes = {10000, 100000, 1000000, 4000000, 16000000};
    if (argc > 1) {
        sizes.clear();
        for (int i = 1; i < argc; i++) sizes.push_back(std::strtoull(argv[i], nullptr, 10));
    }
    cudaDeviceProp prop;
    CHECK(cudaGetDeviceProperties(&prop, 0));
    std::printf("device: %s, %d SMs\n", prop.name, prop.multiProcessorCount);
    cudaEvent_t start, stop;
    CHECK(cudaEventCreate(&start));
    CHECK(cudaEventCreate(&stop));
    const int runs = 51;
    std::printf("| pairs | CUB SortPairs, one call (median of %d) | back to back (a sort) | GB/s at 64 B a pair | copy of the pairs, GB/s |\n", runs);
    std::printf("|---|---|---|---|---|\n");
    for (size_t n : sizes) {
        std::vector<uint32_t> keys(n), values(n);
        uint32_t s = 0x9e3779b9u;
        for (size_t i = 0; i < n; i++) {
            s ^= s << 13;
            s ^= s >> 17;
            s ^= s << 5;
            keys[i] = s;
            values[i] = uint32_t(i);
        }
        uint32_t *k_in, *k_out, *v_in, *v_out;
        CHECK(cudaMalloc(&k_in, n * 4));
        CHECK(cudaMalloc(&k_out, n * 4));
        CHECK(cudaMalloc(&v_in, n * 4));
        CHECK(cudaMalloc(&v_out, n * 4));
        CHECK(cudaMemcpy(k_in, keys.data(), n * 4, cudaMemcpyHostToDevice));
        CHECK(cudaMemcpy(v_in, values.data(), n * 4, cudaMemcpyHostToDevice));
        size_t temp_bytes = 0;
        CHECK(cub::DeviceRadixSort::SortPairs(nullptr, temp_bytes, k_in, k_out, v_in, v_out, (int)n));
        void* temp;
        CHECK(cudaMalloc(&temp, temp_bytes));
        auto sort = [&] {
            CHECK(cub::DeviceRadixSort::SortPairs(temp, temp_bytes, k_in, k_out, v_in, v_out, (int)n));
        };
        // Warm-up: a quarter of a second of sorts, so the clock is up.
        for (int i = 0; i < 20; i++) sort();
        CHECK(cudaEventRecord(start));
        int warm = 0;
        float ms = 0;
        while (ms < 250.0f) {
            sort();
            warm++;
            CHECK(cudaEventRecord(stop));
            CHECK(cudaEventSynchronize(stop));
            CHECK(cudaEventElapsedTime(&ms, start, stop));
        }
        std::vector<float> times;
        for (int r = 0; r < runs; r++) {
            CHECK(cudaEventRecord(start));
            sort();
            CHECK(cudaEventRecord(stop));
            CHECK(cudaEventSynchronize(stop));
            CHECK(cudaEventElapsedTime(&ms, start, stop));
            times.push_back(ms);
        }
        // Back to back: 20 sorts between two events, so the host's own time between calls
        // (CUB's launches, its queries of the device) hides behind the GPU's where it can.
        std::vector<float> batches;
        for (int r = 0; r < 11; r++) {
            CHECK(cudaEventRecord(start));
            for (int i = 0; i < 20; i++) sort();
            CHECK(cudaEventRecord(stop));
            CHECK(cudaEventSynchronize(stop));
            CHECK(cudaEventElapsedTime(&ms, start, stop));
            batches.push_back(ms / 20.0f);
        }
        std::vector<float> copies;
        for (int r = 0; r < runs; r++) {
            CHECK(cudaEventRecord(start));
            CHECK(cudaMemcpyAsync(k_out, k_in, n * 4, cudaMemcpyDeviceToDevice));
            CHECK(cudaMemcpyAsync(v_out, v_in, n * 4, cudaMemcpyDeviceToDevice));
            CHECK(cudaEventRecord(stop));
            CHECK(cudaEventSynchronize(stop));
            CHECK(cudaEventElapsedTime(&ms, start, stop));
            copies.push_back(ms);
        }
        sort();
        std::vector<uint32_t> got_k(n), got_v(n);
        CHECK(cudaMemcpy(got_k.data(), k_out, n * 4, cudaMemcpyDeviceToHost));
        CHECK(cudaMemcpy(got_v.data(), v_out, n * 4, cudaMemcpyDeviceToHost));
        std::vector<uint32_t> order(n);
        std::iota(order.begin(), order.end(), 0u);
        std::stable_sort(order.begin(), order.end(),
                         [&](uint32_t a, uint32_t b) { return keys[a] < keys[b]; });
        for (size_t i = 0; i < n; i++) {
            if (got_k[i] != keys[order[i]] || got_v[i] != order[i]) {
                std::fprintf(stderr, "n = %zu: wrong at %zu\n", n, i);
                return 1;
            }
        }
        float t = median(times);
        float b = median(batches);
        float c = median(copies);
        std::printf("| %zu | %.1f us | %.1f us | %.0f | %.0f |\n", n, t * 1000.0f, b * 1000.0f,
                    n * 64.0 / (b * 1e6), n * 16.0 / (c * 1e6));
        CHECK(cudaFree(temp));
        CHECK(cudaFree(k_in));
        CHECK(cudaFree(k_out));
        CHECK(cudaFree(v_in));
        CHECK(cudaFree(v_out));
    }
    return 0;
}
