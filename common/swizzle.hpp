// The XOR swizzle of step 08's shared-memory tiles: where each 16-byte chunk of a tile row is
// stored. Host and device, so that the host tests check its two properties.
//
// Shared memory has 32 banks of 4 bytes: an access of 16 bytes per thread (cp.async, or one row
// address of ldmatrix) is served 8 threads at a time, and those 8 chunks are conflict-free when
// they fall in the 8 different "bank groups" of a 128-byte line (group = byte offset / 16 mod 8).
// A tile stored densely, rows of 64 bytes or a multiple of 128, puts a column of chunks in one or
// two bank groups: ldmatrix reads 8 rows of one chunk column, an 8-way (or 4-way) conflict.
// Padding each row by 16 bytes fixes that at the cost of memory (step 07); the swizzle instead
// stores logical chunk c of row r at physical chunk c XOR f(r) of the same row, which spreads any
// chunk column over the 8 bank groups and still keeps each row's chunks together.
#pragma once

#include "gemm_math.hpp"  // WORKLOG_HOST_DEVICE

namespace worklog {

inline constexpr int swizzle_chunk_bytes = 16;  // one cp.async, one ldmatrix row address
inline constexpr int swizzle_bank_groups = 8;   // 128 bytes of 32 banks, in 16-byte chunks

// Physical chunk of logical chunk `chunk` (0 … chunks_per_row − 1) of row `row`, for rows of
// chunks_per_row chunks (a power of two, at least 2; the tile starts on a 128-byte boundary).
//   Rows of 8 chunks or more (128 bytes or a multiple): each row starts in bank group 0, so the
//     XOR of row % 8 into the chunk's low 3 bits sends rows r … r+7 to 8 different groups.
//   Rows of 4 chunks (64 bytes): two rows share a 128-byte line, odd rows in groups 4-7; XOR-ing
//     (row / 2) % 4 into the chunk separates the 4 pairs of rows in 8 consecutive rows.
//   Rows of 2 chunks: four rows per line, XOR with (row / 4) % 2.
// In general: XOR with (row / rows_per_line) mod min(chunks_per_row, 8).
WORKLOG_HOST_DEVICE constexpr int swizzled_chunk(int row, int chunk, int chunks_per_row) {
  const int rows_per_line = chunks_per_row >= swizzle_bank_groups ? 1 : swizzle_bank_groups / chunks_per_row;
  const int mask = (chunks_per_row >= swizzle_bank_groups ? swizzle_bank_groups : chunks_per_row) - 1;
  return chunk ^ ((row / rows_per_line) & mask);
}

// Bank group that logical chunk `chunk` of row `row` lands in.
WORKLOG_HOST_DEVICE constexpr int swizzled_bank_group(int row, int chunk, int chunks_per_row) {
  return (row * chunks_per_row + swizzled_chunk(row, chunk, chunks_per_row)) % swizzle_bank_groups;
}

}  // namespace worklog
