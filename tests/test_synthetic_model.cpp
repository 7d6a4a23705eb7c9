// Synthetic models (random weights of real shapes, for speed measurements): filled by several
// threads, they are still the same bytes for a seed, other bytes for another seed, and near the
// scale asked for.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>

#include "model/dequantize.h"
#include "model/synthetic_model.h"

using namespace medusa;

TEST_CASE("a synthetic model is the same for a seed whatever the threads, another for another seed", "[synthetic]") {
    for (DType type : {DType::F16, DType::Q8_0}) {
        CAPTURE(dtype_name(type));
        const ModelFile a = make_synthetic_model("stories15m", type, 1), b = make_synthetic_model("stories15m", type, 1);
        const ModelFile c = make_synthetic_model("stories15m", type, 2);
        REQUIRE(a.tensors.size() == b.tensors.size());
        size_t differing = 0;
        for (size_t i = 0; i < a.tensors.size(); ++i) {
            CAPTURE(a.tensors[i].name);
            REQUIRE(a.tensors[i].nbytes == b.tensors[i].nbytes);
            CHECK(std::memcmp(a.tensors[i].data, b.tensors[i].data, a.tensors[i].nbytes) == 0);
            differing += std::memcmp(a.tensors[i].data, c.tensors[i].data, a.tensors[i].nbytes) != 0;
        }
        CHECK(differing > a.tensors.size() / 2);  // the matrices (norms are ones in both)
        // Two layers' matrices of one shape are not copies of each other (each its own generator).
        const Tensor* w1 = a.find("layers.0.w1");
        const Tensor* w1b = a.find("layers.1.w1");
        REQUIRE((w1 && w1b));
        CHECK(std::memcmp(w1->data, w1b->data, w1->nbytes) != 0);
        // Values near 1.7/sqrt(cols): no element of a dequantized row far beyond it.
        const std::vector<float> v = dequantize(*w1);
        float biggest = 0;
        for (float x : v) biggest = std::max(biggest, std::fabs(x));
        CHECK(biggest > 0.5f * 1.7f / std::sqrt(288.0f));
        CHECK(biggest < 4.0f * 1.7f / std::sqrt(288.0f));
    }
}
