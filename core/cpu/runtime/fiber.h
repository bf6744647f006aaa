// Fiber contexts for the CPU backend's block scheduler (cpu/runtime/host_blocks.h): a context per thread of a
// block, switched in user space.
#pragma once

// ---- Fiber contexts. glibc's swapcontext saves and restores the signal mask with a system call at every
// switch, which made a barrier cost about 0.3 us per thread; fibers never touch the signal mask, so on
// x86-64 and aarch64 (ELF) a switch only saves what the ABI says a callee keeps: a few registers, pushed
// on the stack being left, whose stack pointer is stored; ucontext stays for every other target.
// Not shadow-stack (CET) aware: glibc leaves shadow stacks off unless a tunable asks for them.
#if defined(__ELF__) && (defined(__x86_64__) || defined(__aarch64__)) && !defined(JIASU_HOST_UCONTEXT)
#define JIASU_HOST_FIBER_ASM 1
// jiasu_fiber_switch(&from, to): saves this stack's pointer in from, resumes the stack saved in to.
// jiasu_fiber_start: where a new fiber's first switch "returns" to; calls the fiber's function, which
// never returns (its return address is marked undefined so that debuggers' backtraces end there).
// Weak and hidden: one copy per kernel library, whatever number of sources include this.
extern "C" void jiasu_fiber_switch(void** from, void* to) __attribute__((visibility("hidden")));
extern "C" void jiasu_fiber_start() __attribute__((visibility("hidden")));
#if defined(__x86_64__)
// System V: rbx, rbp, r12-r15 and rsp are the callee's to keep, and so are the MXCSR and x87 control words.
// A frame is 64 bytes: control words, r15, r14, r13, r12, rbx, rbp, return address (lowest first).
__asm__(R"(
  .pushsection .text
  .weak jiasu_fiber_switch
  .hidden jiasu_fiber_switch
  .type jiasu_fiber_switch, @function
  .p2align 4
jiasu_fiber_switch:
  pushq %rbp
  pushq %rbx
  pushq %r12
  pushq %r13
  pushq %r14
  pushq %r15
  subq $8, %rsp
  stmxcsr (%rsp)
  fnstcw 4(%rsp)
  movq %rsp, (%rdi)
  movq %rsi, %rsp
  ldmxcsr (%rsp)
  fldcw 4(%rsp)
  addq $8, %rsp
  popq %r15
  popq %r14
  popq %r13
  popq %r12
  popq %rbx
  popq %rbp
  ret
  .size jiasu_fiber_switch, .-jiasu_fiber_switch

  .weak jiasu_fiber_start
  .hidden jiasu_fiber_start
  .type jiasu_fiber_start, @function
  .p2align 4
jiasu_fiber_start:
  .cfi_startproc
  .cfi_undefined rip
  callq *%r12
  ud2
  .cfi_endproc
  .size jiasu_fiber_start, .-jiasu_fiber_start
  .popsection
)");
#else
// AAPCS64: x19-x29, x30 (the return address), sp and d8-d15 are the callee's to keep.
// A frame is 160 bytes: x19 ... x30, then d8 ... d15 (lowest first).
__asm__(R"(
  .pushsection .text
  .weak jiasu_fiber_switch
  .hidden jiasu_fiber_switch
  .type jiasu_fiber_switch, %function
  .p2align 4
jiasu_fiber_switch:
  sub sp, sp, #160
  stp x19, x20, [sp, #0]
  stp x21, x22, [sp, #16]
  stp x23, x24, [sp, #32]
  stp x25, x26, [sp, #48]
  stp x27, x28, [sp, #64]
  stp x29, x30, [sp, #80]
  stp d8, d9, [sp, #96]
  stp d10, d11, [sp, #112]
  stp d12, d13, [sp, #128]
  stp d14, d15, [sp, #144]
  mov x9, sp
  str x9, [x0]
  mov sp, x1
  ldp x19, x20, [sp, #0]
  ldp x21, x22, [sp, #16]
  ldp x23, x24, [sp, #32]
  ldp x25, x26, [sp, #48]
  ldp x27, x28, [sp, #64]
  ldp x29, x30, [sp, #80]
  ldp d8, d9, [sp, #96]
  ldp d10, d11, [sp, #112]
  ldp d12, d13, [sp, #128]
  ldp d14, d15, [sp, #144]
  add sp, sp, #160
  ret
  .size jiasu_fiber_switch, .-jiasu_fiber_switch

  .weak jiasu_fiber_start
  .hidden jiasu_fiber_start
  .type jiasu_fiber_start, %function
  .p2align 4
jiasu_fiber_start:
  .cfi_startproc
  .cfi_undefined x30
  blr x19
  brk #0
  .cfi_endproc
  .size jiasu_fiber_start, .-jiasu_fiber_start
  .popsection
)");
#endif
#else
#include <ucontext.h>
#endif

namespace jiasu {
namespace detail {

#ifdef JIASU_HOST_FIBER_ASM
struct FiberContext { void* sp; };
inline void fiber_switch(FiberContext& from, FiberContext& to) { jiasu_fiber_switch(&from.sp, to.sp); }

// Makes contexts whose first switch runs entry() on a stack of their own.
class FiberStarter {
 public:
  FiberStarter() {
#if defined(__x86_64__)
    __asm__ volatile("stmxcsr %0\n\tfnstcw %1" : "=m"(mxcsr_), "=m"(x87_));  // fibers start with ours
#endif
  }
  // [low, low + size) is the stack, whose top is 16-byte aligned as both ABIs want at a call.
  void prepare(FiberContext& c, unsigned char* low, size_t size, void (*entry)()) const {
    void** top = reinterpret_cast<void**>(low + size);
#if defined(__x86_64__)
    void** frame = top - 8;  // popped by jiasu_fiber_switch, whose ret leaves rsp at top for the call
    __builtin_memcpy(frame, &mxcsr_, 4);
    __builtin_memcpy(reinterpret_cast<unsigned char*>(frame) + 4, &x87_, 2);
    frame[4] = reinterpret_cast<void*>(entry);  // r12
    frame[6] = nullptr;                         // rbp: the end of the frame chain
    frame[7] = reinterpret_cast<void*>(&jiasu_fiber_start);
#else
    void** frame = top - 20;
    frame[0] = reinterpret_cast<void*>(entry);  // x19
    frame[10] = nullptr;                        // x29: the end of the frame chain
    frame[11] = reinterpret_cast<void*>(&jiasu_fiber_start);  // x30
#endif
    c.sp = frame;
  }

 private:
  unsigned mxcsr_ = 0x1f80;
  unsigned short x87_ = 0x37f;
};
#else
struct FiberContext { ucontext_t context; };
inline void fiber_switch(FiberContext& from, FiberContext& to) { swapcontext(&from.context, &to.context); }

class FiberStarter {
 public:
  FiberStarter() { getcontext(&pattern_); }  // once: getcontext is a system call
  void prepare(FiberContext& c, unsigned char* low, size_t size, void (*entry)()) const {
    c.context = pattern_;
    c.context.uc_stack.ss_sp = low;
    c.context.uc_stack.ss_size = size;
    c.context.uc_link = nullptr;  // entry never returns
    makecontext(&c.context, entry, 0);
  }

 private:
  ucontext_t pattern_;
};
#endif
}  // namespace detail
}  // namespace jiasu
