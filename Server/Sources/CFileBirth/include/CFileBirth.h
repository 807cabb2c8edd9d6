// A file's birth time, which Swift's Glibc module does not declare (statx needs _GNU_SOURCE).
// Foundation's creationDate on Linux is not the birth time (it changes with writes), and a
// file copied back from a backup often gets the inode number of the file it replaces: the
// birth time is what tells them apart. Used by SQLiteServerStorage's epoch (StorageEpoch).
#ifndef C_FILE_BIRTH_H
#define C_FILE_BIRTH_H

#ifdef __linux__
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <fcntl.h>
#include <sys/stat.h>

/// The birth time of `path` in nanoseconds since 1970; 0 when the filesystem records none.
static inline long long tandem_file_birth_nanoseconds(const char *path) {
    struct statx info;
    if (statx(AT_FDCWD, path, 0, STATX_BTIME, &info) != 0 || !(info.stx_mask & STATX_BTIME)) return 0;
    return (long long)info.stx_btime.tv_sec * 1000000000LL + info.stx_btime.tv_nsec;
}
#else
#include <sys/stat.h>

/// The birth time of `path` in nanoseconds since 1970; 0 when the filesystem records none.
static inline long long tandem_file_birth_nanoseconds(const char *path) {
#ifdef __APPLE__
    struct stat info;
    if (stat(path, &info) != 0) return 0;
    return (long long)info.st_birthtimespec.tv_sec * 1000000000LL + info.st_birthtimespec.tv_nsec;
#else
    return 0;
#endif
}
#endif

#endif
