/* asm/fcontext.h -- the context switch every scheduler variant stands on.
 *
 * Same functions and signatures as brpc's bthread/context.h. The bodies are hand-written
 * assembly, one file per function x architecture x ABI (see asm/README.md); asm/fcontext.S
 * picks the pair for the target and fails the build on any other target.
 *
 * A context is an opaque pointer: the stack pointer of a suspended execution, pointing at
 * the frame its last bthread_jump_fcontext saved (or the one bthread_make_fcontext laid
 * out). It stays valid until that execution is resumed once; each resume consumes it.
 */
#ifndef SCHEDBENCH_FCONTEXT_H
#define SCHEDBENCH_FCONTEXT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef void *bthread_fcontext_t;

/* Lay out a fresh context on a stack that grows down.
 * sp:   the HIGH end of the stack (one past its last usable byte); need not be aligned,
 *       it is rounded down to 16 bytes.
 * size: the stack's size in bytes; kept for brpc's signature, not read (the frame is a
 *       fixed size, well under any usable stack).
 * fn:   the entry function. The first bthread_jump_fcontext to the returned context calls
 *       fn(vp) on that stack, with the ABI's stack alignment. If fn returns, the process
 *       ends with _exit(0): the entry function must switch away instead of returning.
 * Touches only the frame just below sp; no other state, any thread. */
bthread_fcontext_t bthread_make_fcontext(void *sp, size_t size, void (*fn)(intptr_t));

/* Suspend the calling execution and resume nfc.
 * Saves the callee-saved registers on the current stack, stores the current stack
 * pointer in *ofc, switches to nfc's stack and restores its registers. The resumed side
 * sees vp: as the return value of its own bthread_jump_fcontext call, or as fn's
 * argument on the first entry to a bthread_make_fcontext context. Returns, when someone
 * jumps back to *ofc, the vp that jump passed.
 * preserve_fpu: also switch the floating-point control state (x86-64: MXCSR and the x87
 * control word; aarch64: FPCR), which the ABIs make callee-saved but which costs extra
 * to switch. When true, the current state is saved with the context, and nfc's is
 * restored if nfc was saved with it too (or is fresh: a bthread_make_fcontext context
 * holds its creator's state from make time); a context suspended with false is resumed
 * with the thread's current state. When false, the state is neither saved nor restored:
 * it belongs to the thread and flows across the switch (brpc's default).
 * The caller owns *ofc and nfc; nfc must not be resumed by two threads at once. */
intptr_t bthread_jump_fcontext(bthread_fcontext_t *ofc, bthread_fcontext_t nfc, intptr_t vp,
                               bool preserve_fpu);

#ifdef __cplusplus
}
#endif

#endif /* SCHEDBENCH_FCONTEXT_H */
