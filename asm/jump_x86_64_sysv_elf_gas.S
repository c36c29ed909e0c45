/* asm/jump_x86_64_sysv_elf_gas.S -- bthread_jump_fcontext for x86-64, System V ABI, ELF.
 *
 * intptr_t bthread_jump_fcontext(bthread_fcontext_t *ofc,   rdi
 *                                bthread_fcontext_t nfc,    rsi
 *                                intptr_t vp,               rdx
 *                                bool preserve_fpu);        cl (bits 8..63 of rcx undefined)
 *
 * The frame a suspended context leaves on its own stack; the context is its address:
 *
 *   offset  0x00   0x04   0x06   0x08   0x10   0x18   0x20   0x28   0x30   0x38
 *         +------+------+------+------+------+------+------+------+------+------+
 *         |MXCSR |x87 CW|saved |  r12 |  r13 |  r14 |  r15 |  rbx |  rbp |  rip |
 *         +------+------+------+------+------+------+------+------+------+------+
 *          4 B    2 B    2 B    <----------- callee-saved (SysV) ---------> resume
 *          <-- FP control slot -->                                          address
 *
 * rip is the return address the caller's `call` pushed; the six registers are pushed
 * below it, and the 8-byte FP control slot below them. The System V ABI makes MXCSR's
 * control bits and the x87 control word callee-saved too, but switching them costs a
 * stmxcsr/fnstcw pair to save and an ldmxcsr/fldcw pair to restore, so, as in brpc, they
 * are switched only when preserve_fpu is true. Everything else a caller may rely on
 * across a call (rsp, DF clear) holds by construction.
 *
 * Unlike brpc, the slot says whether it was filled: a jump without preserve_fpu stores
 * 0 over the whole slot (one store, the cost of the lea it replaces), a jump with it
 * sets `saved` to 1, and a restore happens only when preserve_fpu is true AND the slot
 * was saved. So mixing flags is safe: resuming with true a context that was suspended
 * with false keeps the thread's current control state, where brpc would load whatever
 * the stack held (a #GP if it held reserved MXCSR bits).
 *
 * On the resumed side vp arrives in rax (the return value of that side's own jump) and
 * in rdi (the argument of a fresh context's entry function, see make_*.S).
 *
 * The resume is `jmp *%r8`, not `ret`: the return address on the new stack belongs to a
 * different call than the one the return-stack predictor saw. No CET markers: the switch
 * is by nature incompatible with shadow stacks, and without a .note.gnu.property the
 * linker leaves a program that links it unmarked for CET.
 */
.text
.globl bthread_jump_fcontext
.type bthread_jump_fcontext,@function
.align 16
bthread_jump_fcontext:
    pushq  %rbp                 /* save rbp (the caller's call already pushed rip) */
    pushq  %rbx                 /* save rbx */
    pushq  %r15                 /* save r15 */
    pushq  %r14                 /* save r14 */
    pushq  %r13                 /* save r13 */
    pushq  %r12                 /* save r12 */
    pushq  $0                   /* FP control slot, not saved; rsp is now the context */

    testb  %cl, %cl             /* preserve_fpu? (only cl is defined for a bool) */
    je     1f                   /* no: leave the slot unsaved */
    stmxcsr (%rsp)              /* save MXCSR */
    fnstcw 0x4(%rsp)            /* save the x87 control word */
    movw   $1, 0x6(%rsp)        /* mark the slot saved */
1:
    movq   %rsp, (%rdi)         /* *ofc = this context */

    movq   %rsi, %rsp           /* switch to the stack of nfc */

    testb  %cl, %cl             /* preserve_fpu? */
    je     2f                   /* no: skip the FP control restore */
    cmpw   $0, 0x6(%rsp)        /* was nfc's slot saved? */
    je     2f                   /* no: nothing to restore, keep the current state */
    ldmxcsr (%rsp)              /* restore MXCSR */
    fldcw  0x4(%rsp)            /* restore the x87 control word */
2:
    leaq   0x8(%rsp), %rsp      /* drop the FP control slot */
    popq   %r12                 /* restore r12 */
    popq   %r13                 /* restore r13 */
    popq   %r14                 /* restore r14 */
    popq   %r15                 /* restore r15 */
    popq   %rbx                 /* restore rbx */
    popq   %rbp                 /* restore rbp */
    popq   %r8                  /* the resume address: after a jump, or fn if fresh */

    movq   %rdx, %rax           /* vp is the return value of the resumed jump ... */
    movq   %rdx, %rdi           /* ... and the first argument of a fresh entry function */

    jmp    *%r8                 /* resume nfc */
.size bthread_jump_fcontext,.-bthread_jump_fcontext

/* The stack of this object need not be executable. */
.section .note.GNU-stack,"",%progbits
