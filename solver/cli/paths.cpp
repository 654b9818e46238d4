// The files a run reads and writes (paths.hpp).
#include "cli/paths.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

namespace mln::cli {

std::vector<std::string> output_files(const Options& o) {
  if (o.output.empty()) return {};  // -problog without -o: stdout
  if (o.dual) return {o.output + ".map", o.output + ".marginal"};
  return {o.output};
}

namespace {
[[noreturn]] void fail(const std::string& flag, const std::string& path, const std::string& what, int err,
                       const std::string& where = "") {
  throw std::runtime_error(flag + " " + path + ": cannot " + what + ": " + where + std::strerror(err));
}
}  // namespace

void check_input_file(const std::string& flag, const std::string& what, const std::string& path) {
  const std::string verb = "read the " + what;
  struct stat st;
  if (stat(path.c_str(), &st) != 0) fail(flag, path, verb, errno);
  // A directory opens for reading and reads as empty: a program, evidence
  // or query that silently says nothing.
  if (S_ISDIR(st.st_mode)) fail(flag, path, verb, EISDIR);
  // O_NONBLOCK: a FIFO is not waited for here.
  const int fd = open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) fail(flag, path, verb, errno);
  close(fd);
}

void check_output_file(const std::string& flag, const std::string& path) {
  const std::string verb = "write the output file";
  struct stat st;
  if (stat(path.c_str(), &st) == 0) {
    if (S_ISDIR(st.st_mode)) fail(flag, path, verb, EISDIR);
    if (access(path.c_str(), W_OK) != 0) fail(flag, path, verb, errno);
  } else if (errno != ENOENT) {
    fail(flag, path, verb, errno);
  }
  // The directory: the file is created there (and -gz's gzip replaces it
  // with path.gz).
  const size_t slash = path.find_last_of('/');
  const std::string dir = slash == std::string::npos ? "." : slash == 0 ? "/" : path.substr(0, slash);
  if (stat(dir.c_str(), &st) != 0) fail(flag, path, verb, errno, "directory " + dir + ": ");
  if (!S_ISDIR(st.st_mode)) fail(flag, path, verb, ENOTDIR, dir + ": ");
  if (access(dir.c_str(), W_OK | X_OK) != 0) fail(flag, path, verb, errno, "directory " + dir + ": ");
}

void check_paths(const Options& o) {
  if (!o.problog.empty()) check_input_file("-problog", "program file", o.problog);
  for (const auto& f : o.program_files) check_input_file("-i", "program file", f);
  for (const auto& f : o.evidence_files) check_input_file("-e", "evidence file", f);
  for (const auto& f : o.query_files) check_input_file("-queryFile", "query file", f);
  if (!o.conf.empty()) check_input_file("-conf", "config file", o.conf);
  const char* flag = o.problog.empty() ? "-r" : "-o";  // -problog's documented name (the same flag)
  for (const auto& f : output_files(o)) {
    check_output_file(flag, f);
    if (o.gz) check_output_file(flag, f + ".gz");
  }
}

}  // namespace mln::cli
