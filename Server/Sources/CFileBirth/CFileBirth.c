// The header is the target (a static inline function); SwiftPM needs a source file.
