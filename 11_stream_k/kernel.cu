// Step 11 (Hopper) — stream-K: every cluster busy to the end, whatever the number of tiles.
//
// Change from 10: the same warp-specialized persistent kernel (a TMA producer warpgroup, two wgmma
// consumer warpgroups, 128 × 256 block tiles in 2-block clusters that share B by multicast, a staged
// TMA-store epilogue), with a work-centric schedule instead of a tile-centric one.
//   - 10 deals whole tiles to the resident clusters. When the tiles do not fill whole waves, the
//     last wave runs on a few clusters while the others idle; with fewer tiles than clusters, most
//     never work at all. Here the work is counted in iterations (one 64-wide k-slice of one cluster
//     tile) and the iterations of the "split" tiles are dealt out to all clusters: each unit of work
//     is one contiguous range of them, which may begin and end inside a tile (Schedule).
//   - A range that begins or ends inside a tile leaves a partial sum of that tile. Each such
//     partial goes to a workspace slot, and a flag says it is there (stored with release semantics,
//     the launch's number as its value, so that the flags never need resetting). When its range is
//     done, every unit that holds part of a split tile waits for the tile's other partials, adds
//     them up in the order of their k-slices for one share of the tile (16 pieces of 64 × 32 split
//     among the contributors' warpgroups), and writes that share of C: the fixup. The sum of every
//     element is taken in the same order in every run, so results are bitwise reproducible: no
//     atomics, no order that depends on who finishes first.
//   - The rule (Config::decomposition, README.md derives and measures it): whole waves of tiles stay
//     data-parallel (10's schedule, no fixup); each of the r remaining tiles is cut into ⌊clusters /
//     r⌋ equal k-parts, one unit each, aligned across tiles so that the units running at the same
//     time read the same k-slices of A and B (ranges dealt evenly over all the split iterations, as
//     the stream-K paper does, land at scattered k and measured slower here: the variants
//     stream_k_only and hybrid_even); a shape whose saving would not repay the fixup stays
//     data-parallel.
//   - The epilogue is 10's staged one, written per 64 × 32 chunk so that the fixup can write any
//     share of a tile; 10's knob for plain stores is gone.
//
// The workspace (partials and flags) comes from the harness, allocated once per shape, zeroed, and
// sized by workspace_bytes below. Variants (README.md's tables): data-parallel only, split-K in 2
// and 4 parts, the even deal of stream-K for every tile or for all but the whole waves, the fixup
// by one unit alone or always shared, and no clusters. Shapes TMA cannot describe (K or N not a
// multiple of 8) are handed to step 08's kernel.

#include "hopper.cuh"
#include "kernel_utils.cuh"
#include "step.hpp"
#include "swizzle.hpp"
#include "tensor_map.hpp"
#include "watchdog.cuh"

namespace worklog {
namespace {

using namespace hopper;

// How the tiles are divided among the resident clusters (README.md: the arithmetic of waves).
enum class Decomposition {
  hybrid,         // data-parallel for the whole waves, the remaining tiles in aligned k-parts over all units
  hybrid_even,    // data-parallel for the whole waves but one, the rest's slices evenly over the units
  data_parallel,  // whole tiles only: 10's schedule
  stream_k,       // every tile's slices evenly over the units
  split_k,        // every tile's k-slices in Config::split_k equal parts, one unit each
};

// ---- Configuration ------------------------------------------------------------------------------
// One knob a line; README.md says how each value was chosen.
struct Config {
  static constexpr int block_tile_m = 128;        // rows of C per block: one 64-row consumer warpgroup per wgmma_m
  static constexpr int block_tile_n = 256;        // columns of C per block: the n of the widest wgmma, 256
  static constexpr int block_tile_k = 64;         // K per stage: one 128-byte swizzled row of A (64 FP16)
  static constexpr int stages = 4;                // 4 × 48 KiB: three slices in flight while one is multiplied
  static constexpr int group_rows = 8;            // grouped tile order: tile rows per group, as in 07 to 09
  static constexpr int producer_registers = 40;   // after setmaxnreg: the copying thread needs few...
  static constexpr int consumer_registers = 232;  // ...the consumers' 128 accumulators many (see Layout)
  static constexpr int cluster_size = 2;          // blocks on vertically adjacent tiles share each B slice
  static constexpr int c_buffers = 2;             // staging buffers per consumer: one fills while one drains
  static constexpr Decomposition decomposition = Decomposition::hybrid;
  static constexpr int split_k = 1;            // parts per tile, for Decomposition::split_k
  static constexpr int fixup_slices = 16;      // splitting costs a unit about this many k-slices (README.md)
  static constexpr int fixup_alone_units = 2;  // a tile split among this many units or fewer: fixed up by one of them
};

// What the configuration implies, and the checks that name the knob at fault.
template <class Config>
struct Layout : Config {
  static constexpr int consumers = Config::block_tile_m / wgmma_m;  // consumer warpgroups, one per 64 rows
  static constexpr int threads = warpgroup_threads * (1 + consumers);
  static constexpr int a_tile_bytes = Config::block_tile_m * Config::block_tile_k * 2;
  static constexpr int b_box_bytes = Config::block_tile_k * swizzle_halves * 2;  // one TMA box of B: 64 columns
  static constexpr int b_boxes = Config::block_tile_n / swizzle_halves;
  static constexpr int stage_bytes = a_tile_bytes + b_boxes * b_box_bytes;
  static constexpr int warps_per_consumer = warpgroup_threads / 32;
  // The staged write-back: each consumer writes its 64 × 256 FP32 part of C in chunks of 64 rows × 32
  // columns (one 128-byte swizzled row each), through c_buffers buffers of its own.
  static constexpr int c_chunk_cols = swizzle_bytes / sizeof(float);  // 32
  static constexpr int c_chunk_bytes = wgmma_m * swizzle_bytes;       // 8 KiB
  static constexpr int c_staging_bytes = consumers * Config::c_buffers * c_chunk_bytes;
  // The fixup: a consumer's partial sum is its 128 accumulators per thread, 64 × 256 FP32 (64 KiB),
  // stored as float4 (i, thread) at i·128 + thread; a chunk of 32 columns is float4s 4c … 4c+3.
  static constexpr int chunks = wgmma_n / c_chunk_cols;          // 8 chunks per consumer's rows
  static constexpr int pieces = consumers * chunks;              // 16 pieces of 64 × 32 per block tile
  static constexpr int partial_float4s = wgmma_m * wgmma_n / 4;  // 4096: 64 KiB
  // Stages, the C staging buffers, then the 2·stages barriers, plus slack to align the start to a
  // swizzle atom.
  static constexpr int shared_bytes =
      Config::stages * stage_bytes + c_staging_bytes + 2 * Config::stages * 8 + swizzle_atom_bytes;

