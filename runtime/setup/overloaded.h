// std::visit over a variant with one lambda per alternative.
#pragma once

namespace medusa {

template <class... F>
struct Overloaded : F... {
    using F::operator()...;
};
// Clang before 17 deduces no aggregate's template arguments by itself.
template <class... F>
Overloaded(F...) -> Overloaded<F...>;

}  // namespace medusa
