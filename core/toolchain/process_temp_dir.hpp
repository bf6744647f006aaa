// The folder in which the host compiler's sources and the loaded libraries live:
// $TMPDIR/jiasu-host-<pid>-XXXXXX, private to this process (mode 0700) and removed at exit. It holds
// a lock file that the process keeps locked (flock) while it lives, so that a later process can tell
// a crashed process's folder from a live one and remove only the first.
#pragma once

#include <string>

namespace jiasu {

// The message for a failure to create or write `path` in the temporary folder base: what, where,
// why (error is an errno value), and what to do.
std::string temp_folder_failure(const std::string& what, const std::string& path,
                                const std::string& base, int error);

// A new, empty subfolder of this process's folder, which is made in $TMPDIR (or /tmp) on the first
// call, after removing stale folders (see below). Throws Error saying what could not be created,
// where and why, and what to do.
std::string make_work_dir();

// Removes the folders jiasu-host-<pid>-XXXXXX in base that this user owns and whose process is gone:
// no process <pid> runs here, and nobody holds the folder's lock (which also covers a live process of
// another PID namespace sharing the folder). Folders without a lock file are left alone. Best effort,
// never throws.
void remove_stale_temp_dirs(const std::string& base);

}  // namespace jiasu
