// std::visit over a variant with one lambda per alternative.
#pragma once

namespace medusa {

template <class... F>
struct Overloaded : F... {
    using F::operator()...;
};

}  // namespace medusa
