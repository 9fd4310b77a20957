// Peer benchmark: the same primitives through CUB and Thrust (CUDA's own CCCL), on the
// same inputs as the crate's benchmark, so that one run gives both sides.
//   nvcc -O3 -std=c++17 -arch=sm_90 --extended-lambda benches/peer/cub_bench.cu -o cub_bench -lcurand
// Output: one line per primitive and size,
//   NAME n=2^K  MS ms  GELEM Gelem/s  GBPS GB/s
// MS is the median of 15 timed runs (CUDA events) after one warm-up; GB/s counts the
// fewest bytes the primitive must move (each input read once, each output written once).
//
// Inputs, for element i of n (hash = the 32-bit mixer below, seed 12345):
//   u32 keys   hash(i)
//   f32        (hash(i) >> 8) / 2^24            in [0, 1)
//   i32        (hash(i) & 1023) - 512
//   flags      segment heads at every multiple of 1000 (segmented scan)
//   perm       a random permutation of 0..n (gather, scatter)
//   bins       hash(i) % (n / 16)               (scatter_combine: n values into n/16 slots)
//   hist       hash(i) & 255 as u32, 256 bins   (histogram)
//   repeats    i / 3 as u32, sorted             (find_repeats: indices i with a[i] == a[i+1])
//   runs8      i / 8 as u32, sorted             (reduce_by_key: f summed over runs of equal keys)
//   f64        f as double;  i64  i32 as int64; u64 keys  (hash(i) << 32) | hash(i ^ 0x5bd1e995)
//   a, b       0.5 + f / 2 and f - 0.5          (linear_recurrence: h[i] = a[i] * h[i-1] + b[i])
//   hay        the u32 keys sorted ascending; needles hash(i ^ 0x9e3779b9), n of them   (lower_bound)
//   halves     hash(i) for i < n/2 sorted, then hash(i) for n/2 <= i < n sorted     (merge)
//
// Fused lines: the peer passes CUB a transform iterator or functor (one pass), as an expert
// CUDA programmer would; the crate must do the same work from its public API:
//   transform_reduce_f32   sum of x * x                     DeviceReduce::TransformReduce
//   transform_scan_u32     inclusive sum of (k & 255)       DeviceScan::InclusiveSum(transform_iterator)
//   copy_if_f32            the x < 0.5, in order, and their count read back   DeviceSelect::If
//   unique_u32             the first of each run of repeats, count read back  DeviceSelect::Unique
//   reduce_by_key_f32      (key, sum of f) per run of runs8, count read back  DeviceReduce::ReduceByKey
// Custom-operator lines:
//   argmax_f32             index and value of the largest f (first of ties)   thrust::max_element
//   linear_recurrence_f32  h[i] = a[i] * h[i-1] + b[i], h[-1] = 0: a scan of affine maps
//                          (a1, b1) . (a2, b2) = (a1 * a2, b1 * a2 + b2), h written as f32
// Search, merge and random-number lines:
//   lower_bound_u32        for each needle, the first position in hay whose key is >= it, written as u32
//                          thrust::lower_bound (vectorized form); GB/s counts needles read + positions
//                          written (8 bytes an element), not the haystack's reads
//   merge_u32              the two ascending halves merged into n outputs       thrust::merge
//   random_uniform_f32     n uniform floats in (0, 1] from cuRAND's host API, CURAND_RNG_PSEUDO_PHILOX4_32_10,
//                          seed 12345, generator created once outside the timed region; GB/s counts the
//                          n * 4 bytes written                                  curandGenerateUniform
// No top-k line: CCCL 3.0.1 ships no device-wide top-k (cub::DeviceTopK first appears in CCCL 3.3.0).
// Third-round lines: views, sets, tuple keys and loops inside element functions (one pass in the peer
// wherever Thrust makes one):
//   permutation_reduce_f32 sum of f[perm[i]], perm as for gather: a permutation_iterator read by
//                          cub::DeviceReduce::Sum, nothing stored; GB/s counts perm + f (8 bytes an element)
//   adjacent_difference_i32 out[0] = i32[0], out[i] = i32[i] - i32[i-1]      thrust::adjacent_difference
//   stencil3_f32           out[j] = (f[j] + f[j+1]) + f[j+2] for j < n - 2, a transform over a zip of three
//                          shifted iterators of one array                       thrust::transform(zip_iterator)
//   set_union_u32          sets a = hash(i) for i < n/2 and b = hash(i) for n/4 <= i < 3n/4, each sorted
//   set_intersection_u32   ascending (hash is a bijection, so no repeats; a and b share n/4 keys): their
//                          union (3n/4 keys) and intersection (n/4); GB/s counts both inputs + the output
//                                                                               thrust::set_union / set_intersection
//   sort_tuple_u32_u32     (hi, lo) pairs sorted lexicographically, hi = hash(i) >> 20 (4096 values, many
//                          ties), lo = hash(i ^ 0x5bd1e995), given and returned as two u32 columns; the
//                          peer packs each pair into a u64, radix-sorts the u64 keys and unpacks them:
//                          the fastest CUB way (thrust::sort of a zip_iterator is a comparison merge sort,
//                          several times slower); GB/s counts two columns read + two written
//   monte_carlo_pi_f32     n samples in threads of 256: thread t starts x = hash(t) % (2^31 - 1) (1 where
//                          that is 0), then 256 times: x = 48271 x mod (2^31 - 1), u = x * 2^-31 (f32),
//                          the same again for v, and counts u * u + v * v <= 1 (f32); the n / 256 counts
//                          summed as u64 (the shape of thrust/examples/monte_carlo.cu: a loop with its
//                          state in registers); Gelem/s = samples a second, no bytes moved
//                                                                               thrust::transform_reduce
#include <cub/cub.cuh>
#include <thrust/device_vector.h>
#include <thrust/sequence.h>
#include <thrust/gather.h>
#include <thrust/scatter.h>
#include <thrust/reduce.h>
#include <thrust/scan.h>
#include <thrust/copy.h>
#include <thrust/shuffle.h>
#include <thrust/random.h>
#include <thrust/execution_policy.h>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/iterator/transform_iterator.h>
#include <thrust/iterator/transform_output_iterator.h>
#include <thrust/extrema.h>
#include <thrust/binary_search.h>
#include <thrust/merge.h>
#include <thrust/equal.h>
#include <thrust/adjacent_difference.h>
#include <thrust/set_operations.h>
#include <thrust/transform_reduce.h>
#include <thrust/iterator/permutation_iterator.h>
#include <thrust/iterator/zip_iterator.h>
#include <curand.h>
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <vector>

