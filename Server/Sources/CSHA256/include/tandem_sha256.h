#ifndef TANDEM_SHA256_H
#define TANDEM_SHA256_H

#include <stddef.h>
#include <stdint.h>

/// Runs SHA-256's compression on `blocks` 64-byte blocks of `data` into `state` (eight
/// words, a..h): with the CPU's SHA extensions where it has them, else portable rounds.
void tandem_sha256_blocks(uint32_t state[8], const uint8_t *data, size_t blocks);

/// The same with the CPU's SHA extensions only: returns 0, having done nothing, on a CPU
/// without them.
int tandem_sha256_blocks_accelerated(uint32_t state[8], const uint8_t *data, size_t blocks);

/// The same with the portable rounds only (tests compare the two).
void tandem_sha256_blocks_portable(uint32_t state[8], const uint8_t *data, size_t blocks);

#endif