  static_assert(Config::block_tile_m % wgmma_m == 0 && consumers >= 1 && consumers <= 2,
                "block_tile_m must be 64 or 128: one or two consumer warpgroups of 64 rows");
  static_assert(Config::block_tile_n == wgmma_n, "block_tile_n must be 256, the n of the wgmma used");
  static_assert(Config::block_tile_k == swizzle_halves, "block_tile_k must be 64: one 128-byte swizzled row of A");
  static_assert(Config::stages >= 2, "stages must be at least 2 for copies to overlap products");
  static_assert(shared_bytes <= max_shared_bytes_per_block, "stages × stage_bytes must fit in 227 KiB");
  static_assert(Config::group_rows >= 1, "group_rows must be at least 1 (1: row-major order)");
  static_assert(Config::cluster_size == 1 || Config::cluster_size == 2,
                "cluster_size must be 1 or 2 (blocks sharing B)");
  static_assert(b_boxes % Config::cluster_size == 0, "cluster_size must divide the 4 boxes of a B slice");
  static_assert(Config::c_buffers >= 1, "c_buffers must be at least 1");
  // setmaxnreg moves registers between the warpgroups of a block, within what the block was given
  // at launch: 64 Ki / threads per thread, rounded down to a multiple of 8 (168 for 384 threads). A
  // sum above it leaves the consumers waiting in setmaxnreg.inc forever.
  static constexpr int launch_registers = 65536 / threads / 8 * 8 * threads;
  static_assert(Config::producer_registers * warpgroup_threads +
                        Config::consumer_registers * warpgroup_threads * consumers <=
                    launch_registers,
                "producer_registers and consumer_registers must fit the registers the block gets at launch");
  static_assert(Config::decomposition != Decomposition::split_k || Config::split_k >= 2,
                "split_k must be at least 2 with Decomposition::split_k");
  static_assert(Config::fixup_slices >= 0, "fixup_slices must be at least 0");
  static_assert(Config::fixup_alone_units >= 1, "fixup_alone_units must be at least 1 (1: every split tile shared)");
};

// ---- The schedule ---------------------------------------------------------------------------------
// The work is T cluster tiles × k_tiles slices. Tiles [0, sk_tiles) are "split": their iterations
// (tile · k_tiles + slice) are cut into `units` contiguous ranges, unit u's being [begin(u),
// begin(u + 1)): either `split` parts of each tile, or all of them dealt evenly. Cluster c of
// `clusters` walks units c, c + clusters, … (at most one with the step's rule), then the whole
// tiles sk_tiles + c, + clusters, … in 10's grouped order. The host fills it in (plan_schedule);
// producer and consumers walk it alike (Walk).
struct Schedule {
  long long tiles;     // cluster tiles of C
  int k_tiles;         // 64-wide k-slices per tile
  long long sk_tiles;  // tiles [0, sk_tiles) are split by the units' ranges
  int units;           // ranges over the split tiles' iterations (0: every tile whole)
  int split;           // parts per split tile (units = sk_tiles · split); 0: the iterations evenly over the units
  long long q;         // iterations per unit (split: per part)...
  int rem;             // ...and how many units (split: parts of a tile) take one more
  int slots_per_unit;  // partial sums a unit can leave: 1 in parts, 2 dealt evenly (the tiles a range begins and ends
                       // in)
  int alone_units;     // Config::fixup_alone_units
  unsigned epoch;      // this launch's number: the value its flags are set to
  float4* partials;    // workspace: one 64 KiB partial per (slot, block of the cluster, consumer)
  unsigned* flags;     // workspace: one flag per partial

  // The first iteration of unit u's range; begin(units) is the end of the last one.
  __host__ __device__ long long begin(int u) const {
    long long first = 0;
    // LAB BEGIN: Set first to the first iteration of unit u's range: q iterations to each unit, one more to
    // LAB: each of the first rem. Without parts (split 0) over all the split tiles' iterations; with them, unit u
    // LAB: is part u % split of tile u / split, dealt the same way over that tile's k_tiles slices.
    if (split > 0) {
      const int part = u % split;
      first = (long long)(u / split) * k_tiles + part * q + (part < rem ? part : rem);
    } else {
      first = u * q + (u < rem ? u : rem);
    }
    // LAB END
    return first;
  }
  // The unit whose range holds iteration x: begin() inverted. The first rem units (parts of a tile)
  // take q + 1 iterations, the others q. In 32 bits, as the walk (plan_schedule checks that every
  // iteration number fits): the fixup asks this of every tile it touches, and a search, or a 64-bit
  // division, there cost whole microseconds per launch (README.md).
  __host__ __device__ int unit_of(long long x) const {
    const int per_unit = int(q), longer = rem * (per_unit + 1);  // iterations of the first rem units
    int offset = int(x), first = 0;
    if (split > 0) {
      const int tile = offset / k_tiles;
      offset -= tile * k_tiles;
      first = tile * split;
    }
    return first + (offset < longer ? offset / (per_unit + 1) : rem + (offset - longer) / per_unit);
  }
  // The slot of unit u's partial sum of the tile whose slices it takes from k_begin on: a part has
  // one; a range dealt evenly one for the tile it begins inside (k_begin > 0), one for the tile it
  // ends inside.
  __host__ __device__ int slot(int u, int k_begin) const {
    return slots_per_unit == 1 ? u : 2 * u + (k_begin == 0 ? 1 : 0);
  }
  // The units holding part of `tile`, in the order of their k-slices: first … last.
  __host__ __device__ int first_unit(long long tile) const { return unit_of(tile * k_tiles); }
  __host__ __device__ int last_unit(long long tile) const { return unit_of((tile + 1) * k_tiles - 1); }
  // The slot of unit v's partial of `tile`.
  __host__ __device__ int slot_in(int v, long long tile) const {
    const long long first = begin(v), tile_first = tile * k_tiles;
    return slot(v, int((first > tile_first ? first : tile_first) - tile_first));
  }
  // How a split tile is fixed up: by the unit holding its slice 0 alone, when few units hold part
  // of it (that unit keeps its own sum in registers and adds the others' partials); else shared by
  // all of them, each adding up and writing a share of the tile's pieces.
  __host__ __device__ bool fixed_up_alone(long long tile) const {
    return last_unit(tile) - first_unit(tile) + 1 <= alone_units;
  }
  // The split tiles whose fixup unit u shares once its range is done: the tile the range begins in
  // and the one it ends in, each if other units hold part of it and it is not fixed up alone (-1: none).
  __host__ __device__ void tiles_to_share(int u, long long& first, long long& last) const {
    const long long first_tile = int(begin(u)) / k_tiles, last_tile = int(begin(u + 1) - 1) / k_tiles;
    first = first_unit(first_tile) != last_unit(first_tile) && !fixed_up_alone(first_tile) ? first_tile : -1;
    last = last_tile != first_tile && last_unit(last_tile) != u && !fixed_up_alone(last_tile) ? last_tile : -1;
  }
  // The pieces [first, end) of split tile `tile` that consumer warpgroup `consumer` of unit u adds
  // up and writes: the tile's `pieces` dealt out evenly over its units' `consumers` warpgroups each.
  __host__ __device__ void share(int u, long long tile, int consumer, int consumers, int pieces, int& first,
                                 int& end) const {
    const int c0 = first_unit(tile), shares = (last_unit(tile) - c0 + 1) * consumers;
    const int index = (u - c0) * consumers + consumer;
    first = pieces * index / shares;
    end = pieces * (index + 1) / shares;
  }
};

// One piece of work: slices [k_begin, k_end) of a tile; `unit` is the range it belongs to (-1 for
// a whole tile of the data-parallel part), ends_range when it is the range's last. Tiles and
// iterations are counted in 32 bits here (plan_schedule checks that tiles · k_tiles fits): the
// producer walks with 40 registers, and 64-bit counters cost it a spill and 64-bit divisions.
struct Segment {
  int tile;
  int k_begin, k_end;
  int unit;
  bool ends_range;
};

// Cluster `cluster`'s segments, in order: the pieces of its units' ranges, cut at tile boundaries,
// then its whole tiles.
class Walk {
 public:
  __host__ __device__ Walk(const Schedule& s, int cluster, int clusters)
      : s_(s), clusters_(clusters), unit_(cluster), whole_tile_(int(s.sk_tiles) + cluster) {
    enter_unit();
  }
  __host__ __device__ bool next(Segment& segment) {
    if (unit_ < s_.units) {
      const int tile = iteration_ / s_.k_tiles;
      const int k_begin = iteration_ - tile * s_.k_tiles;
      const int left = end_ - iteration_;
      const int k_end = left < s_.k_tiles - k_begin ? k_begin + left : s_.k_tiles;
      segment = {tile, k_begin, k_end, unit_, false};
      iteration_ += k_end - k_begin;
      if (iteration_ == end_) {
        segment.ends_range = true;
        unit_ += clusters_;
        enter_unit();
      }
      return true;
    }
    if (whole_tile_ < s_.tiles) {
      segment = {whole_tile_, 0, s_.k_tiles, -1, false};
      whole_tile_ += clusters_;
      return true;
    }
    return false;
  }

