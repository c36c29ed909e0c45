/* asm/jump_arm64_aapcs_elf_gas.S -- bthread_jump_fcontext for AArch64, AAPCS64, ELF.
 *
 * intptr_t bthread_jump_fcontext(bthread_fcontext_t *ofc,   x0
 *                                bthread_fcontext_t nfc,    x1
 *                                intptr_t vp,               x2
 *                                bool preserve_fpu);        w3 (only bits 0..7 defined)
 *
 * The frame a suspended context leaves on its own stack; the context is its address:
 *
 *   offset  0x00 .. 0x38   0x40 .. 0x88   0x90  0x98  0xa0  0xa8  0xac
 *         +--------------+--------------+-----+-----+-----+-----+-----+
 *         |   d8 .. d15  |  x19 .. x28  | x29 | x30 |  pc |FPCR |saved|
 *         +--------------+--------------+-----+-----+-----+-----+-----+
 *          <-------- callee-saved (AAPCS64) --------> resume  <- FP ctl ->
 *                                                      address    slot
 *
 * 0xb0 bytes, a multiple of 16, so sp stays aligned as AAPCS64 requires at all times.
 * AAPCS64 makes x19-x29, the link register's value at return, sp, and the low 64 bits
 * of v8-v15 (d8-d15) callee-saved; they are always saved. x18 (the platform register)
 * is neither saved nor touched. pc is the address to resume at: for a suspended jump it
 * is x30, where the jump returns to; for a fresh context it is fn while x30 holds finish
 * (see make_*.S), hence the separate slot.
 *
 * FPCR (rounding mode, flush-to-zero, default NaN, trap enables) is preserved across
 * calls by AAPCS64 as well. Writing it can stall the pipeline on some cores, so like
 * MXCSR/x87 CW on x86-64 it is switched only when preserve_fpu is true; FPSR (the
 * cumulative exception flags) is status, not control, and is not kept. As on x86-64 the
 * slot says whether it was filled: a jump always stores pc together with a zero slot
 * (one stp), a jump with preserve_fpu then stores FPCR (its defined bits are all below
 * bit 32) with saved = 1, and a restore happens only when preserve_fpu is true AND the
 * slot was saved. Resuming with true a context suspended with false keeps the current
 * FPCR instead of loading stale stack contents (which on AArch64 would not even trap:
 * it would silently change rounding).
 *
 * On the resumed side vp arrives in x0: the return value of that side's own jump, or
 * the argument of a fresh context's entry function.
 *
 * The resume is `ret x4`: an indirect branch hinted as a return, which keeps the return
 * predictor's stack balanced (one bl into the jump, one ret out). No BTI/PAC markers.
 */
.text
.globl bthread_jump_fcontext
.type bthread_jump_fcontext,%function
.align 4
bthread_jump_fcontext:
    sub   sp, sp, #0xb0              /* reserve the frame; sp is now the context */

    stp   d8,  d9,  [sp, #0x00]      /* save d8, d9 */
    stp   d10, d11, [sp, #0x10]      /* save d10, d11 */
    stp   d12, d13, [sp, #0x20]      /* save d12, d13 */
    stp   d14, d15, [sp, #0x30]      /* save d14, d15 */

    stp   x19, x20, [sp, #0x40]      /* save x19, x20 */
    stp   x21, x22, [sp, #0x50]      /* save x21, x22 */
    stp   x23, x24, [sp, #0x60]      /* save x23, x24 */
    stp   x25, x26, [sp, #0x70]      /* save x25, x26 */
    stp   x27, x28, [sp, #0x80]      /* save x27, x28 */
    stp   x29, x30, [sp, #0x90]      /* save the frame pointer and the link register */
    stp   x30, xzr, [sp, #0xa0]      /* resume address = x30; FP control slot not saved */

    tst   w3, #0xff                  /* preserve_fpu? */
    b.eq  1f                         /* no: leave the slot unsaved */
    mrs   x4, fpcr                   /* x4 = FPCR */
    mov   w5, #1                     /* w5 = saved */
    stp   w4, w5,   [sp, #0xa8]      /* save FPCR, marked saved */
1:
    mov   x4, sp                     /* x4 = this context (str cannot store sp) */
    str   x4,       [x0]             /* *ofc = this context */

    mov   sp, x1                     /* switch to the stack of nfc */

    tst   w3, #0xff                  /* preserve_fpu? */
    b.eq  2f                         /* no: skip the FPCR restore */
    ldp   w4, w5,   [sp, #0xa8]      /* w4 = nfc's FPCR, w5 = was it saved? */
    cbz   w5, 2f                     /* not saved: nothing to restore, keep the current */
    msr   fpcr, x4                   /* restore FPCR */
2:
    ldp   d8,  d9,  [sp, #0x00]      /* restore d8, d9 */
    ldp   d10, d11, [sp, #0x10]      /* restore d10, d11 */
    ldp   d12, d13, [sp, #0x20]      /* restore d12, d13 */
    ldp   d14, d15, [sp, #0x30]      /* restore d14, d15 */

    ldp   x19, x20, [sp, #0x40]      /* restore x19, x20 */
    ldp   x21, x22, [sp, #0x50]      /* restore x21, x22 */
    ldp   x23, x24, [sp, #0x60]      /* restore x23, x24 */
    ldp   x25, x26, [sp, #0x70]      /* restore x25, x26 */
    ldp   x27, x28, [sp, #0x80]      /* restore x27, x28 */
    ldp   x29, x30, [sp, #0x90]      /* restore the frame pointer and the link register */
    ldr   x4,       [sp, #0xa0]      /* x4 = the resume address */

    add   sp, sp, #0xb0              /* drop the frame */

    mov   x0, x2                     /* vp: the resumed jump's return value, or fn's argument */

    ret   x4                         /* resume nfc */
.size bthread_jump_fcontext,.-bthread_jump_fcontext

/* The stack of this object need not be executable. */
.section .note.GNU-stack,"",%progbits
