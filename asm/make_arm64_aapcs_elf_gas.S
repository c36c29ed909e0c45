/* asm/make_arm64_aapcs_elf_gas.S -- bthread_make_fcontext for AArch64, AAPCS64, ELF.
 *
 * bthread_fcontext_t bthread_make_fcontext(void *sp,               x0: high end of stack
 *                                          size_t size,            x1: not read
 *                                          void (*fn)(intptr_t));  x2
 *
 * Lays out, just below sp rounded down to 16 (call it top), the frame that
 * bthread_jump_fcontext pops (see jump_arm64_aapcs_elf_gas.S):
 *
 *   offset  0x00 .. 0x38   0x40 .. 0x88   0x90  0x98     0xa0  0xa8  0xac  0xb0
 *         +--------------+--------------+-----+--------+-----+-----+-----+
 *         |   d8 .. d15  |  x19 .. x28  | x29 |  x30   |  pc |FPCR |saved|  = top
 *         +--------------+--------------+-----+--------+-----+-----+-----+
 *            (left as is)    (left as is)   0   finish    fn  creator's  1
 *
 * The first jump to the context loads these, sets sp = top (16-byte aligned, as
 * AAPCS64 requires at all times) and branches to fn with vp in x0 and the link register
 * holding finish: the state of a `bl fn` made from finish. x29 = 0 ends frame chains
 * there. The FP control slot holds the creator's FPCR, marked saved, so a first jump
 * with preserve_fpu = true starts fn with it.
 *
 * If fn returns, it returns to finish, which ends the process with _exit(0): there is
 * no context to go back to. _exit, not exit: no atexit handlers or stdio flushes run on
 * a task's stack.
 */
.text
.globl bthread_make_fcontext
.type bthread_make_fcontext,%function
.align 4
bthread_make_fcontext:
    and   x0, x0, #-16               /* round the high end down to 16 bytes: top */
    sub   x0, x0, #0xb0              /* x0 = the context: room for the frame */

    str   x2,       [x0, #0xa0]      /* resume address = fn */
    adr   x3, bthread_fcontext_finish  /* x3 = &finish (PC-relative) */
    stp   xzr, x3,  [x0, #0x90]      /* x29 = 0 (the outermost frame), x30 = finish */
    mrs   x3, fpcr                   /* x3 = the creator's FPCR */
    mov   w4, #1                     /* w4 = saved */
    stp   w3, w4,   [x0, #0xa8]      /* FPCR = the creator's, marked saved */

    ret                              /* return the context in x0 */
.size bthread_make_fcontext,.-bthread_make_fcontext

/* Where an entry function that returns lands; sp = top. Local. */
.type bthread_fcontext_finish,%function
bthread_fcontext_finish:
    mov   x0, #0                     /* status 0 */
    bl    _exit                      /* end the process; does not return */
    brk   #0                         /* unreachable: trap if it ever is reached */
.size bthread_fcontext_finish,.-bthread_fcontext_finish

/* The stack of this object need not be executable. */
.section .note.GNU-stack,"",%progbits
