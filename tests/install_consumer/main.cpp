// Contracts C(a,c) = A(a,b) B(b,c) through the installed library API only (tnrt::context on the CPU
// engine, and on the GPU when one is usable), and checks the result against values computed by
// hand. Exit 0 when they match, 1 otherwise.
#include <cmath>
#include <cstdio>
#include <exception>
#include <vector>

#include "tnrt/context.hpp"
#include "tnrt/formats.hpp"
#include "tnrt/tensor.hpp"

int main() {
  try {
    tnrt::problem p;
    p.net = tnrt::parse_expression("ab,bc->ac", tnrt::parse_shapes("2x3,3x2"));
    p.tree = tnrt::tree_from_linear_path(p.net, {{0, 1}});
    p.type = tnrt::dtype::f64;
    p.source = "install consumer";

    // A = [[1 2 3] [4 5 6]], B = [[7 8] [9 10] [11 12]] (row-major).
    std::vector<tnrt::host_tensor> inputs;
    inputs.emplace_back(tnrt::dtype::f64, std::vector<std::int64_t>{2, 3});
    inputs.emplace_back(tnrt::dtype::f64, std::vector<std::int64_t>{3, 2});
    for (int i = 0; i < 6; ++i) {
      inputs[0].as<double>()[i] = 1 + i;
      inputs[1].as<double>()[i] = 7 + i;
    }
    tnrt::options opt;
    opt.device = tnrt::unavailable_reason(0).empty() ? 0 : tnrt::cpu_device;
    tnrt::context ctx(opt);
    const tnrt::host_tensor c = ctx.contract(p, inputs);
    std::printf("on %s\n", ctx.on_cpu() ? "the CPU" : ctx.device_name().c_str());

    // C = A B = [[1*7+2*9+3*11  1*8+2*10+3*12] [4*7+5*9+6*11  4*8+5*10+6*12]]
    const double want[4] = {58, 64, 139, 154};
    bool ok = c.type() == tnrt::dtype::f64 && c.shape() == std::vector<std::int64_t>{2, 2};
    std::printf("C(a,c) = A(a,b) B(b,c):");
    for (int i = 0; ok && i < 4; ++i) {
      std::printf(" %g", c.as<double>()[i]);
      ok = std::abs(c.as<double>()[i] - want[i]) <= 1e-12 * want[i];
    }
    std::printf("\n%s\n", ok ? "consumer: ok" : "consumer: WRONG (want 58 64 139 154)");
    return ok ? 0 : 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "consumer: %s\n", e.what());
    return 1;
  }
}