 private:
  // The range of unit_ or, if it is empty, of the next of this cluster's units that is not.
  __host__ __device__ void enter_unit() {
    for (; unit_ < s_.units; unit_ += clusters_) {
      iteration_ = int(s_.begin(unit_));
      end_ = int(s_.begin(unit_ + 1));
      if (iteration_ < end_) return;
    }
  }
  const Schedule& s_;
  int clusters_, unit_;
  int whole_tile_, iteration_ = 0, end_ = 0;  // < tiles · k_tiles + clusters: 32 bits (plan_schedule)
};

// ---- Descriptors ----------------------------------------------------------------------------------

// A shared-memory matrix descriptor for a tile stored with the 128-byte swizzle that TMA wrote
// (hopper.cuh: rows of 128 bytes in 1024-byte atoms, which must start 1024-byte aligned). Fields,
// in 16-byte units: start address (bits 0-13), leading-dimension byte offset (16-29),
// stride-dimension byte offset (32-45); swizzle mode 1 = 128 B (bits 62-63). What the two offsets
// mean depends on the operand's major-ness (README.md):
//   K-major (A here):  stride = 1024 B from one 8-row group to the next; leading unused (set to 1).
//   MN-major (B here): stride = 1024 B from one group of 8 k-rows to the next; leading = bytes from
//                      one 64-element-wide column block to the next.
__device__ __forceinline__ std::uint64_t matrix_descriptor(const void* tile, std::uint32_t leading_bytes,
                                                           std::uint32_t stride_bytes) {
  return std::uint64_t((shared_address(tile) & 0x3FFFF) >> 4) | std::uint64_t((leading_bytes >> 4) & 0x3FFF) << 16 |
         std::uint64_t((stride_bytes >> 4) & 0x3FFF) << 32 | std::uint64_t(1) << 62;
}

// Issues the products of one stage for one consumer warpgroup: block_tile_k / 16 wgmma.m64n256k16,
// each this warpgroup's 64 rows of the A tile (K-major, 128-byte swizzled rows of 64 k) times 16 rows
// of the B tile (MN-major: 64-column boxes of 128-byte rows, b_box_bytes apart), into acc. The
// caller commits the group and waits for it.
template <int block_tile_k, int b_box_bytes>
__device__ __forceinline__ void multiply_stage(float (&acc)[128], const unsigned char* a_tile,
                                               const unsigned char* b_tile, int consumer) {
  wgmma_fence();
  fence_registers(acc);
#pragma unroll
  for (int kk = 0; kk < block_tile_k / wgmma_k; ++kk) {
    // A: this consumer's 64 rows (64 · 128 bytes further), k-step kk 32 bytes into each row; the
    // leading offset is unused with this swizzle, the stride is one 8-row atom.
    const std::uint64_t a_desc =
        matrix_descriptor(a_tile + consumer * wgmma_m * swizzle_bytes + kk * wgmma_k * 2, 16, swizzle_atom_bytes);
    // B: k-step kk starts 16 rows of 128 bytes further; the leading offset is the distance from one
    // 64-column box to the next, the stride one atom of 8 k-rows.
    const std::uint64_t b_desc =
        matrix_descriptor(b_tile + kk * wgmma_k * swizzle_bytes, b_box_bytes, swizzle_atom_bytes);
    wgmma_m64n256k16(acc, a_desc, b_desc);
  }
}

// ---- Write back -----------------------------------------------------------------------------------

// Writes one 64 × 32 chunk of C's values, alpha·v + beta·C (rows row0 … +63, columns col0 … +31),
// into a swizzled staging buffer. v is in wgmma's accumulator layout for 4 groups of 8 columns: warp
// w of the warpgroup holds rows 16w … 16w+15; in group jj, lane l holds columns 8jj + 2(l % 4) + {0,
// 1} of row 16w + l/4 (v[4jj], v[4jj+1]) and of the row 8 below (v[4jj+2], v[4jj+3]). reads_c
// (beta ≠ 0) is a template parameter so that the usual beta = 0 pays nothing for C: no 64-bit
// addresses, bounds or predicated loads, only the products and the stores into the buffer.
template <class L, bool reads_c>
__device__ __forceinline__ void stage_chunk(const float (&v)[16], const GemmProblem<__half>& p, unsigned char* buffer,
                                            long long row0, long long col0) {
  const int t = threadIdx.x % warpgroup_threads, warp = t / 32, lane = t % 32;
#pragma unroll
  for (int jj = 0; jj < L::c_chunk_cols / 8; ++jj) {
#pragma unroll
    for (int half = 0; half < 2; ++half) {
      const int row = warp * 16 + lane / 4 + half * 8, col = jj * 8 + 2 * (lane % 4);
      float2 value = make_float2(p.alpha * v[4 * jj + 2 * half], p.alpha * v[4 * jj + 2 * half + 1]);
      if constexpr (reads_c) {
        const long long c_row = row0 + row, c_col = col0 + col;
        if (c_row < p.m && c_col < p.n) {  // N even: c_col + 1 < N too
          const float2 old = *reinterpret_cast<const float2*>(p.c + c_row * p.n + c_col);
          value.x += p.beta * old.x;
          value.y += p.beta * old.y;
        }
      }
      // The 128-byte swizzle TMA expects (hopper.cuh): 16-byte chunk k of row r at chunk k ^ (r % 8).
      const int byte = col * 4;
      const int swizzled = swizzled_chunk(row, byte / 16, swizzle_bytes / 16) * 16 + byte % 16;
      *reinterpret_cast<float2*>(buffer + row * swizzle_bytes + swizzled) = value;
    }
  }
}

// The staged write-back of one 64 × 32 chunk of C (rows row0 … +63, columns col0 … +31): alpha·v +
// beta·C (beta == 0: C is not read). The chunk goes into one of the warpgroup's c_buffers swizzled
// buffers with ordinary stores, then one thread hands it to the copy engine (TMA store), which
// writes only what lies inside C. The warpgroup does not wait for the global writes: they drain
// while it goes on. A buffer is reused only once the store issued from it c_buffers chunks earlier
// has finished reading it (`stored` counts the chunks).
template <class L>
__device__ __forceinline__ void store_chunk_staged(const float (&v)[16], const GemmProblem<__half>& p,
                                                   const CUtensorMap& c_map, unsigned char* buffers, unsigned& stored,
                                                   int warpgroup_barrier, long long row0, long long col0) {
  const bool elected = threadIdx.x % warpgroup_threads == 0;
  unsigned char* buffer = buffers + (stored % L::c_buffers) * L::c_chunk_bytes;
  if (elected) bulk_store_wait_read<L::c_buffers - 1>();
  named_barrier_sync<warpgroup_threads>(warpgroup_barrier);  // the buffer is free for every thread
  // Two copies of the loop, one per case, chosen once per chunk (10's compiler made the same split
  // by itself in its loop over the chunks of a tile; this function, called per chunk, it kept whole,
  // with a load of C to predicate off for each of the thread's 8 pairs of values).
  if (p.beta != 0.0f)
    stage_chunk<L, true>(v, p, buffer, row0, col0);
  else
    stage_chunk<L, false>(v, p, buffer, row0, col0);
  fence_proxy_async_shared();  // these ordinary stores, then the copy engine reads them
  named_barrier_sync<warpgroup_threads>(warpgroup_barrier);
  if (elected) {
    tma_store_2d(c_map, buffer, int(col0), int(row0));
    bulk_store_commit();
  }
  ++stored;
}

// One consumer's whole 64 × 256 result (rows row0 … +63, columns col0 … +255), chunk by chunk.
template <class L>
__device__ __forceinline__ void store_accumulators_staged(const float (&acc)[128], const GemmProblem<__half>& p,
                                                          const CUtensorMap& c_map, unsigned char* buffers,
                                                          unsigned& stored, int consumer, long long row0,
                                                          long long col0) {
#pragma unroll
  for (int chunk = 0; chunk < L::chunks; ++chunk) {
    float v[16];
#pragma unroll
    for (int i = 0; i < 16; ++i) v[i] = acc[16 * chunk + i];
    store_chunk_staged<L>(v, p, c_map, buffers, stored, 1 + consumer, row0, col0 + chunk * L::c_chunk_cols);
  }
}

// ---- The fixup ------------------------------------------------------------------------------------

// Stores one consumer's accumulators as a partial sum: float4 i of thread t at i·128 + t, so that
// each of the 32 stores of the warpgroup is 2 KiB contiguous. L2 only (__stcg): another SM reads it.
__device__ __forceinline__ void store_partial(const float (&acc)[128], float4* partial) {
  const int t = threadIdx.x % warpgroup_threads;
#pragma unroll
  for (int i = 0; i < 32; ++i)
    __stcg(partial + i * warpgroup_threads + t,
           make_float4(acc[4 * i], acc[4 * i + 1], acc[4 * i + 2], acc[4 * i + 3]));
}

// What the watchdog says when a wait never ends (watchdog.cuh).
struct FullWait {
  static constexpr WaitSite site{
      "11_stream_k", "consumer", "full",
      "no copy arrived: are the stage's bytes announced (mbarrier_arrive_expect_bytes) and its "
      "TMA boxes issued?"};
};
struct EmptyWait {
  static constexpr WaitSite site{
      "11_stream_k", "producer", "empty",
      "the stage was never released: does one lane of every consumer warp of the cluster arrive on empty[s] of "
      "every block, as its count at init says?"};
};
struct FlagWait {
  static constexpr WaitSite site{
      "11_stream_k", "consumer", "flags",
      "a partial sum was never published: do writer and reader compute the same slot (Schedule::slot), "
      "does every unit publish its partials before it waits for others', are all clusters resident?"};
};

// Where the partial of (slot, block `rank` of the cluster, consumer `half`) and its flag live.
template <class L>
__device__ __forceinline__ int partial_index(int slot, std::uint32_t rank, int half) {
  return (slot * L::cluster_size + int(rank)) * L::consumers + half;
}

// ---- The kernel -----------------------------------------------------------------------------------

template <class Config>
__global__ void __launch_bounds__(Layout<Config>::threads, 1)
    stream_k_gemm(const __grid_constant__ CUtensorMap a_map, const __grid_constant__ CUtensorMap b_map,
                  const __grid_constant__ CUtensorMap c_map, const __grid_constant__ GemmProblem<__half> p,
                  const __grid_constant__ Schedule s) {
  using L = Layout<Config>;
  constexpr int block_tile_m = L::block_tile_m, block_tile_n = L::block_tile_n, block_tile_k = L::block_tile_k;
  constexpr int stages = L::stages, cluster_size = L::cluster_size;
  extern __shared__ unsigned char shared_raw[];
  // Swizzle atoms must be 1024-byte aligned: round the dynamic shared memory's start up.
  unsigned char* shared =
      reinterpret_cast<unsigned char*>((reinterpret_cast<std::uintptr_t>(shared_raw) + swizzle_atom_bytes - 1) &
                                       ~std::uintptr_t(swizzle_atom_bytes - 1));
  auto a_tile = [&](int stage) { return shared + stage * L::stage_bytes; };
  auto b_tile = [&](int stage) { return shared + stage * L::stage_bytes + L::a_tile_bytes; };
  unsigned char* c_staging = shared + stages * L::stage_bytes;  // 1024-byte aligned, as the swizzle needs
  std::uint64_t* full = reinterpret_cast<std::uint64_t*>(c_staging + L::c_staging_bytes);
  std::uint64_t* empty = full + stages;

  // A cluster computes a "cluster tile" of cluster_size block tiles stacked vertically, and walks
  // the schedule's segments (both blocks of a cluster the same ones: they share copies), even where
  // one of them lies below C. Tile t is the t-th in grouped order.
  const std::uint32_t rank = cluster_size > 1 ? cluster_rank() : 0;
  const int tiles_m = int(ceil_div(p.m, block_tile_m)), tiles_n = int(ceil_div(p.n, block_tile_n));
  const int cluster_rows = int(ceil_div(tiles_m, cluster_size));
  const int cluster = blockIdx.x / cluster_size, clusters = gridDim.x / cluster_size;
  auto tile_origin = [&](long long t) {
    const TileIndex tile = grouped_tile(t, cluster_rows, tiles_n, L::group_rows);
    return TileOrigin{(long long)(tile.row * cluster_size + int(rank)) * block_tile_m,
                      (long long)tile.col * block_tile_n};
  };

  if (threadIdx.x == 0) {
    for (int stage = 0; stage < stages; ++stage) {
      mbarrier_init(&full[stage], 1);  // the local producer's arrive, plus the bytes of every copy into us
      mbarrier_init(&empty[stage],
                    L::consumers * L::warps_per_consumer * cluster_size);  // every consumer warp of the cluster
    }
    fence_barrier_init();
  }
  // No block may copy into, or arrive on, a peer's barriers before the peer has initialized them.
  if constexpr (cluster_size > 1) {
    cluster_arrive();
    cluster_wait();
  } else {
    __syncthreads();
  }

  const int warpgroup = threadIdx.x / warpgroup_threads;
  if (warpgroup == 0) {
    // ---- Producer: copies for every segment of the walk, `stages` slices ahead of the consumers ---
    setmaxnreg_decrease<Config::producer_registers>();
    if (threadIdx.x == 0) {
      int slice = 0;  // slices copied so far, over all segments: stage = slice % stages
      Segment segment;
      for (Walk walk(s, cluster, clusters); walk.next(segment);) {
        const TileOrigin origin = tile_origin(segment.tile);
        for (int kt = segment.k_begin; kt < segment.k_end; ++kt, ++slice) {
          const int stage = slice % stages, use = slice / stages;
          // First use: parity 1 counts as complete.
          mbarrier_wait<EmptyWait>(&empty[stage], (use & 1) ^ 1, stage);
          const int k0 = kt * block_tile_k;
          // Arm full[stage] for the whole stage (every byte lands here, the peer's multicast included),
          // copy this block's A box, then its share of the B slice, multicast to the cluster.
          mbarrier_arrive_expect_bytes(&full[stage], L::stage_bytes);
          tma_load_2d(a_tile(stage), a_map, &full[stage], k0, int(origin.row));
          // This block's boxes are rank·boxes … +boxes−1. The loop counts them from 0: a constant
          // trip count, fully unrolled. With bounds that depend on rank (10's form), the loop's end
          // was one more value kept across the whole walk, which the producer's 40 registers did not
          // hold: ptxas spilled it and reloaded it (LDL) in every slice.
          constexpr int boxes = L::b_boxes / cluster_size;  // per block
#pragma unroll
          for (int box = 0; box < boxes; ++box) {
            const int j = int(rank) * boxes + box;
            if constexpr (cluster_size > 1)
              tma_load_2d_multicast(b_tile(stage) + j * L::b_box_bytes, b_map, &full[stage],
                                    int(origin.col) + j * swizzle_halves, k0, std::uint16_t((1u << cluster_size) - 1u));
            else
              tma_load_2d(b_tile(stage) + j * L::b_box_bytes, b_map, &full[stage], int(origin.col) + j * swizzle_halves,
                          k0);
          }
        }
      }
    }
  } else {
    // ---- Consumers: for each segment, the K loop of step 09, then the write-back or the fixup -----
    setmaxnreg_increase<Config::consumer_registers>();
    const int consumer = warpgroup - 1;  // rows consumer·64 … +63 of the block tile
    const int t = threadIdx.x % warpgroup_threads, lane = threadIdx.x % 32;
    const int barrier = 1 + consumer;  // this warpgroup's named barrier
    unsigned char* buffers = c_staging + consumer * L::c_buffers * L::c_chunk_bytes;
    // A stage is released by one lane per consumer warp, on the empty barrier of every block of the
    // cluster (its own included): the producers of all of them write into this stage.
    auto release = [&](int stage) {
      if (lane == 0) {
        if constexpr (cluster_size > 1) {
#pragma unroll
          for (int r = 0; r < cluster_size; ++r) mbarrier_arrive_in_block(&empty[stage], r);
        } else {
          mbarrier_arrive(&empty[stage]);
        }
      }
    };
    auto partial = [&](int slot, int half) {
      return s.partials + partial_index<L>(slot, rank, half) * L::partial_float4s;
    };
    auto flag = [&](int slot, int half) { return s.flags + partial_index<L>(slot, rank, half); };
    // Publishes this consumer's partials stored since the last call (`pending`, bit b: the unit's
    // slot of type b, Schedule::slot): every thread's stores, then the flags (release).
    auto publish = [&](int u, int& pending) {
      if (pending == 0) return;
      named_barrier_sync<warpgroup_threads>(barrier);
      if (t == 0)
        for (int type = 0; type < 2; ++type)
          if (pending & (1 << type)) store_release_gpu(flag(s.slot(u, 1) + type, consumer), s.epoch);
      pending = 0;
    };

    // The shared fixup of split tile `tile` by unit u: the tile's contributors are units c0 … c1, in
    // the order of their k-slices; their 2·n consumer warpgroups share out its 16 pieces, and each
    // adds up the n partials of its pieces, in that order, and writes them to C.
    auto fix_up_share = [&](int u, long long tile, unsigned& stored) {
      const int c0 = s.first_unit(tile), c1 = s.last_unit(tile), n = c1 - c0 + 1;
      int first_piece, end_piece;
      s.share(u, tile, consumer, L::consumers, L::pieces, first_piece, end_piece);
      if (first_piece == end_piece) return;
      // Every partial of the tile must be there: its flags, waited for by parallel threads.
      for (int i = t; i < n * L::consumers; i += warpgroup_threads) {
        const int v = c0 + i / L::consumers, slot = s.slot_in(v, tile);
        flag_wait<FlagWait>(flag(slot, i % L::consumers), s.epoch, slot);
      }
      named_barrier_sync<warpgroup_threads>(barrier);
      const TileOrigin origin = tile_origin(tile);
      for (int piece = first_piece; piece < end_piece; ++piece) {
        const int half = piece / L::chunks, chunk = piece % L::chunks;
        float sum[16];
#pragma unroll
        for (int i = 0; i < 16; ++i) sum[i] = 0.0f;
        // LAB BEGIN: Add up the piece (rows of consumer `half`, columns 32·chunk … +31) into sum: the partials
        // LAB: of units c0 … c1, in that order (s.slot_in gives each one's slot, partial() its address), each
        // LAB: thread reading its float4s 4·chunk … 4·chunk + 3 (at i·128 + t) with __ldcg.
        for (int v0 = c0; v0 <= c1; v0 += 2) {  // 2 partials' loads in flight, then their sums in order
          float4 part[2][4];
#pragma unroll
          for (int b = 0; b < 2; ++b) {
            if (v0 + b > c1) break;
            const float4* source = partial(s.slot_in(v0 + b, tile), half) + 4 * chunk * warpgroup_threads + t;
#pragma unroll
            for (int i = 0; i < 4; ++i) part[b][i] = __ldcg(source + i * warpgroup_threads);
          }
#pragma unroll
          for (int b = 0; b < 2; ++b) {
            if (v0 + b > c1) break;
#pragma unroll
            for (int i = 0; i < 4; ++i) {
              sum[4 * i] += part[b][i].x;
              sum[4 * i + 1] += part[b][i].y;
              sum[4 * i + 2] += part[b][i].z;
              sum[4 * i + 3] += part[b][i].w;
            }
          }
        }
        // LAB END
        store_chunk_staged<L>(sum, p, c_map, buffers, stored, barrier, origin.row + half * wgmma_m,
                              origin.col + chunk * L::c_chunk_cols);
      }
    };

    // The fixup by one unit alone: unit u holds slice 0 of `tile` and adds the partials of the units
    // after it, in order, to its own accumulators.
    auto fix_up_alone = [&](int u, long long tile, float(&acc)[128]) {
      const int c1 = s.last_unit(tile);
      for (int i = t; i < c1 - u; i += warpgroup_threads) {
        const int v = u + 1 + i, slot = s.slot_in(v, tile);
        flag_wait<FlagWait>(flag(slot, consumer), s.epoch, slot);
      }
      named_barrier_sync<warpgroup_threads>(barrier);
      for (int v = u + 1; v <= c1; ++v) {
        const float4* source = partial(s.slot_in(v, tile), consumer) + t;
#pragma unroll
        for (int group = 0; group < 4; ++group) {  // 8 loads in flight, then their sums
          float4 part[8];
#pragma unroll
          for (int i = 0; i < 8; ++i) part[i] = __ldcg(source + (8 * group + i) * warpgroup_threads);
#pragma unroll
          for (int i = 0; i < 8; ++i) {
            const int a = 4 * (8 * group + i);
            acc[a] += part[i].x;
            acc[a + 1] += part[i].y;
            acc[a + 2] += part[i].z;
            acc[a + 3] += part[i].w;
          }
        }
      }
    };

    int slice = 0;
    unsigned stored = 0;  // chunks written through the staging buffers (unsigned: % c_buffers without a sign fix)
    int pending = 0;      // partials of the current unit not yet published (publish)
    float acc[128];
    Segment segment;
    for (Walk walk(s, cluster, clusters); walk.next(segment);) {
      const TileOrigin origin = tile_origin(segment.tile);
#pragma unroll
      for (int i = 0; i < 128; ++i) acc[i] = 0.0f;
      for (int kt = segment.k_begin; kt < segment.k_end; ++kt, ++slice) {
        const int stage = slice % stages, use = slice / stages;
        mbarrier_wait<FullWait>(&full[stage], use & 1, stage);
        multiply_stage<block_tile_k, L::b_box_bytes>(acc, a_tile(stage), b_tile(stage), consumer);
        wgmma_commit_group();
        wgmma_wait_group<1>();  // the previous slice's products are done: release its stage
        fence_registers(acc);
        if (kt > segment.k_begin) release((slice - 1) % stages);
      }
      wgmma_wait_group<0>();
      fence_registers(acc);
      release((slice - 1) % stages);  // the segment's last slice; the producer is already on the next

      const long long row0 = origin.row + consumer * wgmma_m;
      if (segment.k_begin == 0 && segment.k_end == s.k_tiles) {
        // A whole tile: alpha·acc + beta·C, only inside C.
        store_accumulators_staged<L>(acc, p, c_map, buffers, stored, consumer, row0, origin.col);
      } else if (segment.k_begin == 0 && s.fixed_up_alone(segment.tile)) {
        // This unit holds slice 0 of a tile that few units share, and its range ends here: it
        // publishes what it left for others (before waiting, so that no unit waits on a waiting
        // one), adds the others' partials to its sum, and writes the tile.
        publish(segment.unit, pending);
        fix_up_alone(segment.unit, segment.tile, acc);
        store_accumulators_staged<L>(acc, p, c_map, buffers, stored, consumer, row0, origin.col);
      } else {
        // Part of a split tile: the partial goes to the workspace, published when the range ends
        // (the stores drain meanwhile; nobody reads it earlier).
        const int slot = s.slot(segment.unit, segment.k_begin);
        store_partial(acc, partial(slot, consumer));
        pending |= 1 << (slot - s.slot(segment.unit, 1));
      }
      if (segment.ends_range) {
        // The range is done: publish, then share the fixup of the split tiles it began or ended in.
        publish(segment.unit, pending);
        long long first, last;
        s.tiles_to_share(segment.unit, first, last);
#pragma unroll 1
        for (int i = 0; i < 2; ++i) {
          const long long tile = i == 0 ? first : last;
          if (tile >= 0) fix_up_share(segment.unit, tile, stored);
        }
      }
    }
    // The block's shared memory must outlive the copy engine's reads of it.
    if (t == 0) bulk_store_wait_all();
  }

  // No block may leave while a peer can still copy into its shared memory or arrive on its barriers.
  if constexpr (cluster_size > 1) {
    cluster_arrive();
    cluster_wait();
  }
}

// ---- Launch -----------------------------------------------------------------------------------------

// Shapes TMA cannot describe go to this step's kernel instead.
constexpr const char* unaligned_fallback = "08_mma_ldmatrix";

// TMA needs A's and B's base and row stride 16-byte aligned (K and N multiples of 8), and so does
// the TMA store of C (N a multiple of 8 makes its rows 32-byte aligned; its base must be 16-byte aligned).
bool tma_path_possible(const GemmProblem<__half>& p) {
  return tma_describable(p.a, p.k) && tma_describable(p.b, p.n) && reinterpret_cast<std::uintptr_t>(p.c) % 16 == 0;
}

template <class Variant>
cudaLaunchConfig_t launch_configuration(cudaLaunchAttribute& cluster, cudaStream_t stream) {
  using L = Layout<Variant>;
  cudaLaunchConfig_t config{};
  cluster.id = cudaLaunchAttributeClusterDimension;
  cluster.val.clusterDim.x = L::cluster_size;
  cluster.val.clusterDim.y = 1;
  cluster.val.clusterDim.z = 1;
  config.blockDim = dim3(L::threads);
  config.dynamicSmemBytes = L::shared_bytes;
  config.stream = stream;
  config.attrs = &cluster;
  config.numAttrs = 1;
  return config;
}

// As many clusters as can be resident at once (read from the device: SM count, and how clusters fit
// into its GPCs). Every unit must be resident: a unit waits for others' partials.
template <class Variant>
int resident_clusters() {
  static const int count = [] {
    using L = Layout<Variant>;
    constexpr auto kernel = stream_k_gemm<Variant>;
    allow_dynamic_shared_memory<kernel>(L::shared_bytes);
    cudaLaunchAttribute cluster{};
    cudaLaunchConfig_t config = launch_configuration<Variant>(cluster, 0);
    config.gridDim = dim3(L::cluster_size);
    int clusters = 0;
    CUDA_CHECK(cudaOccupancyMaxActiveClusters(&clusters, kernel, &config));
    if (clusters < 1) throw std::runtime_error("no cluster of this kernel fits on the GPU");
    return clusters;
  }();
  return count;
}

// Which tiles are split, and how: sk_tiles (the first, in grouped order), each in `split` parts of
// its k-slices, or (split 0) with all their iterations dealt evenly over the units.
struct Division {
  long long sk_tiles;
  int split;
};

// The decomposition rule (README.md derives and measures it). T tiles on G resident clusters,
// T = w·G + r, k slices per tile. Data-parallel, the last wave keeps r clusters busy for k slices
// while G − r idle. Cutting each of the r tiles into s = ⌊G / r⌋ equal k-parts gives r·s ≤ G units
// of ⌈k / s⌉ slices: the last wave shrinks to ⌈k / s⌉ slices plus a fixup, which costs about
// fixup_slices. So: r = 0, s < 2, or a saving k − ⌈k / s⌉ no larger than fixup_slices: every tile
// whole. The parts are aligned (part p of every split tile covers the same slices), so that the units
// running at the same moment read the same k-slices of A and B, as whole tiles do.
template <class Variant>
Division divide(long long tiles, int k_tiles, int clusters) {
  const long long waves = tiles / clusters, remainder = tiles % clusters;
  constexpr long long fixup = Variant::fixup_slices;
  switch (Variant::decomposition) {
    case Decomposition::data_parallel:
      return {0, 0};
    case Decomposition::stream_k:
      return {tiles, 0};
    case Decomposition::split_k:
      return {tiles, std::min(Variant::split_k, k_tiles)};
    case Decomposition::hybrid_even:
      // The rule first tried: the r remaining tiles plus one full wave, their iterations evenly over
      // the G units (each between one and two tiles' worth), when that saves k·(G − r)/G slices.
      if (remainder == 0 || k_tiles * (clusters - remainder) <= fixup * clusters) return {0, 0};
      return {waves >= 1 ? remainder + clusters : remainder, 0};
    case Decomposition::hybrid:
      break;
  }
  if (remainder == 0) return {0, 0};
  const int parts = int(std::min<long long>(clusters / remainder, k_tiles));
  if (parts < 2 || k_tiles - ceil_div(k_tiles, parts) <= fixup) return {0, 0};
  return {remainder, parts};
}

// The schedule of a shape (without its workspace pointers and epoch), the clusters to launch and the
// workspace it needs.
struct Plan {
  Schedule schedule;
  int clusters;
  std::size_t partial_bytes, flag_bytes;
};

template <class Variant>
Plan plan_schedule(int m, int n, int k, int resident) {
  using L = Layout<Variant>;
  Schedule s{};
  const long long tiles_m = ceil_div(m, L::block_tile_m), tiles_n = ceil_div(n, L::block_tile_n);
  s.tiles = ceil_div(tiles_m, L::cluster_size) * tiles_n;
  s.k_tiles = int(ceil_div(k, L::block_tile_k));
  // The walk counts tiles and iterations in 32 bits (Walk). Beyond that, M·N·K ≥ 2^53: A, B and C
  // of such a shape take at least 300 GB.
  if (s.tiles * s.k_tiles + resident > 2147483647LL)
    throw std::length_error("11_stream_k: more than 2^31 tile iterations");
  const Division division = divide<Variant>(s.tiles, s.k_tiles, resident);
  s.sk_tiles = division.sk_tiles;
  const long long iterations = s.sk_tiles * s.k_tiles;
  if (division.split > 0) {  // every part at least one slice (split ≤ k_tiles)
    s.split = division.split;
    if (s.sk_tiles * s.split > 2147483647LL / 2) throw std::length_error("too many tiles for split-K");
    s.units = int(s.sk_tiles * s.split);
    s.q = s.k_tiles / s.split;
    s.rem = s.k_tiles % s.split;
    s.slots_per_unit = 1;  // a part lies inside one tile
  } else if (s.sk_tiles > 0) {
    s.units = int(std::min<long long>(resident, iterations));  // every unit at least one iteration
    s.q = iterations / s.units;
    s.rem = int(iterations % s.units);
    s.slots_per_unit = 2;
  }
  s.alone_units = Variant::fixup_alone_units;
  Plan plan{};
  plan.clusters = int(std::min<long long>(resident, std::max<long long>(s.units, s.tiles - s.sk_tiles)));
  // A unit waits for the other parts of its tile, which may come in a later round of units: that
  // cannot deadlock while at least `split` clusters run (README.md).
  if (s.split > 0 && plan.clusters < s.split) throw std::runtime_error("fewer resident clusters than split-K parts");
  const std::size_t partials = std::size_t(s.units) * s.slots_per_unit * L::cluster_size * L::consumers;
  plan.partial_bytes = partials * L::partial_float4s * sizeof(float4);
  plan.flag_bytes = partials * sizeof(unsigned);
  plan.schedule = s;
  return plan;
}

// Bytes of workspace for a shape: one 64 KiB partial and one flag per (slot, block, consumer), 256
// KiB and 16 bytes per slot with clusters of 2. The step (aligned parts): one slot per unit, at most
// one unit per resident cluster: at most 66 × 256 KiB = 16.5 MiB on a GPU of 132 SMs. Even
// distribution (stream_k_only, hybrid_even): two slots per unit, 33 MiB. Split-K in s parts (a
// variant): tiles · s slots, which grows with the shape.
template <class Variant>
std::size_t workspace_bytes(Shape shape) {
  if (shape.k % 8 != 0 || shape.n % 8 != 0) return 0;  // the fallback's shapes
  const Plan plan = plan_schedule<Variant>(shape.m, shape.n, shape.k, resident_clusters<Variant>());
  return plan.partial_bytes + plan.flag_bytes;
}

// Every launch stores a new epoch in the flags it sets, and waits for flags that hold it: what a
// launch before it left in the workspace is never taken for this one's, and nothing is reset.
unsigned next_epoch() {
  static unsigned epoch = 0;
  if (++epoch == 0) ++epoch;  // 0 is the zeroed workspace's value
  return epoch;
}

template <class Variant>
void launch_config(const GemmProblem<__half>& p, cudaStream_t stream) {
  using L = Layout<Variant>;
  if (!tma_path_possible(p)) {
    const RegisteredStep* fallback = find_step(unaligned_fallback);  // linked in: add_worklog_step(... FALLBACK)
    if (!fallback) throw std::logic_error(std::string(unaligned_fallback) + " is not linked into this program");
    return fallback->fp16->launch(p, stream);
  }
  constexpr auto kernel = stream_k_gemm<Variant>;
  arm_watchdog();
  Plan plan = plan_schedule<Variant>(p.m, p.n, p.k, resident_clusters<Variant>());
  Schedule& s = plan.schedule;
  if (s.units > 0) {
    const std::size_t needed = plan.partial_bytes + plan.flag_bytes;
    if (!p.workspace || p.workspace_bytes < needed)
      throw std::runtime_error("11_stream_k: this shape needs " + std::to_string(needed) + " bytes of workspace, the " +
                               "launch has " + std::to_string(p.workspace ? p.workspace_bytes : 0) +
                               " (Step::needs_workspace, GemmProblem::workspace)");
    s.partials = static_cast<float4*>(p.workspace);
    s.flags = reinterpret_cast<unsigned*>(static_cast<unsigned char*>(p.workspace) + plan.partial_bytes);
    s.epoch = next_epoch();
  }
  cudaLaunchAttribute cluster{};
  cudaLaunchConfig_t config = launch_configuration<Variant>(cluster, stream);
  config.gridDim = dim3(unsigned(plan.clusters * L::cluster_size));
  // A: M rows × K, copied in boxes of block_tile_m rows × 64 k. B: K rows × N, boxes of 64 k × 64 columns.
  const CUtensorMap a_map = make_tensor_map_2d(p.a, CU_TENSOR_MAP_DATA_TYPE_FLOAT16, 2, p.m, p.k, L::block_tile_m,
                                               swizzle_halves, CU_TENSOR_MAP_SWIZZLE_128B);
  const CUtensorMap b_map = make_tensor_map_2d(p.b, CU_TENSOR_MAP_DATA_TYPE_FLOAT16, 2, p.k, p.n, L::block_tile_k,
                                               swizzle_halves, CU_TENSOR_MAP_SWIZZLE_128B);
  // C: M rows × N FP32, written in boxes of 64 rows × 32 columns (128 bytes, swizzled).
  const CUtensorMap c_map = make_tensor_map_2d(p.c, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 4, p.m, p.n, wgmma_m,
                                               L::c_chunk_cols, CU_TENSOR_MAP_SWIZZLE_128B);
  CUDA_CHECK(cudaLaunchKernelEx(&config, kernel, a_map, b_map, c_map, p, s));
  WORKLOG_CHECK_LAUNCH();
}

// Variants, for the README's tables: other decompositions, the fixup by one unit, no clusters.
struct DataParallel : Config {
  static constexpr Decomposition decomposition = Decomposition::data_parallel;
};
struct SplitK2 : Config {
  static constexpr Decomposition decomposition = Decomposition::split_k;
  static constexpr int split_k = 2;
};
struct SplitK4 : SplitK2 {
  static constexpr int split_k = 4;
};
struct StreamKOnly : Config {
  static constexpr Decomposition decomposition = Decomposition::stream_k;
};
struct HybridEven : Config {
  static constexpr Decomposition decomposition = Decomposition::hybrid_even;
};
struct FixupAlone : Config {
  static constexpr int fixup_alone_units = 1 << 30;
};
struct FixupShared : Config {
  static constexpr int fixup_alone_units = 1;
};
struct NoCluster : Config {
  static constexpr int cluster_size = 1;
};

}  // namespace

// One fetch of A and B from global memory serves a cluster's 256 × 256 of C (two blocks sharing B).
// wgmma and setmaxnreg exist on sm_90a alone: compute capability 9.0, exactly.
WORKLOG_REGISTER_STEP(
    Step<__half>{"11_stream_k", launch_config<Config>}
        .adds(
            "stream-K: whole waves data-parallel, the remaining tiles in k-parts over all clusters, fixed-order fixup")
        .reuses_tile(Config::cluster_size* Config::block_tile_m, Config::block_tile_n)
        .needs_compute_capability(90, 90)
        .needs_workspace(workspace_bytes<Config>)
        .variant("data_parallel", "whole tiles only (10's schedule)", launch_config<DataParallel>,
                 workspace_bytes<DataParallel>)
        .variant("split_k2", "every tile in 2 k-parts", launch_config<SplitK2>, workspace_bytes<SplitK2>)
        .variant("split_k4", "every tile in 4 k-parts", launch_config<SplitK4>, workspace_bytes<SplitK4>)
        .variant("stream_k_only", "every tile's slices split evenly over the clusters", launch_config<StreamKOnly>,
                 workspace_bytes<StreamKOnly>)
        .variant("hybrid_even", "whole waves but one, the rest's slices evenly over the clusters",
                 launch_config<HybridEven>, workspace_bytes<HybridEven>)
        .variant("fixup_alone", "every split tile fixed up by the unit holding its slice 0 alone",
                 launch_config<FixupAlone>, workspace_bytes<FixupAlone>)
        .variant("fixup_shared", "every split tile's fixup shared by all its units", launch_config<FixupShared>,
                 workspace_bytes<FixupShared>)
        .variant("no_cluster", "the hybrid with single blocks, no multicast", launch_config<NoCluster>,
                 workspace_bytes<NoCluster>, Config::block_tile_m, Config::block_tile_n))

}  // namespace worklog
