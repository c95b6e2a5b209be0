// Table and JSON formatting of tester rows.
#include "bench/report.hpp"

#include <cmath>

namespace gpuqr::bench {
namespace {

// Column layout shared by the header and the rows.
constexpr const char* kFormat =
    "%-6s %7s %7s %5s %4s %-7s %5s %10s %9s  %-8s %10s %9s %8s %10s %9s  %9s %9s %9s %9s  "
    "%s\n";

}  // namespace

std::string fmt(double value, const char* spec) {
  if (std::isnan(value)) return "-";
  char buf[64];
  std::snprintf(buf, sizeof buf, spec, value);
  return buf;
}

std::string json_number(double value) {
  if (!std::isfinite(value)) return "null";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.9g", value);
  return buf;
}

void print_header(std::FILE* out) {
  std::fprintf(out, kFormat, "op", "m", "n", "nrhs", "prec", "backend", "graph", "time_ms",
               "gflops", "baseline", "base_ms", "base_gf", "speedup", "graph_ms", "g_speedup",
               "error", "orth", "base_err", "base_orth", "status");
  std::fprintf(out, kFormat, "------", "-------", "-------", "-----", "----", "-------", "-----",
               "----------", "---------", "--------", "----------", "---------", "--------",
               "----------", "---------", "---------", "---------", "---------", "---------",
               "------");
}

void print_row(std::FILE* out, const Row& r) {
  const std::string nrhs = r.nrhs > 0 ? std::to_string(r.nrhs) : "-";
  std::fprintf(out, kFormat, r.op.c_str(), std::to_string(r.m).c_str(),
               std::to_string(r.n).c_str(), nrhs.c_str(), r.precision.c_str(),
               r.backend.c_str(), r.graph.c_str(), fmt(r.time_ms, "%.3f").c_str(),
               fmt(r.gflops, "%.2f").c_str(), r.baseline.empty() ? "-" : r.baseline.c_str(),
               fmt(r.baseline_time_ms, "%.3f").c_str(), fmt(r.baseline_gflops, "%.2f").c_str(),
               fmt(r.speedup, "%.2f").c_str(), fmt(r.graph_time_ms, "%.3f").c_str(),
               fmt(r.graph_speedup, "%.2f").c_str(), fmt(r.error, "%.3g").c_str(),
               fmt(r.orth, "%.3g").c_str(), fmt(r.baseline_error, "%.3g").c_str(),
               fmt(r.baseline_orth, "%.3g").c_str(), r.status.c_str());
  std::fflush(out);
}

std::string json_string(const std::string& text) {
  std::string out = "\"";
  for (const char ch : text) {
    const auto c = static_cast<unsigned char>(ch);
    switch (ch) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      case '\r': out += "\\r"; break;
      default:
        if (c < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", c);
          out += buf;
        } else {
          out += ch;
        }
    }
  }
  return out + "\"";
}

std::string to_json(const Row& r) {
  std::string s = "{";
  s += "\"op\":" + json_string(r.op);
  s += ",\"m\":" + std::to_string(r.m);
  s += ",\"n\":" + std::to_string(r.n);
  s += ",\"nrhs\":" + (r.nrhs > 0 ? std::to_string(r.nrhs) : std::string("null"));
  s += ",\"precision\":" + json_string(r.precision);
  s += ",\"backend\":" + json_string(r.backend);
  s += ",\"device\":" + json_string(r.device);
  s += ",\"time_ms\":" + json_number(r.time_ms);
  s += ",\"gflops\":" + json_number(r.gflops);
  s += ",\"baseline\":" + (r.baseline.empty() ? std::string("null") : json_string(r.baseline));
  s += ",\"baseline_time_ms\":" + json_number(r.baseline_time_ms);
  s += ",\"baseline_gflops\":" + json_number(r.baseline_gflops);
  s += ",\"speedup\":" + json_number(r.speedup);
  s += ",\"error\":" + json_number(r.error);
  s += ",\"orth\":" + json_number(r.orth);
  s += ",\"baseline_error\":" + json_number(r.baseline_error);
  s += ",\"baseline_orth\":" + json_number(r.baseline_orth);
  s += ",\"transfer_ms\":" + json_number(r.transfer_ms);
  s += ",\"graph\":" + json_string(r.graph);
  s += ",\"graph_time_ms\":" + json_number(r.graph_time_ms);
  s += ",\"graph_speedup\":" + json_number(r.graph_speedup);
  s += ",\"status\":" + json_string(r.status);
  return s + "}";
}

}  // namespace gpuqr::bench
