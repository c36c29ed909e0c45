/* asm/fcontext.S -- the one translation unit the build assembles for the context switch.
 *
 * It picks, from the compiler's predefined macros, the jump/make pair written for the
 * target's architecture, ABI and object format (boost.context's file naming:
 * <function>_<arch>_<abi>_<format>_<assembler>.S), and refuses any other target rather
 * than build a switch that was never tested there. To add one, see asm/README.md.
 */
#if defined(__x86_64__) && !defined(__ILP32__) && defined(__ELF__)
/* x86-64, System V ABI (Linux, the BSDs), ELF, GNU as. Not x32, not Win64. */
#include "jump_x86_64_sysv_elf_gas.S"
#include "make_x86_64_sysv_elf_gas.S"
#elif defined(__aarch64__) && !defined(__ILP32__) && defined(__ELF__)
/* AArch64, AAPCS64 (LP64), ELF, GNU as. Not ILP32, not Mach-O (Apple's ABI differs). */
#include "jump_arm64_aapcs_elf_gas.S"
#include "make_arm64_aapcs_elf_gas.S"
#else
#error "asm/fcontext.S: no context switch for this target (supported: x86-64 SysV ELF, AArch64 AAPCS ELF); see asm/README.md"
#endif