#define CK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { \
  printf("CUDA error %s at %s:%d\n", cudaGetErrorString(e), __FILE__, __LINE__); exit(1); } } while (0)
#define CKR(x) do { curandStatus_t e = (x); if (e != CURAND_STATUS_SUCCESS) { \
  printf("cuRAND error %d at %s:%d\n", int(e), __FILE__, __LINE__); exit(1); } } while (0)

static double median_ms(const std::function<void()>& f, int reps = 15) {
  f(); CK(cudaDeviceSynchronize());
  std::vector<float> t;
  cudaEvent_t a, b; CK(cudaEventCreate(&a)); CK(cudaEventCreate(&b));
  for (int i = 0; i < reps; ++i) {
    CK(cudaEventRecord(a)); f(); CK(cudaEventRecord(b)); CK(cudaEventSynchronize(b));
    float ms; CK(cudaEventElapsedTime(&ms, a, b)); t.push_back(ms);
  }
  CK(cudaGetLastError());
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

static void report(const char* name, int lg, double ms, double bytes_per_elem) {
  double n = double(size_t(1) << lg);
  printf("%-30s n=2^%-2d %10.4f ms %9.2f Gelem/s %8.1f GB/s\n", name, lg, ms, n / ms / 1e6, n * bytes_per_elem / ms / 1e6);
  fflush(stdout);
}

struct Hash { __host__ __device__ uint32_t operator()(uint32_t i) const {
  uint32_t x = i * 2654435761u ^ 12345u; x ^= x >> 16; x *= 0x7feb352du; x ^= x >> 15; x *= 0x846ca68bu; x ^= x >> 16; return x; } };

struct Hash64 { __host__ __device__ uint64_t operator()(uint32_t i) const {
  Hash h; return (uint64_t(h(i)) << 32) | h(i ^ 0x5bd1e995u); } };
struct Square { __host__ __device__ float operator()(float x) const { return x * x; } };
struct Low8 { __host__ __device__ uint32_t operator()(uint32_t k) const { return k & 255u; } };
struct Below { __host__ __device__ bool operator()(float x) const { return x < 0.5f; } };
struct Affine { __host__ __device__ float2 operator()(float2 p, float2 q) const {
  return make_float2(p.x * q.x, p.y * q.x + q.y); } };
struct TakeY { __host__ __device__ float operator()(float2 p) const { return p.y; } };
struct NeedleHash { __host__ __device__ uint32_t operator()(uint32_t i) const { return Hash{}(i ^ 0x9e3779b9u); } };

struct Stencil3 { template <class Tup> __host__ __device__ float operator()(const Tup& t) const {
  return (thrust::get<0>(t) + thrust::get<1>(t)) + thrust::get<2>(t); } };
struct PiSamples { __host__ __device__ unsigned long long operator()(uint32_t t) const {
  uint64_t x = Hash{}(t) % 2147483647u; if (x == 0) x = 1;
  unsigned long long hits = 0;
  for (int k = 0; k < 256; ++k) {
    x = x * 48271u % 2147483647u; float u = float(uint32_t(x)) * (1.0f / 2147483648.0f);
    x = x * 48271u % 2147483647u; float v = float(uint32_t(x)) * (1.0f / 2147483648.0f);
    hits += (u * u + v * v <= 1.0f);
  }
  return hits; } };

template <class T> T* raw(thrust::device_vector<T>& v) { return thrust::raw_pointer_cast(v.data()); }

int main() {
  cudaDeviceProp p; int dev; CK(cudaGetDevice(&dev)); CK(cudaGetDeviceProperties(&p, dev));
  printf("# peer: CUB/Thrust %d.%d.%d on %s, %d SMs\n", CCCL_MAJOR_VERSION, CCCL_MINOR_VERSION, CCCL_PATCH_VERSION, p.name, p.multiProcessorCount);
  void* tmp = nullptr; size_t tmp_bytes = 0, need = 0;
  auto ensure = [&](size_t b) { if (b > tmp_bytes) { if (tmp) CK(cudaFree(tmp)); CK(cudaMalloc(&tmp, b)); tmp_bytes = b; } };
  curandGenerator_t gen;
  CKR(curandCreateGenerator(&gen, CURAND_RNG_PSEUDO_PHILOX4_32_10));
  CKR(curandSetPseudoRandomGeneratorSeed(gen, 12345ull));
  for (int lg : {16, 20, 24, 28}) {
    size_t n = size_t(1) << lg;
    auto cnt = thrust::counting_iterator<uint32_t>(0);
    thrust::device_vector<uint32_t> keys(n), keys_out(n), vals(n), vals_out(n);
    thrust::device_vector<float> f(n), f_out(n);
    thrust::device_vector<int> ints(n), ints_out(n);
    thrust::transform(cnt, cnt + n, keys.begin(), Hash{});
    thrust::sequence(vals.begin(), vals.end());
    thrust::transform(keys.begin(), keys.end(), f.begin(), [] __device__ (uint32_t x) { return (x >> 8) * (1.0f / 16777216.0f); });
    thrust::transform(keys.begin(), keys.end(), ints.begin(), [] __device__ (uint32_t x) { return int(x & 1023) - 512; });
    float* fin = raw(f); float* fout = raw(f_out); int* iin = raw(ints); int* iout = raw(ints_out);
    uint32_t* kin = raw(keys); uint32_t* kout = raw(keys_out); uint32_t* vin = raw(vals); uint32_t* vout = raw(vals_out);
    thrust::device_vector<float> fsum(1); thrust::device_vector<int> isum(1);

    report("copy_f32", lg, median_ms([&] { CK(cudaMemcpyAsync(fout, fin, n * 4, cudaMemcpyDeviceToDevice)); }), 8);
    report("map_f32", lg, median_ms([&] { thrust::transform(thrust::device, fin, fin + n, fout, [] __device__ (float x) { return x * 2.f + 1.f; }); }), 8);
    CK(cub::DeviceReduce::Sum(nullptr, need, fin, raw(fsum), n)); ensure(need);
    report("reduce_add_f32", lg, median_ms([&] { CK(cub::DeviceReduce::Sum(tmp, need, fin, raw(fsum), n)); }), 4);
    CK(cub::DeviceReduce::Sum(nullptr, need, iin, raw(isum), n)); ensure(need);
    report("reduce_add_i32", lg, median_ms([&] { CK(cub::DeviceReduce::Sum(tmp, need, iin, raw(isum), n)); }), 4);
    CK(cub::DeviceReduce::Max(nullptr, need, fin, raw(fsum), n)); ensure(need);
    report("reduce_max_f32", lg, median_ms([&] { CK(cub::DeviceReduce::Max(tmp, need, fin, raw(fsum), n)); }), 4);
    CK(cub::DeviceScan::InclusiveSum(nullptr, need, iin, iout, n)); ensure(need);
    report("inclusive_scan_add_i32", lg, median_ms([&] { CK(cub::DeviceScan::InclusiveSum(tmp, need, iin, iout, n)); }), 8);
    CK(cub::DeviceScan::ExclusiveSum(nullptr, need, fin, fout, n)); ensure(need);
    report("exclusive_scan_add_f32", lg, median_ms([&] { CK(cub::DeviceScan::ExclusiveSum(tmp, need, fin, fout, n)); }), 8);
    {
      thrust::device_vector<uint32_t> seg(n);
      thrust::transform(cnt, cnt + n, seg.begin(), [] __device__ (uint32_t i) { return i / 1000; });
      report("segmented_scan_add_i32", lg, median_ms([&] { thrust::inclusive_scan_by_key(thrust::device, seg.begin(), seg.end(), ints.begin(), ints_out.begin()); }), 8);
    }
    {
      thrust::device_vector<uint32_t> perm(n); thrust::sequence(perm.begin(), perm.end());
      thrust::shuffle(perm.begin(), perm.end(), thrust::default_random_engine(7));
      report("gather_f32", lg, median_ms([&] { thrust::gather(thrust::device, perm.begin(), perm.end(), f.begin(), f_out.begin()); }), 12);
      report("scatter_f32", lg, median_ms([&] { thrust::scatter(thrust::device, f.begin(), f.end(), perm.begin(), f_out.begin()); }), 12);
    }
    CK(cub::DeviceRadixSort::SortKeys(nullptr, need, kin, kout, n)); ensure(need);
    report("sort_u32", lg, median_ms([&] { CK(cub::DeviceRadixSort::SortKeys(tmp, need, kin, kout, n)); }), 8);
    CK(cub::DeviceRadixSort::SortKeys(nullptr, need, fin, fout, n)); ensure(need);
    report("sort_f32", lg, median_ms([&] { CK(cub::DeviceRadixSort::SortKeys(tmp, need, fin, fout, n)); }), 8);
    CK(cub::DeviceRadixSort::SortPairs(nullptr, need, kin, kout, vin, vout, n)); ensure(need);
    report("sort_pairs_u32", lg, median_ms([&] { CK(cub::DeviceRadixSort::SortPairs(tmp, need, kin, kout, vin, vout, n)); }), 16);
    {
      // out[bins[i]] += f[i], n values into n/16 slots: sort by slot, then reduce by key (deterministic),
      // and, for reference, one atomicAdd per value (not deterministic for floats).
      uint32_t m = uint32_t(n / 16);
      thrust::device_vector<uint32_t> bins(n), bins_sorted(n), slots(n); thrust::device_vector<float> xs(n), sums(m);
      thrust::transform(keys.begin(), keys.end(), bins.begin(), [m] __device__ (uint32_t k) { return k % m; });
      uint32_t* bp = raw(bins); float* sp = raw(sums);
      CK(cub::DeviceRadixSort::SortPairs(nullptr, need, bp, raw(bins_sorted), fin, raw(xs), n)); ensure(need);
      report("scatter_combine_add_f32", lg, median_ms([&] {
        CK(cub::DeviceRadixSort::SortPairs(tmp, need, bp, raw(bins_sorted), fin, raw(xs), n));
        thrust::reduce_by_key(thrust::device, bins_sorted.begin(), bins_sorted.end(), xs.begin(), slots.begin(), sums.begin()); }), 12);
      report("scatter_combine_add_f32_atomic", lg, median_ms([&] {
        CK(cudaMemsetAsync(sp, 0, m * 4));
        thrust::for_each_n(thrust::device, thrust::counting_iterator<size_t>(0), n, [=] __device__ (size_t i) { atomicAdd(sp + bp[i], fin[i]); }); }), 12);
    }
    {
      thrust::device_vector<int> counts(256); thrust::device_vector<uint32_t> h(n);
      thrust::transform(keys.begin(), keys.end(), h.begin(), [] __device__ (uint32_t k) { return k & 255u; });
      CK(cub::DeviceHistogram::HistogramEven(nullptr, need, raw(h), raw(counts), 257, 0u, 256u, (int)n)); ensure(need);
      report("histogram_256_u32", lg, median_ms([&] { CK(cub::DeviceHistogram::HistogramEven(tmp, need, raw(h), raw(counts), 257, 0u, 256u, (int)n)); }), 4);
    }
    {
      thrust::device_vector<uint32_t> a(n); thrust::device_vector<uint32_t> idx(n);
      thrust::transform(cnt, cnt + n, a.begin(), [] __device__ (uint32_t i) { return i / 3; });
      uint32_t* ap = raw(a);
      report("find_repeats_u32", lg, median_ms([&] {
        thrust::copy_if(thrust::device, cnt, cnt + (n - 1), idx.begin(), [=] __device__ (uint32_t i) { return ap[i] == ap[i + 1]; }); }), 4);
    }

    {
      // Fused pipelines: one pass in the peer, through CUB's transform functors and iterators.
      thrust::device_vector<float> fr(1); thrust::device_vector<int> nsel(1); int h_nsel = 0;
      auto readback = [&] { CK(cudaMemcpy(&h_nsel, raw(nsel), sizeof(int), cudaMemcpyDeviceToHost)); };
      CK(cub::DeviceReduce::TransformReduce(nullptr, need, fin, raw(fr), n, ::cuda::std::plus<float>{}, Square{}, 0.0f)); ensure(need);
      report("transform_reduce_f32", lg, median_ms([&] { CK(cub::DeviceReduce::TransformReduce(tmp, need, fin, raw(fr), n, ::cuda::std::plus<float>{}, Square{}, 0.0f)); }), 4);
      auto low = thrust::make_transform_iterator(kin, Low8{});
      CK(cub::DeviceScan::InclusiveSum(nullptr, need, low, vout, n)); ensure(need);
      report("transform_scan_u32", lg, median_ms([&] { CK(cub::DeviceScan::InclusiveSum(tmp, need, low, vout, n)); }), 8);
      CK(cub::DeviceSelect::If(nullptr, need, fin, fout, raw(nsel), n, Below{})); ensure(need);
      report("copy_if_f32", lg, median_ms([&] { CK(cub::DeviceSelect::If(tmp, need, fin, fout, raw(nsel), n, Below{})); readback(); }), 6);
      thrust::device_vector<uint32_t> r3(n), r8(n), uk(n); thrust::device_vector<float> sums(n);
      thrust::transform(cnt, cnt + n, r3.begin(), [] __device__ (uint32_t i) { return i / 3; });
      thrust::transform(cnt, cnt + n, r8.begin(), [] __device__ (uint32_t i) { return i / 8; });
      CK(cub::DeviceSelect::Unique(nullptr, need, raw(r3), raw(uk), raw(nsel), n)); ensure(need);
      report("unique_u32", lg, median_ms([&] { CK(cub::DeviceSelect::Unique(tmp, need, raw(r3), raw(uk), raw(nsel), n)); readback(); }), 4.0 + 4.0 / 3.0);
      CK(cub::DeviceReduce::ReduceByKey(nullptr, need, raw(r8), raw(uk), fin, raw(sums), raw(nsel), ::cuda::std::plus<float>{}, n)); ensure(need);
      report("reduce_by_key_f32", lg, median_ms([&] { CK(cub::DeviceReduce::ReduceByKey(tmp, need, raw(r8), raw(uk), fin, raw(sums), raw(nsel), ::cuda::std::plus<float>{}, n)); readback(); }), 9);
    }
    {
      // Custom operators: an argmax, and a scan of affine maps (a first-order linear recurrence).
      report("argmax_f32", lg, median_ms([&] { auto it = thrust::max_element(thrust::device, f.begin(), f.end()); (void)it; }), 4);
      thrust::device_vector<float2> ab(n); thrust::device_vector<float> hs(n);
      thrust::transform(f.begin(), f.end(), ab.begin(), [] __device__ (float x) { return make_float2(0.5f + 0.5f * x, x - 0.5f); });
      auto hout = thrust::make_transform_output_iterator(raw(hs), TakeY{});
      CK(cub::DeviceScan::InclusiveScan(nullptr, need, raw(ab), hout, Affine{}, n)); ensure(need);
      report("linear_recurrence_f32", lg, median_ms([&] { CK(cub::DeviceScan::InclusiveScan(tmp, need, raw(ab), hout, Affine{}, n)); }), 12);
    }
    {
      // 8-byte elements.
      thrust::device_vector<double> d(n), d_out(n); thrust::device_vector<int64_t> l(n), l_out(n);
      thrust::device_vector<uint64_t> k64(n), k64_out(n); thrust::device_vector<double> dsum(1);
      thrust::copy(f.begin(), f.end(), d.begin()); thrust::copy(ints.begin(), ints.end(), l.begin());
      thrust::transform(cnt, cnt + n, k64.begin(), Hash64{});
      double* din = raw(d); double* dout = raw(d_out); int64_t* lin = raw(l); int64_t* lout = raw(l_out);
      uint64_t* k64in = raw(k64); uint64_t* k64out = raw(k64_out);
      CK(cub::DeviceReduce::Sum(nullptr, need, din, raw(dsum), n)); ensure(need);
      report("reduce_add_f64", lg, median_ms([&] { CK(cub::DeviceReduce::Sum(tmp, need, din, raw(dsum), n)); }), 8);
      CK(cub::DeviceScan::InclusiveSum(nullptr, need, lin, lout, n)); ensure(need);
      report("inclusive_scan_add_i64", lg, median_ms([&] { CK(cub::DeviceScan::InclusiveSum(tmp, need, lin, lout, n)); }), 16);
      thrust::device_vector<uint32_t> seg(n);
      thrust::transform(cnt, cnt + n, seg.begin(), [] __device__ (uint32_t i) { return i / 1000; });
      report("segmented_scan_add_f64", lg, median_ms([&] { thrust::inclusive_scan_by_key(thrust::device, seg.begin(), seg.end(), d.begin(), d_out.begin()); }), 16);
      thrust::device_vector<uint32_t> perm(n); thrust::sequence(perm.begin(), perm.end());
      thrust::shuffle(perm.begin(), perm.end(), thrust::default_random_engine(7));
      report("gather_f64", lg, median_ms([&] { thrust::gather(thrust::device, perm.begin(), perm.end(), d.begin(), d_out.begin()); }), 20);
      CK(cub::DeviceRadixSort::SortKeys(nullptr, need, k64in, k64out, n)); ensure(need);
      report("sort_u64", lg, median_ms([&] { CK(cub::DeviceRadixSort::SortKeys(tmp, need, k64in, k64out, n)); }), 16);
      CK(cub::DeviceRadixSort::SortPairs(nullptr, need, k64in, k64out, vin, vout, n)); ensure(need);
      report("sort_pairs_u64_u32", lg, median_ms([&] { CK(cub::DeviceRadixSort::SortPairs(tmp, need, k64in, k64out, vin, vout, n)); }), 24);
    }
    {
      // Search, merge and random numbers.
      thrust::device_vector<uint32_t> hay(n), needles(n), pos(n), halves(n), merged(n);
      CK(cub::DeviceRadixSort::SortKeys(nullptr, need, kin, raw(hay), n)); ensure(need);
      CK(cub::DeviceRadixSort::SortKeys(tmp, need, kin, raw(hay), n));
      thrust::transform(cnt, cnt + n, needles.begin(), NeedleHash{});
      report("lower_bound_u32", lg, median_ms([&] {
        thrust::lower_bound(thrust::device, hay.begin(), hay.end(), needles.begin(), needles.end(), pos.begin()); }), 8);
      if (lg == 16) {  // spot check against the host
        std::vector<uint32_t> h(n), q(n), r(n);
        thrust::copy(hay.begin(), hay.end(), h.begin()); thrust::copy(needles.begin(), needles.end(), q.begin());
        thrust::copy(pos.begin(), pos.end(), r.begin());
        for (size_t i = 0; i < n; ++i)
          if (r[i] != uint32_t(std::lower_bound(h.begin(), h.end(), q[i]) - h.begin())) { printf("# check failed: lower_bound_u32 at %zu\n", i); break; }
      }
      size_t half = n / 2;
      CK(cub::DeviceRadixSort::SortKeys(nullptr, need, kin, raw(halves), half)); ensure(need);
      CK(cub::DeviceRadixSort::SortKeys(tmp, need, kin, raw(halves), half));
      CK(cub::DeviceRadixSort::SortKeys(tmp, need, kin + half, raw(halves) + half, n - half));
      report("merge_u32", lg, median_ms([&] {
        thrust::merge(thrust::device, halves.begin(), halves.begin() + half, halves.begin() + half, halves.end(), merged.begin()); }), 8);
      if (!thrust::equal(thrust::device, merged.begin(), merged.end(), hay.begin())) printf("# check failed: merge_u32 n=2^%d\n", lg);
      report("random_uniform_f32", lg, median_ms([&] { CKR(curandGenerateUniform(gen, fout, n)); }), 4);
    }
    {
      // Third round: views, set operations, tuple keys, loops inside element functions.
      thrust::device_vector<uint32_t> perm(n); thrust::sequence(perm.begin(), perm.end());
      thrust::shuffle(perm.begin(), perm.end(), thrust::default_random_engine(7));
      auto pf = thrust::make_permutation_iterator(f.begin(), perm.begin());
      CK(cub::DeviceReduce::Sum(nullptr, need, pf, raw(fsum), n)); ensure(need);
      report("permutation_reduce_f32", lg, median_ms([&] { CK(cub::DeviceReduce::Sum(tmp, need, pf, raw(fsum), n)); }), 8);
      report("adjacent_difference_i32", lg, median_ms([&] {
        thrust::adjacent_difference(thrust::device, ints.begin(), ints.end(), ints_out.begin()); }), 8);
      auto z3 = thrust::make_zip_iterator(thrust::make_tuple(f.begin(), f.begin() + 1, f.begin() + 2));
      report("stencil3_f32", lg, median_ms([&] { thrust::transform(thrust::device, z3, z3 + (n - 2), f_out.begin(), Stencil3{}); }), 8);

      size_t half = n / 2, quarter = n / 4;
      thrust::device_vector<uint32_t> sa(half), sb(half), sout(n);
      CK(cub::DeviceRadixSort::SortKeys(nullptr, need, kin, raw(sa), half)); ensure(need);
      CK(cub::DeviceRadixSort::SortKeys(tmp, need, kin, raw(sa), half));
      CK(cub::DeviceRadixSort::SortKeys(tmp, need, kin + quarter, raw(sb), half));
      size_t n_union = 0, n_inter = 0;
      report("set_union_u32", lg, median_ms([&] {
        n_union = thrust::set_union(thrust::device, sa.begin(), sa.end(), sb.begin(), sb.end(), sout.begin()) - sout.begin(); }), 7);
      report("set_intersection_u32", lg, median_ms([&] {
        n_inter = thrust::set_intersection(thrust::device, sa.begin(), sa.end(), sb.begin(), sb.end(), sout.begin()) - sout.begin(); }), 5);
      if (n_union != 3 * quarter || n_inter != quarter) printf("# check failed: set sizes %zu %zu n=2^%d\n", n_union, n_inter, lg);

      thrust::device_vector<uint32_t> hi(n), lo(n), hi_out(n), lo_out(n);
      thrust::device_vector<uint64_t> packed(n), packed_out(n);
      thrust::transform(keys.begin(), keys.end(), hi.begin(), [] __device__ (uint32_t k) { return k >> 20; });
      thrust::transform(cnt, cnt + n, lo.begin(), [] __device__ (uint32_t i) { return Hash{}(i ^ 0x5bd1e995u); });
      uint32_t* hp = raw(hi); uint32_t* lp = raw(lo); uint32_t* hop = raw(hi_out); uint32_t* lop = raw(lo_out);
      uint64_t* pp = raw(packed); uint64_t* pop = raw(packed_out);
      CK(cub::DeviceRadixSort::SortKeys(nullptr, need, pp, pop, n)); ensure(need);
      report("sort_tuple_u32_u32", lg, median_ms([&] {
        thrust::for_each_n(thrust::device, cnt, n, [=] __device__ (uint32_t i) { pp[i] = (uint64_t(hp[i]) << 32) | lp[i]; });
        CK(cub::DeviceRadixSort::SortKeys(tmp, need, pp, pop, n));
        thrust::for_each_n(thrust::device, cnt, n, [=] __device__ (uint32_t i) { uint64_t v = pop[i]; hop[i] = uint32_t(v >> 32); lop[i] = uint32_t(v); }); }), 16);
      if (lg == 16) {  // spot check against the host
        std::vector<uint32_t> h(n), l(n), ho(n), lo_h(n);
        thrust::copy(hi.begin(), hi.end(), h.begin()); thrust::copy(lo.begin(), lo.end(), l.begin());
        thrust::copy(hi_out.begin(), hi_out.end(), ho.begin()); thrust::copy(lo_out.begin(), lo_out.end(), lo_h.begin());
        std::vector<uint64_t> want(n);
        for (size_t i = 0; i < n; ++i) want[i] = (uint64_t(h[i]) << 32) | l[i];
        std::sort(want.begin(), want.end());
        for (size_t i = 0; i < n; ++i)
          if (ho[i] != uint32_t(want[i] >> 32) || lo_h[i] != uint32_t(want[i])) { printf("# check failed: sort_tuple_u32_u32 at %zu\n", i); break; }
      }

      size_t threads = n / 256;
      unsigned long long hits = 0;
      report("monte_carlo_pi_f32", lg, median_ms([&] {
        hits = thrust::transform_reduce(thrust::device, cnt, cnt + threads, PiSamples{}, 0ull, ::cuda::std::plus<unsigned long long>{}); }), 0);
      printf("# monte_carlo_pi_f32 n=2^%d: pi ~ %.6f (%llu of %zu inside)\n", lg, 4.0 * double(hits) / double(threads * 256), hits, threads * 256);
    }
  }
  CKR(curandDestroyGenerator(gen));
  if (tmp) CK(cudaFree(tmp));
  return 0;
}
