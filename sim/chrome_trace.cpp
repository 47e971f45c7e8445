#include "sim/chrome_trace.hpp"

#include <fmt/format.h>
#include <fmt/ostream.h>

#include <nlohmann/json.hpp>

namespace ddpsim::sim {
namespace {

// Microseconds with nanosecond precision, printed exactly from the integer.
std::string micros(Time t) {
  const std::int64_t ns = t.count_ns();
  return fmt::format("{}.{:03}", ns / 1000, ns % 1000);
}

}  // namespace

ChromeTraceWriter::ChromeTraceWriter(std::ostream& out, NameFn name_of, int max_ranks)
    : out_(out), name_of_(std::move(name_of)), max_ranks_(max_ranks) {
  out_ << "{\"displayTimeUnit\":\"ms\",\"traceEvents\":[";
}

ChromeTraceWriter::~ChromeTraceWriter() { finish(); }

void ChromeTraceWriter::separator() {
  out_ << (first_ ? "\n" : ",\n");
  first_ = false;
}

void ChromeTraceWriter::begin_run(std::string_view run_name, int world_size, MemoryFn memory) {
  memory_ = std::move(memory);
  pid_base_ = next_pid_;
  const int shown = max_ranks_ > 0 && world_size > max_ranks_ ? max_ranks_ : world_size;
  truncated_ = truncated_ || shown < world_size;
  next_pid_ += shown;
  for (int r = 0; r < shown; ++r) {
    const int pid = pid_base_ + r;
    const std::string name = fmt::format("{} rank {}", run_name, r);
    separator();
    fmt::print(out_, R"({{"name":"process_name","ph":"M","pid":{},"args":{{"name":{}}}}})", pid,
               nlohmann::json(name).dump());
    separator();
    fmt::print(out_, R"({{"name":"process_sort_index","ph":"M","pid":{},"args":{{"sort_index":{}}}}})",
               pid, pid);
    for (int s = 0; s < kStreamsPerRank; ++s) {
      separator();
      fmt::print(out_, R"({{"name":"thread_name","ph":"M","pid":{},"tid":{},"args":{{"name":"{}"}}}})",
                 pid, s, to_string(static_cast<StreamKind>(s)));
    }
  }
}

void ChromeTraceWriter::on_op(const OpRecord& r) {
  if (max_ranks_ > 0 && r.rank >= max_ranks_) return;
  separator();
  // Collectives carry their size and per-group sequence number in the name,
  // so they read off the timeline without opening each slice.
  std::string name = name_of_(r.label);
  if (r.is_collective) name += fmt::format(" ({} B, seq {})", r.collective.bytes, r.group_seq);
  fmt::print(out_, R"({{"name":{},"cat":"{}","ph":"X","pid":{},"tid":{},"ts":{},"dur":{},)",
             nlohmann::json(name).dump(), to_string(r.stream), pid_base_ + r.rank,
             static_cast<int>(r.stream), micros(r.start), micros(r.end - r.start));
  if (r.is_collective) {
    fmt::print(out_, R"("args":{{"iteration":{},"op":"{}","seq":{},"bytes":{},"wait_us":{}}}}})",
               r.label.iteration, to_string(r.collective.kind), r.group_seq, r.collective.bytes,
               micros(r.start - r.arrival));
  } else {
    fmt::print(out_, R"("args":{{"iteration":{}}}}})", r.label.iteration);
  }
  if (!memory_) return;
  if (const std::optional<std::int64_t> bytes = memory_(r)) {
    // MiB with three decimals, printed from the integer bytes (exact, the same on any machine).
    const std::int64_t kib = (*bytes + 512) / 1024;
    separator();
    fmt::print(out_, R"({{"name":"memory","ph":"C","pid":{},"ts":{},"args":{{"MiB":{}.{:03}}}}})", pid_base_ + r.rank,
               micros(r.start), kib / 1024, (kib % 1024) * 1000 / 1024);
  }
}

void ChromeTraceWriter::finish() {
  if (finished_) return;
  finished_ = true;
  out_ << "\n]}\n";
  out_.flush();
}

}  // namespace ddpsim::sim
