// Writing an output file so that it appears complete or not at all, without harming what
// the path names: a device, a FIFO or standard output is written to, never replaced.
#pragma once

#include <functional>
#include <iosfwd>
#include <string>

namespace nnprof::io {

/// Writes what `writer` puts in a stream to `path`:
/// - a regular file, or a path that does not exist yet, is replaced atomically: the output
///   goes to a fresh temporary file beside it (created exclusively, never through a symlink,
///   with an unpredictable name) that is renamed onto it at the end; it gets the mode of the
///   file it replaces, or that of a new file (0666 less the umask);
/// - a symlink is followed to its final target, and that target is replaced;
/// - a character device or a FIFO (/dev/null, a terminal, a pipe) is written to directly;
///   /dev/stdout, /dev/fd/N and /proc/self/fd/N write to the descriptor itself.
/// On any failure the temporary file is removed, a replaced target is left untouched, and
/// nnprof::Error is thrown naming the file and the cause (e.g. "No space left on device").
void write_file_atomically(const std::string& path, const std::function<void(std::ostream&)>& writer);

/// The same for a writer that needs a file name (SQLite): `writer` fills the new, empty file
/// named by its argument. For a regular target that file is the temporary file beside it;
/// for a device, a FIFO or a descriptor it is a private temporary file whose bytes are then
/// copied to the target.
void write_file_by_name(const std::string& path, const std::function<void(const std::string& file)>& writer);

}  // namespace nnprof::io
