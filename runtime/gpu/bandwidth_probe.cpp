#include "gpu/bandwidth_probe.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <memory>
#include <thread>
#include <vector>

#include "gpu/buffer.h"
#include "gpu/command_sequence.h"

namespace medusa::gpu {

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

}  // namespace

// STREAM's copy kernel on every core: each thread copies its own slice, first touched by itself.
MeasuredBandwidth measure_host_copy(size_t bytes, int runs) {
    const unsigned threads = std::max(1u, std::thread::hardware_concurrency());
    const size_t n = bytes / sizeof(double);
    std::unique_ptr<double[]> a(new double[n]), b(new double[n]);
    auto for_each_slice = [&](auto&& body) {
        std::vector<std::thread> pool;
        for (unsigned t = 0; t < threads; ++t)
            pool.emplace_back([&, t] { body(n * t / threads, n * (t + 1) / threads); });
        for (auto& th : pool) th.join();
    };
    for_each_slice([&](size_t lo, size_t hi) {
        for (size_t i = lo; i < hi; ++i) a[i] = 1.0 + double(i & 7), b[i] = 0.0;
    });
    double best = 1e30;
    for (int r = 0; r < runs; ++r) {
        const auto t0 = Clock::now();
        for_each_slice([&](size_t lo, size_t hi) {
            double* __restrict dst = b.get();
            const double* __restrict src = a.get();
            for (size_t i = lo; i < hi; ++i) dst[i] = src[i];
        });
        best = std::min(best, seconds_since(t0));
    }
    // Read the copy back so the compiler cannot drop it.
    volatile double sink = b[n / 2];
    (void)sink;
    return {2.0 * double(n * sizeof(double)) / best / 1e9,
            "host memory copy (STREAM copy) on " + std::to_string(threads) + " threads", n * sizeof(double)};
}

MeasuredBandwidth measure_device_copy(Context& ctx, size_t bytes, int runs) {
    // Two buffers of an eighth of device memory at most, so the probe never pushes the model out.
    if (ctx.info().device_local_bytes > 0) bytes = std::min(bytes, size_t(ctx.info().device_local_bytes / 8));
    bytes &= ~size_t(255);
    Buffer src(ctx, bytes, MemoryKind::Device), dst(ctx, bytes, MemoryKind::Device);
    // A submit and its wait cost as much as a copy of hundreds of MB on a fast GPU (one copy timed
    // alone read 830 GB/s on a device that moves 4.3 TB/s), so one submit of kCopies copies is
    // timed against one of a single copy: the difference is the copies' own time.
    constexpr int kCopies = 9;
    auto best_of = [&](int copies) {
        CommandSequence seq(ctx);
        seq.begin();
        for (int c = 0; c < copies; ++c) seq.copy(src, 0, dst, 0, bytes);
        seq.end();
        seq.run();  // first use outside the timing
        double best = 1e30;
        for (int r = 0; r < runs; ++r) {
            const auto t0 = Clock::now();
            seq.run();
            best = std::min(best, seconds_since(t0));
        }
        return best;
    };
    const double one = best_of(1), many = best_of(kCopies);
    // Noise can make the difference vanish on a device whose copies cost nothing next to a submit:
    // then the many copies' whole time, an underestimate of the bandwidth.
    const bool differenced = many > one * 1.05;
    const double seconds = differenced ? many - one : many;
    const int copies = differenced ? kCopies - 1 : kCopies;
    return {2.0 * double(bytes) * copies / seconds / 1e9,
            "device-to-device buffer copy (" + std::to_string(kCopies) + " copies in one submit" +
                (differenced ? ", less one copy's submit" : "") + ")",
            bytes};
}

MeasuredBandwidth measure_bandwidth(Context& ctx, size_t bytes, int runs) {
    return ctx.info().kind == DeviceKind::Cpu ? measure_host_copy(bytes, runs) : measure_device_copy(ctx, bytes, runs);
}

}  // namespace medusa::gpu
