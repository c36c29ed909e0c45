// boost_switch.cc -- build/ref/boost_switch: Boost.Context's fcontext round trip, the
// reference row for switch/roundtrip in harness/bench/bench_switch.c.
//
// Same shape as ours: a coroutine on a 64 KiB mmap'd stack that jumps straight back;
// one iteration = main -> coroutine -> main; batches of 64.  Boost's jump_fcontext saves
// MXCSR and the x87 control word on every switch (unless built for TSX), so it is
// compared with our preserve_fpu = true switch.  Same shim, same benchmark name, so
// both binaries emit Google Benchmark JSON that `make bench-switch` can put side by side.
#include <boost/context/detail/fcontext.hpp>
#include <boost/version.hpp>

#include <sys/mman.h>

#include "shim.h"

namespace ctx = boost::context::detail;

namespace {

constexpr size_t kStack = 64u << 10;
constexpr int kBatch = 64;

// The coroutine: every jump back hands us the caller's fresh context in t.fctx.
void entry(ctx::transfer_t t)
{
    for (;;)
        t = ctx::jump_fcontext(t.fctx, nullptr);
}

void bm_roundtrip(gb_state *st, void *)
{
    void *stack = mmap(nullptr, kStack, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (stack == MAP_FAILED) {
        gb_skip_with_error(st, "boost_switch: mmap of the coroutine stack failed");
        return;
    }
    ctx::fcontext_t co = ctx::make_fcontext(static_cast<char *>(stack) + kStack, kStack, entry);
    co = ctx::jump_fcontext(co, nullptr).fctx;  // first entry; it jumps straight back
    while (gb_keep_running_batch(st, kBatch))
        for (int i = 0; i < kBatch; i++)
            co = ctx::jump_fcontext(co, nullptr).fctx;
    munmap(stack, kStack);
}

}  // namespace

int main(int argc, char **argv)
{
    gb_register("switch/roundtrip", bm_roundtrip, nullptr);
    gb_add_context("variant", "boost_context");
    gb_add_context("boost_version", BOOST_LIB_VERSION);
#if defined(__clang__)
    gb_add_context("compiler", "clang " __clang_version__);
#else
    gb_add_context("compiler", "gcc " __VERSION__);
#endif
    return gb_main(&argc, argv);
}
