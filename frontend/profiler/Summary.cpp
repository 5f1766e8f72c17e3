// The profiler's table by op (see kiln/profiler/Profiler.h).
#include <algorithm>
#include <iomanip>
#include <map>
#include <sstream>

#include "kiln/profiler/Profiler.h"

namespace kiln::profiler {

std::string summary(std::span<const Event> events) {
  struct Row {
    int64_t calls = 0;
    double totalMs = 0;
  };
  std::map<std::pair<std::string, std::string>, Row> rows;
  for (const Event& e : events) {
    Row& row = rows[{e.category, e.name}];
    ++row.calls;
    row.totalMs += std::chrono::duration<double, std::milli>(e.end - e.begin).count();
  }
  std::vector<std::pair<std::pair<std::string, std::string>, Row>> sorted(rows.begin(), rows.end());
  std::stable_sort(sorted.begin(), sorted.end(),
                   [](const auto& a, const auto& b) { return a.second.totalMs > b.second.totalMs; });
  size_t width = 4;
  for (const auto& [key, row] : sorted) width = std::max(width, key.second.size());
  std::ostringstream out;
  out << "kiln profile: " << events.size() << " events\n"
      << std::left << std::setw(9) << "category" << std::setw(int(width) + 2) << "name" << std::right
      << std::setw(9) << "calls" << std::setw(12) << "total ms" << std::setw(12) << "mean us" << "\n";
  out << std::fixed;
  for (const auto& [key, row] : sorted)
    out << std::left << std::setw(9) << key.first << std::setw(int(width) + 2) << key.second
        << std::right << std::setw(9) << row.calls << std::setw(12) << std::setprecision(3)
        << row.totalMs << std::setw(12) << std::setprecision(1) << row.totalMs * 1000 / row.calls
        << "\n";
  return out.str();
}

}  // namespace kiln::profiler
