// Work a drafter does with the target's own hidden states (the Medusa heads), made by a
// TreeRunner and run by it inside the verify pass: on the GPU, recorded into the same command
// buffer, so a step stays one queue submit. The runner owns the stage where it runs it; the
// drafter holds this handle, which names the stage in a run and frees it when dropped.
#pragma once
#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <stdexcept>

namespace medusa {

class DraftStage {
public:
    DraftStage(uint64_t serial, int nodes, std::function<void()> release)
        : serial_(serial), nodes_(nodes), release_(std::move(release)) {}
    ~DraftStage() {
        if (release_) release_();
    }
    DraftStage(const DraftStage&) = delete;
    DraftStage& operator=(const DraftStage&) = delete;

    // Unique for the process's lifetime: runners key recorded command buffers by it, never by
    // an address a later stage may reuse.
    uint64_t serial() const { return serial_; }
    // The most tree nodes it drafts (the root included); a block may use a prefix of them.
    int nodes() const { return nodes_; }

    static uint64_t next_serial() {
        static std::atomic<uint64_t> n{0};
        return ++n;
    }

private:
    uint64_t serial_;
    int nodes_;
    std::function<void()> release_;
};

// The stages a runner made, of its own engine's kind, found by their handles. The runner must
// outlive the handles it gave out (drafters are made after their runner and go before it).
template <class Stage>
class DraftStages {
public:
    // `released` hears the serial when the handle goes (what the runner recorded with the stage
    // goes with it).
    std::unique_ptr<DraftStage> add(std::unique_ptr<Stage> stage, int nodes,
                                    std::function<void(uint64_t)> released = {}) {
        const uint64_t serial = DraftStage::next_serial();
        stages_[serial] = std::move(stage);
        return std::make_unique<DraftStage>(serial, nodes, [this, serial, released] {
            if (released) released(serial);
            stages_.erase(serial);
        });
    }
    // Throws for a handle another runner gave out.
    const Stage& at(const DraftStage& handle) const {
        const auto it = stages_.find(handle.serial());
        if (it == stages_.end()) throw std::invalid_argument("a drafting stage of another engine");
        return *it->second;
    }

private:
    std::map<uint64_t, std::unique_ptr<Stage>> stages_;
};

}  // namespace medusa
