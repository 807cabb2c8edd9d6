#ifndef TANDEM_SHA256_H
#define TANDEM_SHA256_H

#include <stddef.h>
#include <stdint.h>

/// Runs SHA-256's compression on `blocks` 64-byte blocks of `data` into `state` (eight
/// words, a..h), with the CPU's SHA extensions. Returns 0, having done nothing, on a CPU
/// without them: the caller then runs its portable rounds.
int tandem_sha256_blocks(uint32_t state[8], const uint8_t *data, size_t blocks);

#endif
