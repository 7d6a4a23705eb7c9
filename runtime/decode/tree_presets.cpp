// Tree presets shipped in the binary, so `--tree NAME` works wherever it runs.
// mc_sim_7b_63 is Medusa's published 63-node sparse tree for Vicuna-7B; models/trees/ holds
// the same lists as JSON files.
#include <map>
#include <string>

namespace medusa {

const std::map<std::string, std::string>& tree_presets() {
    static const std::map<std::string, std::string> presets = {
        {"mc_sim_7b_63", "[[0],[0,0],[1],[0,1],[2],[0,0,0],[1,0],[0,2],[3],[0,3],[4],[0,4],[2,0],[0,5],[0,0,1],[5],[0,6],[6],[0,7],[0,1,0],[1,1],[7],[0,8],[0,0,2],[3,0],[0,9],[8],[9],[1,0,0],[0,2,0],[1,2],[0,0,3],[4,0],[2,1],[0,0,4],[0,0,5],[0,0,0,0],[0,1,1],[0,0,6],[0,3,0],[5,0],[1,3],[0,0,7],[0,0,8],[0,0,9],[6,0],[0,4,0],[1,4],[7,0],[0,1,2],[2,0,0],[3,1],[2,2],[8,0],[0,5,0],[1,5],[1,0,1],[0,2,1],[9,0],[0,6,0],[0,0,0,1],[1,6],[0,7,0]]"},
    };
    return presets;
}

}  // namespace medusa
