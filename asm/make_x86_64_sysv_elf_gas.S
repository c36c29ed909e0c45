/* asm/make_x86_64_sysv_elf_gas.S -- bthread_make_fcontext for x86-64, System V ABI, ELF.
 *
 * bthread_fcontext_t bthread_make_fcontext(void *sp,               rdi: high end of stack
 *                                          size_t size,            rsi: not read
 *                                          void (*fn)(intptr_t));  rdx
 *
 * Lays out, just below sp rounded down to 16 (call it top), the frame that
 * bthread_jump_fcontext pops (see jump_x86_64_sysv_elf_gas.S), plus one slot above it
 * that becomes fn's return address:
 *
 *   offset  0x00   0x04   0x06   0x08 .. 0x28   0x30   0x38   0x40     0x48
 *         +------+------+------+-------------+------+------+--------+
 *         |MXCSR |x87 CW|saved | r12 .. rbx  |  rbp |  fn  | finish |  = top
 *         +------+------+------+-------------+------+------+--------+
 *          the creator's   1    (left as is)    0
 *
 * The first jump to the context pops r12 .. rbp, pops fn and jumps to it with vp in rdi
 * and rsp = top - 8, pointing at the finish slot: exactly the state after a `call` from a
 * 16-byte-aligned stack, as the ABI requires at a function's entry. rbp = 0 ends frame
 * chains there. The FP control slot holds the creator's MXCSR and x87 control word,
 * marked saved, so a first jump with preserve_fpu = true starts fn with them.
 *
 * If fn returns, it returns to finish, which ends the process with _exit(0): there is
 * no context to go back to. _exit, not exit: no atexit handlers or stdio flushes run on
 * a task's stack.
 */
.text
.globl bthread_make_fcontext
.type bthread_make_fcontext,@function
.align 16
bthread_make_fcontext:
    movq   %rdi, %rax           /* rax = the high end of the stack */
    andq   $-16, %rax           /* round it down to 16 bytes: top */
    leaq   -0x48(%rax), %rax    /* rax = the context: the frame plus the finish slot */

    movq   %rdx, 0x38(%rax)     /* resume address = fn */
    movq   $0, 0x30(%rax)       /* rbp = 0: the outermost frame */
    stmxcsr (%rax)              /* MXCSR = the creator's */
    fnstcw 0x4(%rax)            /* x87 control word = the creator's */
    movw   $1, 0x6(%rax)        /* mark the FP control slot saved */
    leaq   bthread_fcontext_finish(%rip), %rcx  /* rcx = &finish (PC-relative) */
    movq   %rcx, 0x40(%rax)     /* fn's return address = finish */

    ret                         /* return the context in rax */
.size bthread_make_fcontext,.-bthread_make_fcontext

/* Where an entry function that returns lands; rsp = top, 16-byte aligned. Local. */
.type bthread_fcontext_finish,@function
bthread_fcontext_finish:
    xorl   %edi, %edi           /* status 0 */
    call   _exit@PLT            /* end the process; does not return */
    hlt                         /* unreachable: fault if it ever is reached */
.size bthread_fcontext_finish,.-bthread_fcontext_finish

/* The stack of this object need not be executable. */
.section .note.GNU-stack,"",%progbits
