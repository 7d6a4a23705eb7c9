// `medusa plot IN.json OUT.png|svg`: charts of a saved benchmark (`bench --json`) or of a tuned
// tree (tune-tree's tree.json), the same figures `bench --plot` and the app's metrics panel draw.
#include <cstdio>

#include "bench_charts.h"
#include "chart_file.h"
#include "commands.h"
#include "model/output_path.h"

namespace medusa::cli {

int run_plot(int argc, char** argv) {
    Args args(argc, argv, 2, flags_of("plot"));
    if (args.positional().size() != 2) throw UsageError("usage: medusa plot IN.json OUT.png|OUT.svg");
    const std::string in = args.positional()[0], out = args.positional()[1];
    check_output_path(out);
    write_plot(charts::charts_from_file(in), in, out);
    return 0;
}

void write_plot(const std::vector<charts::Chart>& charts, const std::string& what, const std::string& path) {
    charts::write_charts(charts, "medusa-vk: " + what, path);
    std::fprintf(stderr, "wrote %zu charts to %s\n", charts.size(), path.c_str());
}

}  // namespace medusa::cli
