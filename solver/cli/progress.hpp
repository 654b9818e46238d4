// A one-line progress bar for phases that take more than a couple of
// seconds: drawn on a terminal only, after `delay_s`, at most ~5 times a
// second; plain lines are the caller's business elsewhere.
#pragma once

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>

namespace mln::cli {

class ProgressBar {
 public:
  explicit ProgressBar(std::string label, double delay_s = 2.0)
      : label_(std::move(label)), delay_s_(delay_s), tty_(isatty(STDOUT_FILENO)), t0_(Clock::now()) {}
  ~ProgressBar() { clear(); }
  ProgressBar(const ProgressBar&) = delete;
  ProgressBar& operator=(const ProgressBar&) = delete;

  // Shows `pct` percent done of `what` (a phase name; may be empty).
  void update(int pct, const std::string& what = "") {
    if (!tty_) return;
    const auto now = Clock::now();
    const double el = std::chrono::duration<double>(now - t0_).count();
    if (el < delay_s_ || (shown_ && now - last_ < std::chrono::milliseconds(200))) return;
    last_ = now;
    const int p = std::clamp(pct, 0, 100), fill = p / 5;
    std::printf("\r    %s %-10s [%s%s] %3d%%  %.0f s   ", label_.c_str(), what.c_str(), std::string(fill, '#').c_str(),
                std::string(20 - fill, '.').c_str(), p, el);
    std::fflush(stdout);
    shown_ = true;
  }
  // Erases the bar (if one was drawn), so that the next line starts clean.
  void clear() {
    if (!shown_) return;
    std::printf("\r%78s\r", "");
    std::fflush(stdout);
    shown_ = false;
  }
  bool tty() const { return tty_; }

 private:
  using Clock = std::chrono::steady_clock;
  std::string label_;
  double delay_s_;
  bool tty_;
  bool shown_ = false;
  Clock::time_point t0_, last_;
};

}  // namespace mln::cli
