// Command-line parsing of gpuqr_tester.
#include "bench/options.hpp"

#include <algorithm>
#include <sstream>

namespace gpuqr::bench {

const char* to_string(Operation op) {
  switch (op) {
    case Operation::geqrf: return "geqrf";
    case Operation::orgqr: return "orgqr";
    case Operation::ormqr: return "ormqr";
    case Operation::gels: return "gels";
  }
  return "?";
}

namespace {

/// Splits "a,b,,c" into {"a", "b", "c"} (empty items dropped).
std::vector<std::string> split_list(const std::string& text) {
  std::vector<std::string> items;
  std::stringstream stream(text);
  std::string item;
  while (std::getline(stream, item, ',')) {
    if (!item.empty()) items.push_back(item);
  }
  return items;
}

/// A non-negative integer (the whole text), else UsageError naming `what`.
std::int64_t parse_count(const std::string& text, const std::string& what) {
  std::size_t used = 0;
  long long value = -1;
  try {
    value = std::stoll(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != text.size() || text.empty() || value < 0) {
    throw UsageError(what + ": '" + text + "' is not a non-negative integer");
  }
  return value;
}

std::vector<Operation> parse_ops(const std::string& text) {
  std::vector<Operation> ops;
  for (const std::string& item : split_list(text)) {
    if (item == "all") {
      ops = {Operation::geqrf, Operation::orgqr, Operation::ormqr, Operation::gels};
    } else if (item == "geqrf") {
      ops.push_back(Operation::geqrf);
    } else if (item == "orgqr") {
      ops.push_back(Operation::orgqr);
    } else if (item == "ormqr") {
      ops.push_back(Operation::ormqr);
    } else if (item == "gels") {
      ops.push_back(Operation::gels);
    } else {
      throw UsageError("--op: unknown operation '" + item +
                       "' (expected geqrf, orgqr, ormqr, gels or all)");
    }
  }
  if (ops.empty()) throw UsageError("--op: empty list");
  return ops;
}

std::vector<char> parse_precisions(const std::string& text) {
  std::vector<char> out;
  for (const std::string& item : split_list(text)) {
    if (item == "d" || item == "double") {
      out.push_back('d');
    } else if (item == "s" || item == "single" || item == "float") {
      out.push_back('s');
    } else {
      throw UsageError("--precision: unknown precision '" + item + "' (expected d or s)");
    }
  }
  if (out.empty()) throw UsageError("--precision: empty list");
  return out;
}

}  // namespace

std::vector<Dim> parse_dims(const std::string& text) {
  std::vector<Dim> dims;
  for (const std::string& item : split_list(text)) {
    const std::size_t colon = item.find(':');
    if (colon != std::string::npos) {  // a:b:s, square sizes
      const std::size_t colon2 = item.find(':', colon + 1);
      if (colon2 == std::string::npos) throw UsageError("--dim: range '" + item + "' needs a:b:s");
      const std::int64_t a = parse_count(item.substr(0, colon), "--dim");
      const std::int64_t b = parse_count(item.substr(colon + 1, colon2 - colon - 1), "--dim");
      const std::int64_t s = parse_count(item.substr(colon2 + 1), "--dim");
      if (s == 0) throw UsageError("--dim: range '" + item + "' has step 0");
      for (std::int64_t v = a; v <= b; v += s) dims.push_back({v, v});
      continue;
    }
    const std::size_t x = item.find_first_of("xX");
    if (x == std::string::npos) {
      const std::int64_t v = parse_count(item, "--dim");
      dims.push_back({v, v});
    } else {
      dims.push_back({parse_count(item.substr(0, x), "--dim"),
                      parse_count(item.substr(x + 1), "--dim")});
    }
  }
  if (dims.empty()) throw UsageError("--dim: empty list");
  for (const Dim& d : dims) {
    if (d.m == 0 || d.n == 0) throw UsageError("--dim: sizes must be positive");
  }
  return dims;
}

std::vector<Dim> default_dims(Backend backend) {
  if (backend == Backend::cuda) {
    return {{1024, 1024}, {2048, 2048}, {4096, 4096}, {8192, 8192}, {20000, 500}};
  }
  return {{256, 256}, {512, 512}, {1000, 300}, {2000, 100}};
}

Options parse_options(int argc, char** argv) {
  Options opt;
  bool backend_given = false;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    std::string value;
    bool has_value = false;
    const std::size_t eq = arg.find('=');
    if (arg.rfind("--", 0) == 0 && eq != std::string::npos) {
      value = arg.substr(eq + 1);
      arg = arg.substr(0, eq);
      has_value = true;
    }
    // The value of an option that takes one: after '=' or the next argument.
    auto next = [&]() -> std::string {
      if (has_value) return value;
      if (i + 1 >= argc) throw UsageError(arg + " needs a value");
      return argv[++i];
    };
    if (arg == "-h" || arg == "--help") {
      opt.help = true;
    } else if (arg == "--op") {
      opt.ops = parse_ops(next());
    } else if (arg == "--dim") {
      opt.dims = parse_dims(next());
    } else if (arg == "--precision" || arg == "--type") {
      opt.precisions = parse_precisions(next());
    } else if (arg == "--backend") {
      const std::string b = next();
      backend_given = true;
      opt.backends.clear();
      opt.backend_all = false;
      if (b == "cpu") {
        opt.backends = {Backend::cpu};
      } else if (b == "cuda") {
        opt.backends = {Backend::cuda};
      } else if (b == "all") {
        opt.backends = {Backend::cpu, Backend::cuda};
        opt.backend_all = true;
      } else if (b == "auto") {
        backend_given = false;
      } else {
        throw UsageError("--backend: unknown backend '" + b + "' (expected cpu, cuda, all, auto)");
      }
    } else if (arg == "--baseline") {
      opt.baseline = next();
      if (opt.baseline != "lapack" && opt.baseline != "cusolver" && opt.baseline != "auto" &&
          opt.baseline != "none") {
        throw UsageError("--baseline: unknown baseline '" + opt.baseline +
                         "' (expected lapack, cusolver, auto or none)");
      }
    } else if (arg == "--repeat") {
      opt.repeat = static_cast<int>(parse_count(next(), "--repeat"));
      if (opt.repeat < 1) throw UsageError("--repeat must be at least 1");
    } else if (arg == "--warmup") {
      opt.warmup = static_cast<int>(parse_count(next(), "--warmup"));
    } else if (arg == "--nrhs") {
      opt.nrhs = parse_count(next(), "--nrhs");
      if (opt.nrhs < 1) throw UsageError("--nrhs must be at least 1");
    } else if (arg == "--json") {
      opt.json_path = next();
    } else if (arg == "--check") {
      opt.check = true;
    } else if (arg == "--no-check") {
      opt.check = false;
    } else if (arg == "--tol") {
      try {
        opt.tolerance = std::stod(next());
      } catch (const std::exception&) {
        throw UsageError("--tol needs a number");
      }
    } else if (arg == "--seed") {
      opt.seed = static_cast<std::uint64_t>(parse_count(next(), "--seed"));
    } else if (arg == "--no-finite-check") {
      opt.check_finite = false;
    } else if (arg == "--host-data") {
      opt.host_data = true;
    } else if (arg == "--graph") {
      opt.graph = next();
      if (opt.graph != "off" && opt.graph != "on" && opt.graph != "both" &&
          opt.graph != "default") {
        throw UsageError("--graph: '" + opt.graph + "' (expected off, on, both or default)");
      }
    } else {
      throw UsageError("unknown option '" + arg + "'");
    }
    if (has_value && (arg == "--check" || arg == "--no-check" || arg == "--no-finite-check" ||
                      arg == "--host-data" ||
                      arg == "--help")) {
      throw UsageError(arg + " takes no value");
    }
  }
  if (opt.ops.empty()) {
    opt.ops = {Operation::geqrf, Operation::orgqr, Operation::ormqr, Operation::gels};
  }
  if (opt.precisions.empty()) opt.precisions = {'d'};
  if (!backend_given) {
    opt.backends = {cuda_devices().empty() ? Backend::cpu : Backend::cuda};
  }
  return opt;
}

std::string usage_text() {
  return
      "usage: gpuqr_tester [options]\n"
      "Times gpuqr's dense QR operations against a baseline on the same inputs and checks\n"
      "the accuracy of both. One line per case; exits with the number of failed cases.\n"
      "\n"
      "  --op LIST          geqrf,orgqr,ormqr,gels or all (default all)\n"
      "  --dim LIST         sizes: N (N x N), MxN, or a:b:s (square a, a+s, ..., <= b);\n"
      "                     default 256,512,1000x300,2000x100 on the CPU and\n"
      "                     1024,2048,4096,8192,20000x500 on a GPU\n"
      "  --precision LIST   d,s (default d)\n"
      "  --backend B        cpu, cuda, all or auto (default auto: cuda when a GPU is visible)\n"
      "  --baseline B       lapack, cusolver, none or auto (default auto: LAPACK for the\n"
      "                     CPU backend, cuSOLVER for the CUDA backend)\n"
      "  --repeat N         timed repetitions; the median is reported (default 3)\n"
      "  --warmup N         untimed repetitions first (default 1)\n"
      "  --nrhs N           right-hand sides of gels, columns of C in ormqr (default 1)\n"
      "  --json FILE        also write one JSON object per case to FILE\n"
      "  --check, --no-check  compute the accuracy ratios (default on)\n"
      "  --tol X            ratios below X pass (default 30, LAPACK's threshold)\n"
      "  --seed S           seed of the random inputs (default 42)\n"
      "  --no-finite-check  turn off gpuqr's NaN/Inf input scan (Context::set_check_finite)\n"
      "  --host-data        give gpuqr host matrices (on CUDA they are staged through the\n"
      "                     device: time_ms includes the copies, transfer_ms is their part)\n"
      "  --graph MODE       CUDA graph replay of gpuqr's calls: off, on, both (time_ms with\n"
      "                     graphs off, graph_ms and g_speedup with them on, in one run) or\n"
      "                     default (the context's: on unless GPUQR_GRAPH=0). With graphs on\n"
      "                     the warmup is at least 2 (one call sizes the workspaces, the next\n"
      "                     captures), so timed calls are replays\n"
      "  -h, --help         this text\n";
}

}  // namespace gpuqr::bench
