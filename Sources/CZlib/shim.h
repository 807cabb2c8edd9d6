#ifndef TANDEM_CZLIB_SHIM_H
#define TANDEM_CZLIB_SHIM_H
#include <zlib.h>

// deflateInit2/inflateInit2 are macros; Swift cannot call them.
static inline int tandem_deflate_init_gzip(z_stream *stream, int level) {
    return deflateInit2(stream, level, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY);
}
static inline int tandem_inflate_init_gzip(z_stream *stream) {
    return inflateInit2(stream, 15 + 16);
}
#endif
