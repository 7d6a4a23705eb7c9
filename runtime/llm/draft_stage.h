// Work a drafter does with the target's own hidden states (the Medusa heads, later EAGLE's
// layer), made by a TreeRunner and run by it inside the verify pass: on the GPU, recorded into
// the same command buffer, so a step stays one queue submit. Opaque here: each runner knows the
// kind it made.
#pragma once
#include <atomic>
#include <cstdint>

namespace medusa {

class DraftStage {
public:
    DraftStage() : serial_(next_serial()) {}
    virtual ~DraftStage() = default;
    // Unique for the process's lifetime: runners key recorded command buffers by it, never by
    // an address a later stage may reuse.
    uint64_t serial() const { return serial_; }
    // The most tree nodes it drafts (the root included); a block may use a prefix of them.
    virtual int nodes() const = 0;

private:
    static uint64_t next_serial() {
        static std::atomic<uint64_t> n{0};
        return ++n;
    }
    uint64_t serial_;
};

}  // namespace medusa
